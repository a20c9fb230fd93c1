"""Carrying out the ``<ctx:*>`` commands of an agent's message.

Each command is one typed call of :mod:`ctx.hub.calls`, the calls the MCP
server and the HTTP API are built on, its request checked as theirs are
(:func:`~ctx.hub.calls.checked`) and made as the session's caller: the same
checks, the same intent trailers (the agent, and the session as
``Ctx-Session``). What a command finds (``recall``, ``status``, ``expand``)
becomes a :class:`~ctx.hub.session_state.Block` for the next prompt; what a
command did, or why it failed, becomes one report line. A command that fails
leaves the others to run.

``<ctx:task name="x" action="start"/>`` makes ``x`` the session's task:
memories the agent remembers then are tagged ``task:x``. ``action="end"``
closes it: the task's decisions are promoted to ``tier:reference``, its
other memories archived to ``tier:off-context`` (one commit each), and with
``summarize="true"`` one summary, DERIVED_FROM them all, is written from the
command's text (or their headlines).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import msgspec

from ctx.engine import (
    CtxError,
    MemoryRecord,
    StoreStatus,
    one_line,
    plural,
)
from ctx.hub import (
    Block,
    Caller,
    SecretFoundError,
    SessionState,
    Workspace,
    calls,
    format_prompt,
)
from ctx.hub.calls import CALLS, Command
from ctx.porcelain.hooks.blocks import memories_block, memory_lines, with_hits

__all__ = ["WRITES", "carry_out", "render_sources", "render_status"]

WRITES = frozenset(name for name, call in CALLS.items() if call.writes)
"""The commands that commit (each command is the call of its name)."""

_TRUE = frozenset({"true", "yes", "1", "on"})

Request = TypeVar("Request", bound=msgspec.Struct)
Answer = TypeVar("Answer")


@dataclass(frozen=True)
class _Turn:
    """What a command is carried out with, and where its results go."""

    ws: Workspace
    caller: Caller
    state: SessionState
    recall_budget: int
    read_at: list[tuple[str, str]]
    """Where the memories a command gave were read (branch, commit), for the
    record of what the session was shown."""

    def call(
        self, function: Callable[[Workspace, Caller, Request], Answer], request: Request
    ) -> Answer:
        """Makes one call, its request checked as an MCP tool's arguments are."""
        return function(self.ws, self.caller, calls.checked(request))

    def report(self, line: str) -> None:
        """Adds one line to what the agent is told next."""
        self.state.reports.append(f"ctx: {line}")


def carry_out(
    ws: Workspace,
    caller: Caller,
    commands: tuple[Command, ...],
    state: SessionState,
    *,
    recall_budget: int,
    read_at: list[tuple[str, str]] | None = None,
) -> None:
    """Carries out ``commands`` in order; their results wait in ``state``.

    Never raises for a command that fails: its error is reported instead,
    and the next command runs. A command refused for the secret it holds
    is reported by its name alone, never by its text (which holds it).
    ``read_at`` gains where a recall read what it gave (branch, commit).
    """
    turn = _Turn(ws, caller, state, recall_budget, [] if read_at is None else read_at)
    for done, command in enumerate(commands):
        try:
            _ACTIONS[command.name](turn, command)
        except SecretFoundError as exc:
            turn.report(
                f"<ctx:{command.name}> was not carried out: {exc.message} "
                "Write it again without the secret."
            )
        except CtxError as exc:
            hint = f" {exc.hint}" if exc.hint else ""
            turn.report(f"{command.source} was not carried out: {exc.message}{hint}")
        except Exception as exc:  # a bug must not cost the other commands
            turn.report(f"{command.source} failed: {type(exc).__name__}: {exc}")
        except BaseException as exc:  # the hook's deadline: the rest is not run
            left = commands[done:]
            names = ", ".join(f"<ctx:{c.name}>" for c in left)
            one = len(left) == 1
            turn.report(
                f"{plural(len(left), 'command')} of your last answer may not "
                f"have been carried out ({names}): the hook ran past its "
                f"deadline ({exc}). `ctx log` shows what was written; give "
                f"again what is missing. The {'one' if one else 'ones'} before "
                "were carried out."
            )
            raise


def _given(request: Request, **fields: str | None) -> Request:
    """Returns ``request`` with the fields an agent gave (an empty one: the default)."""
    return msgspec.structs.replace(
        request, **{name: value for name, value in fields.items() if value}
    )


def _split(value: str | None) -> tuple[str, ...]:
    return tuple(p.strip() for p in (value or "").split(",") if p.strip())


def _remember(turn: _Turn, command: Command) -> None:
    attrs = command.attrs
    kind = attrs.get("type") or attrs.get("kind") or "fact"
    title = attrs.get("title")
    tags = (*_split(attrs.get("tags")), *_task_tag(turn))
    # With a title, the memory of that kind and title is updated (upsert):
    # a second one would contradict it.
    asked = calls.RememberRequest(
        text=command.body, kind=kind, tags=tags, title=title or None, upsert=bool(title)
    )
    asked = _given(asked, context=attrs.get("context"))
    remembered = turn.call(calls.remember, asked)
    turn.state.written.append(remembered.id)
    if remembered.updated:
        turn.report(f"updated {kind} `{remembered.id}` (the same kind and title).")
        return
    again = " (already stored)" if remembered.existing else ""
    if remembered.tags_added:
        added = ", ".join(remembered.tags_added)
        again = f" (already stored; its tags now include {added})"
    turn.report(f"remembered {kind} `{remembered.id}`{again}.")


def _recall(turn: _Turn, command: Command) -> None:
    query = command.attrs["query"]
    try:
        budget = max(1, int(command.attrs.get("budget", turn.recall_budget)))
    except ValueError:
        budget = turn.recall_budget
    result = turn.call(calls.recall, calls.RecallRequest(query=query, budget=budget))
    hits = tuple(h for h in result.hits if not h.pinned)
    if not hits:
        turn.report(f"the recall for {query!r} found nothing.")
        return
    text = format_prompt(with_hits(result, hits))
    turn.state.blocks.append(Block(title=f"Recall: {query}", text=text))
    turn.state.note_shown([h.id for h in hits])
    turn.read_at.append((result.branch, result.commit))


def _summarize(turn: _Turn, command: Command) -> None:
    attrs = command.attrs
    asked = calls.SummarizeRequest(
        ids=_split(attrs["nodes"]),
        body=command.body,
        title=attrs.get("title") or None,
        tags=_split(attrs.get("tags")),
        archive=attrs.get("archive", "").lower() in _TRUE,
    )
    summary = turn.call(calls.summarize, _given(asked, context=attrs.get("context")))
    turn.state.written.append(summary.id)
    count = plural(len(summary.sources), "memory")
    turn.report(f"summarized {count} as `{summary.id}`.")


def _link(turn: _Turn, command: Command) -> None:
    source, target = command.attrs["from"], command.attrs["to"]
    # The call takes the engine's spelling (RELATES_TO); a tag may say relates-to.
    link_type = (command.attrs.get("type") or "RELATES_TO").upper().replace("-", "_")
    request = calls.LinkRequest(source=source, target=target, type=link_type)
    linked = turn.call(calls.link, request)
    done = "linked" if linked.changed else "already linked"
    turn.report(f"{done} `{source}` {link_type} `{target}`.")


def _supersede(turn: _Turn, command: Command) -> None:
    old, new = command.attrs["old"], command.attrs["new"]
    turn.call(calls.supersede, calls.SupersedeRequest(old=old, new=new))
    turn.report(f"`{new}` supersedes `{old}`.")


def _status(turn: _Turn, command: Command) -> None:
    status = turn.call(calls.status, calls.StatusRequest())
    turn.state.blocks.append(Block(title="Status", text=render_status(status)))


def _expand(turn: _Turn, command: Command) -> None:
    node = command.attrs["node"]
    records = turn.call(calls.expand, calls.ExpandRequest(id=node))
    text = render_sources(node, records)
    turn.state.blocks.append(Block(title=f"Sources of {node}", text=text))
    turn.state.note_shown([r.memory.id for r in records])


def _task_tag(turn: _Turn) -> tuple[str, ...]:
    return (f"task:{turn.state.task}",) if turn.state.task else ()


def _task(turn: _Turn, command: Command) -> None:
    attrs = command.attrs
    name = (attrs.get("name") or turn.state.task or "").strip()
    action = (attrs.get("action") or "start").lower()
    if not name or action not in ("start", "end"):
        turn.report(
            f"{command.source} was not carried out: a task needs a name and "
            'action="start" or action="end".'
        )
        return
    if any(ch.isspace() for ch in name) or not name.isprintable():
        turn.report(
            f"{command.source} was not carried out: a task's name is one word "
            "(its memories are tagged task:NAME)."
        )
        return
    if action == "start":
        turn.state.task = name
        turn.report(f"task {name!r} started: what you remember is tagged task:{name}.")
        return
    asked = calls.EndTaskRequest(
        name=name,
        summarize=attrs.get("summarize", "").lower() in _TRUE,
        body=command.body or None,
    )
    ended = turn.call(calls.end_task, asked)
    summary = ""
    if ended.summary is not None:
        turn.state.written.append(ended.summary)
        summary = f"; summary `{ended.summary}`"
    if turn.state.task == name:
        turn.state.task = None
    turn.report(
        f"task {name!r} ended: {plural(ended.promoted, 'decision')} promoted to "
        f"reference, {plural(ended.archived, 'memory')} archived{summary}."
    )


_ACTIONS: dict[str, Callable[[_Turn, Command], None]] = {
    "remember": _remember,
    "recall": _recall,
    "summarize": _summarize,
    "link": _link,
    "supersede": _supersede,
    "status": _status,
    "expand": _expand,
    "task": _task,
}


def render_status(status: StoreStatus) -> str:
    """Returns a branch's status as a few lines of markdown for a prompt."""
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(status.by_kind.items()))
    lines = [
        f"## ctx status: branch {status.branch}",
        "",
        f"- head `{status.head.id[:10]}`: {one_line(status.head.summary)}"
        if status.head
        else "- no commit yet: the store is made on first write",
        f"- {plural(status.memories, 'memory')}, "
        f"{plural(status.tokens, 'token')}; "
        f"{status.superseded} superseded; {plural(status.links, 'link')}",
    ]
    if kinds:
        lines.append(f"- by kind: {kinds}")
    if status.conflicts:
        lines.append(
            f"- {plural(len(status.conflicts), 'conflict')} to resolve "
            "(`ctx status` lists them)"
        )
    return "\n".join(lines)


def render_sources(node: str, records: list[MemoryRecord]) -> str:
    """Returns the memories a summary was derived from, as markdown.

    They are quoted data, as in a recall's block: the note first, then each
    memory's head and its quoted text (:func:`~.blocks.memory_lines`).
    """
    entries = [line for r in records for line in memory_lines(r.memory)]
    said = memories_block(entries) or "(none: it was derived from nothing)"
    return f"## Sources of `{one_line(node)}`\n\n{said}"
