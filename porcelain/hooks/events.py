"""The hook events: what each one reads, does, and gives the agent.

Each event is one handler that takes a :class:`Hook` (the workspace, the
host's input, the settings, who calls) and returns the context to give the
agent, or None. The handlers hold what ctx does at each moment of a session:

- ``session-start`` (``source``: startup, resume, clear, compact): in a
  store that follows the code, the memory of code branches merged into the
  current one merged first (:func:`ctx.hub.code_branches.sync_at_start`,
  one line in the context when it merged or left something); then the
  context composed within ``start_budget`` (:func:`ctx.engine.compose`:
  pinned, reference and working memories, most recently changed first, then
  the open questions), what waits from the last turn, and after ``compact``
  the memories the session had before it (what ``pre-compact`` saved).
- ``prompt-submit`` (``prompt``): what waits from the last turn, and a recall
  for the prompt (:func:`ctx.hub.recall`, through the running hub if one
  runs) within ``prompt_budget``: only memories not given yet this session,
  not pinned (``session-start`` gave those) and as close in meaning to the
  prompt as ``floor`` (the vector channel's cosine; see :func:`similarity`),
  and none when the recall's best hit is under its relevance floor (weak).
  A prompt with no word worth searching (``ok``, ``thanks, go on``) is not
  searched at all.
- ``stop`` and ``subagent-stop`` (``last_assistant_message``): the
  ``<ctx:*>`` commands of the message are carried out
  (:mod:`~ctx.porcelain.hooks.actions`); what they find waits for the next prompt.
  Nothing is given back: a stop hook cannot speak to the agent.
- ``subagent-start`` (``agent_id``, ``agent_type``): a briefing composed
  within ``subagent_budget``.
- ``pre-compact``: saves the ids of the memories the session was given and
  wrote, for ``session-start`` to give back after compaction.
- ``session-end``: removes the session's state, and that of sessions idle
  for a week; nothing slow (the host allows it 1.5 s).

What the store holds is given as quoted data, as a recall's block gives it
(a note once per block, every line of a memory's text quoted by
:func:`ctx.engine.quoted`), and defused
(:func:`~ctx.hub.calls.defuse`): a memory can neither close the
block it is given in nor hand the agent a command to repeat.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctx.hub import (
    Block,
    Caller,
    HooksSettings,
    Workspace,
    editing,
    editing_if_writable,
    prune_sessions,
    read_session,
    remove_session,
    session_path,
    unique_latest,
)
from ctx.porcelain.hooks.blocks import (
    CUT_NOTE,
    cut_to,
    memories_block,
    memory_lines,
    room_for,
    with_hits,
)

if TYPE_CHECKING:  # recall's results load only when a prompt is searched
    from ctx.hub import Hit, RecallResult

__all__ = [
    "EVENTS",
    "Event",
    "Hook",
    "HookInput",
    "find_event",
    "is_trivial",
    "similarity",
]


_HUB_WAIT_S = 3.0
"""The longest a prompt waits for a running hub's answer."""

IDLE_SESSION = 7 * 24 * 3600.0
"""Seconds after which ``session-end`` removes another session's state."""

_WORD_RE = re.compile(r"[^\W_]{3,}")
_SMALL_TALK_WORDS = """
    the and you yes yep yeah nope okay thanks thank please sure continue
    proceed good great nice cool done fine right that this then now again
    ahead lets all for with just got sounds perfect awesome alright agreed
    correct exactly keep going carry yup wait stop hmm hello
"""
_SMALL_TALK = frozenset(_SMALL_TALK_WORDS.split())
"""Words that make no question on their own: a prompt of only these (and
words under three letters) is not searched."""


_SOURCES = {"compress": "compact"}
"""Hosts' names for how a session started, as Claude Code names them: Gemini
CLI starts the session again after compressing its history with ``source``
``compress``, where Claude Code and Codex say ``compact``."""


@dataclass(frozen=True)
class HookInput:
    """What the host says about the moment (fields a host leaves out: None).

    Attributes:
        session_id: The host's session id.
        transcript_path: The session's transcript (JSON lines).
        cwd: The agent's working directory.
        hook_event_name: The host's name for the event.
        source: How a session started (startup, resume, clear, compact;
            Gemini CLI's ``compress`` reads as ``compact``, the same moment).
        prompt: The user's prompt.
        message: The agent's last message (``last_assistant_message``, or
            Gemini CLI's ``prompt_response``).
        agent_type: The subagent's type.
    """

    session_id: str = ""
    transcript_path: str | None = None
    cwd: str | None = None
    hook_event_name: str | None = None
    source: str | None = None
    prompt: str | None = None
    message: str | None = None
    agent_type: str | None = None

    @classmethod
    def of(cls, payload: Mapping[str, Any]) -> HookInput:
        """Returns the fields of ``payload`` that are text; others are None."""

        def text(*keys: str) -> str | None:
            for key in keys:
                value = payload.get(key)
                if isinstance(value, str):
                    return value
            return None

        return cls(
            session_id=text("session_id") or "",
            transcript_path=text("transcript_path"),
            cwd=text("cwd"),
            hook_event_name=text("hook_event_name"),
            source=_SOURCES.get(source, source)
            if (source := text("source", "trigger"))
            else None,
            prompt=text("prompt"),
            message=text("last_assistant_message", "prompt_response"),
            agent_type=text("agent_type"),
        )


@dataclass(frozen=True)
class Hook:
    """One hook call: the store, what the host said, and who calls.

    Attributes:
        ws: The workspace (its store may not exist).
        input: What the host said.
        settings: The store's ``[hooks]`` settings.
        host: The host's name, the agent of writes when neither ``--agent``
            nor ``CTX_AGENT`` names one.
    """

    ws: Workspace
    input: HookInput
    settings: HooksSettings
    host: str
    read_at: list[tuple[str, str]] = field(default_factory=list, compare=False)
    """The (branch, commit) a handler read the memories it gave at, when it
    knows (a recall's): the record of what was shown then needs no store."""
    given: Callable[[], None] = field(default=lambda: None, compare=False)
    """Called once the answer is sure to be given: from then on the deadline
    no longer applies (the runner's). A handler calls it right before it
    writes what the session was given (its state's ``shown``, the waiting
    results it takes): an answer thrown away past the deadline must not
    leave those written, or the next prompt would withhold what this one
    never delivered. Raises past the deadline, before anything is written."""

    @property
    def session(self) -> str:
        """Returns the session id (``default`` when the host gave none)."""
        return self.input.session_id or "default"

    @property
    def caller(self) -> Caller:
        """Returns who the hook's calls are made as, for every call it makes.

        The host (unless ``--agent`` or ``CTX_AGENT`` names the agent: the
        workspace's), its session, on the branch ``CTX_BRANCH`` names, else
        the store's default; what the block gives is recorded once, as the
        hook's (:func:`~ctx.hub.shown.shown_during`).
        """
        return Caller(
            agent=self.host,
            session=self.trailer_session,
            branch=self.ws.branch,
            records_shown=False,
        )

    @property
    def trailer_session(self) -> str | None:
        """Returns the session its writes carry as ``Ctx-Session``, if any.

        The host's id, or where it cannot be a trailer (``/``, spaces, too
        long) ``h-`` and the first 16 hex digits of its SHA-256.
        """
        from ctx.engine import InvalidInputError, check_session_id

        given = self.input.session_id
        if not given:
            return None
        try:
            return check_session_id(given)
        except InvalidInputError:
            return (
                "h-" + hashlib.sha256(given.encode("utf-8", "replace")).hexdigest()[:16]
            )


Handler = Callable[[Hook], "str | None"]


@dataclass(frozen=True)
class Event:
    """One event ``ctx hook`` answers.

    Attributes:
        name: Its name on the command line (``session-start``).
        host_name: Claude Code's name for it (``SessionStart``).
        handler: What it does; returns the context to give, or None.
    """

    name: str
    host_name: str
    handler: Handler


def is_trivial(prompt: str) -> bool:
    """Returns whether ``prompt`` has no word worth searching for."""
    return not any(w not in _SMALL_TALK for w in _WORD_RE.findall(prompt.lower()))


def _composed(hook: Hook, budget: int, where: str | None) -> tuple[str, list[str], int]:
    """Returns the composed context (or ""), the ids it holds and its tokens.

    Its memories are quoted data, as in a recall's block: a line before them
    says so, every line of their text is quoted and its controls are shown
    as escapes (:func:`ctx.engine.compose`); their ``<ctx:...>`` tags are
    defused on top.
    """
    from ctx.engine import InvalidInputError
    from ctx.hub import calls

    # As every door composes (the reviewed branch alone with [recall]
    # reviewed_only, else the agent's own branch once it has one, else the
    # hook's), with the caller's key.
    try:
        composition = calls.compose(
            hook.ws, hook.caller, calls.ComposeRequest(budget=budget, where=where)
        )
    except InvalidInputError:  # a budget too small for the header: nothing
        return "", [], 0
    if composition.branch is not None and composition.commit is not None:
        hook.read_at.append((composition.branch, composition.commit))
    if not composition.included:
        return "", [], 0
    ids = [str(m.id) for m in composition.included]
    return composition.text.strip(), ids, composition.tokens


def _given_back(
    hook: Hook, ids: list[str], budget: int, skip: set[str]
) -> tuple[str, list[str]]:
    """Returns the memories ``ids`` names, newest first, within ``budget``.

    Memories gone since (forgotten) and those in ``skip`` are left out.
    """
    from ctx.engine import (
        NotFoundError,
        estimate_tokens,
        last_commits,
        one_line,
        show,
    )
    from ctx.hub.calls import defuse

    entries: list[str] = []
    kept: list[str] = []
    used = estimate_tokens(memories_block([""]))  # the note, if any fits
    # Where the context was composed: the session's memories are there.
    rev = hook.read_at[-1][1] if hook.read_at else None
    with hook.ws.lock:
        store = hook.ws.store()
        wanted = [i for i in ids if i not in skip]
        lasts = last_commits(store, wanted, rev=rev) if wanted else {}
        for memory_id in reversed(ids):
            if memory_id in skip:
                continue
            try:
                record = show(store, memory_id, rev)
            except NotFoundError:
                continue
            last = lasts.get(memory_id)
            written = (
                f" (by {one_line(' '.join(last.author.split()))}, {last.id[:10]}, "
                f"{last.time:%Y-%m-%d})"
                if last is not None
                else ""
            )
            entry = "\n".join(memory_lines(record.memory, written))
            cost = estimate_tokens(entry + "\n")
            if used + cost <= budget:
                used += cost
                entries.append(entry)
                kept.append(memory_id)
    return defuse(memories_block(entries)), kept


def _waiting(blocks: list[Block], reports: list[str]) -> list[str]:
    """Returns what waited from the last turn, as parts of a context.

    The blocks (what the store gave) are defused; the reports are ctx's own
    lines about the agent's commands, quoted as it wrote them.
    """
    from ctx.hub.calls import defuse

    parts = [defuse(b.text) for b in blocks]
    if reports:
        parts.append("\n".join(reports))
    return parts


def session_start(hook: Hook) -> str | None:
    """Gives the composed context, and back what compaction dropped.

    The open questions take up to a fifth of the budget; after ``compact``
    the memories the session had (what ``pre-compact`` saved, newest first)
    take up to half of it, less what the composed context already holds.
    The state of sessions idle for a week goes, as at ``session-end``: Codex
    sends none, and a host that is killed sends none either.
    """
    if not hook.ws.on_disk:
        return None
    synced = _synced(hook)
    budget = hook.settings.start_budget
    with editing(hook.ws.path, hook.session) as state:
        source = hook.input.source or "startup"
        before: list[str] = []
        if source == "compact":
            before = (state.saved or [*state.written, *state.shown])[-100:]
            state.saved = []
        if source in ("clear", "compact"):
            state.shown = []  # the context that held them is gone
        questions, question_ids, question_tokens = _composed(
            hook, budget // 5, "kind:open-question"
        )
        room = budget - question_tokens - (budget // 2 if before else 0)
        main, main_ids, main_tokens = _composed(hook, room, "NOT kind:open-question")
        back, back_ids = _given_back(
            hook,
            before,
            budget - question_tokens - main_tokens,
            set(main_ids + question_ids),
        )
        hook.given()
        state.note_shown(main_ids + question_ids + back_ids)
        _warm_up(hook)
        parts = [
            main,
            f"## Open questions\n\n{questions}" if questions else "",
            f"## Before compaction, this session had\n\n{back}" if back else "",
            *_waiting(*state.take_waiting()),
            synced or "",
        ]
    prune_sessions(hook.ws.path, older_than=IDLE_SESSION, keep=hook.session)
    return "\n\n".join(p for p in parts if p) or None


def _synced(hook: Hook) -> str | None:
    """Merges the memory of code branches merged into the current one.

    Only in a store that follows the code; within a third of the hook's
    deadline, so that the context is still composed in time. Returns its
    one line for the context, if any
    (:func:`ctx.hub.code_branches.sync_at_start`).
    """
    from ctx.hub import sync_at_start

    ws = hook.ws
    return sync_at_start(
        ws,
        hook.settings.timeout / 3,
        agent=ws.agent or hook.host,
        session=hook.trailer_session,
    )


def _warm_up(hook: Hook) -> None:
    """Starts the store's hub in the background, for the session's prompts.

    The session's first prompt is then answered by a hub that had the
    time to load, if the store's config allows autostart.
    """
    from ctx.hub import start_hub_later

    start_hub_later(hook.ws)


def _own_branch(hook: Hook) -> dict[str, Any]:
    """Returns where the agent recalls with ``[agents] branch_per_agent``.

    With ``[recall] reviewed_only``: the reviewed branch alone, never its own.

    Its branch overlaid on HEAD's, once its first write made the branch;
    until then (or without the setting) nothing: HEAD's branch alone.
    """
    ws = hook.ws
    if ws.config().recall.reviewed_only:
        reviewed, _ = ws.reviewed_view(None)
        return {"branch": reviewed}  # reviewed memory only
    if ws.branch:
        return {}  # CTX_BRANCH names it, as for the hook's other calls
    own = ws.own_branch(ws.agent or hook.host)  # as its writes are signed
    if own is None:
        return {}
    with ws.lock:
        store = ws.store()
        if own not in store.branches():
            return {}
        return {"branch": own, "overlay": (store.head_branch(),)}


def prompt_submit(hook: Hook) -> str | None:
    """Gives what waits, and the memories that matter for the prompt."""
    ws = hook.ws
    prompt = hook.input.prompt or ""
    if not ws.on_disk:
        return None
    searched = not is_trivial(prompt)
    if not searched and not session_path(ws.path, hook.session).exists():
        return None  # nothing to search, nothing waiting: the fast path
    result = _recalled(hook, prompt) if searched else None
    parts: list[str] = []
    with editing_if_writable(ws.path, hook.session) as state:
        hook.given()
        parts.extend(_waiting(*state.take_waiting()))
        if result is not None:
            from ctx.hub import WARMING, format_prompt
            from ctx.hub.calls import defuse

            seen = set(state.shown)
            # The recall answers a question whose best hit is weak with its
            # weak hits (an explicit caller would rather have them than
            # nothing); the hook, which nobody asked, keeps the floor alone:
            # a weak hit costs tokens in every prompt (docs/recall.md). A
            # recall with no cosine keeps the relevance floor: a lexical
            # answer, one whose vector channel did not run (the embedder
            # failed, or does not read the prompt's script); so does a hit with
            # none while a backlog waits (a large import not embedded yet).
            lexical = WARMING in result.notices
            by_words = lexical or all(h.similarity is None for h in result.hits)
            # While memories wait to be embedded, a hit with no cosine may be
            # one of them; with none waiting, it is one the vector channel
            # did not find close, and the cosine floor holds.
            backlog = result.unembedded > 0
            hits = tuple(
                h
                for h in result.hits
                if not h.pinned
                and not result.weak
                and h.id not in seen
                and (
                    not h.weak
                    if by_words or (backlog and h.similarity is None)
                    else similarity(h) >= hook.settings.floor
                )
            )
            if lexical and (hits or len(result.notices) > 1):
                parts.append(_warming_line(result))
            if lexical and len(result.notices) > 1:
                from ctx.hub import log_line

                went_wrong = "; ".join(n for n in result.notices if n != WARMING)
                log_line(ws, "prompt-submit", hook.session, went_wrong)
            if hits:
                parts.append(defuse(format_prompt(with_hits(result, hits))))
                state.note_shown([h.id for h in hits])
                hook.read_at.append((result.branch, result.commit))
        text = "\n\n".join(parts)
        given = cut_to(text, room_for("prompt-submit"))
        if given != text:
            # The host takes no more: a memory cut off was not given.
            cut_off = text[len(given) - len(CUT_NOTE) :]
            state.shown = [i for i in state.shown if i in given or i not in cut_off]
    return given or None


def _recalled(hook: Hook, prompt: str) -> RecallResult:
    """Returns the recall for a prompt: the hub's, or a lexical one at once.

    A running hub is asked, for a share of the hook's deadline. With none
    (or one that does not answer in time) the hook never waits for a model
    or an index: it ranks the branch tip by the lexical channel in this
    process (:mod:`~ctx.hub.retrieval.lexical_recall`) and starts the hub for the next
    prompt. Only with ``CTX_NO_HUB`` (no hub ever) does it recall in full
    here, as ``ctx recall`` would.
    """
    import os

    import msgspec

    from ctx.hub import hub_recall, recall, start_hub_later

    ws = hook.ws
    branch = _own_branch(hook)
    budget = hook.settings.prompt_budget
    if os.environ.get("CTX_NO_HUB"):
        return recall(ws, prompt, budget=budget, **branch)
    wait = min(_HUB_WAIT_S, hook.settings.timeout / 3)
    result = hub_recall(ws, prompt, timeout=wait, budget=budget, **branch)
    if result is not None:
        return result
    from ctx.hub import lexical_recall

    with ws.lock:
        store = ws.store()
        answered = lexical_recall(
            store,
            prompt,
            branch=branch.get("branch") or ws.branch or store.head_branch(),
            budget=budget,
            floor=ws.config().recall.floor,
            now=ws.clock(),
        )
    start_hub_later(ws)
    if _hub_socket():  # a hub there, busy, hung, stopped or dead
        from ctx.hub import hub_silence

        why = hub_silence() or f"the hub did not answer within {wait:.2g} s"
        answered = msgspec.structs.replace(answered, notices=(*answered.notices, why))
    return answered


def _hub_socket() -> bool:
    """Returns whether the user's hub socket is there (a hub runs, or ran)."""
    from ctx.engine import CtxError
    from ctx.hub import socket_path

    try:
        return socket_path().exists()
    except CtxError:  # a hub folder that is not private: no hub is asked
        return False


def _warming_line(result: RecallResult) -> str:
    """Returns the line that says the answer is lexical, and what went wrong."""
    from ctx.hub import WARMING

    more = [n for n in result.notices if n != WARMING]
    return "ctx: " + "; ".join([WARMING, *more]) + "."


def similarity(hit: Hit) -> float:
    """Returns how close a hit's meaning is to the question (its cosine).

    The vector channel's score is the one on a fixed scale (-1 to 1); the
    fused score ranks, but says little of relevance: any hit ranked first by
    two channels scores high, even for an idle question whose words are
    "the" and "is" (``benchmarks/results/hook_floor.md``). A hit the vector
    channel did not find scores -1.
    """
    return -1.0 if hit.similarity is None else hit.similarity


def stop(hook: Hook) -> None:
    """Carries out the ``<ctx:*>`` commands of the agent's last message."""
    message = hook.input.message
    if message is None and hook.input.transcript_path:
        message = last_assistant_text(Path(hook.input.transcript_path))
    if message:
        _note_cited(hook, message)
    if not message or "<ctx:" not in message:
        return None
    from ctx.hub.calls import parse_commands

    parsed = parse_commands(message)
    if not parsed.commands and not parsed.errors:
        return None
    from ctx.porcelain.hooks.actions import WRITES, carry_out

    ws = hook.ws
    writes = any(c.name in WRITES for c in parsed.commands)
    with ws.lock:
        store = ws.store(write=writes)
        store.lock_timeout = hook.settings.lock_timeout
    if not ws.on_disk:
        return None  # only reads, of a store that does not exist yet
    digest = hashlib.sha256(message.encode("utf-8", "replace")).hexdigest()
    cut: BaseException | None = None
    with editing(ws.path, hook.session) as state:
        if state.last_message == digest:
            return None  # this message's commands were carried out already
        state.last_message = digest
        state.reports.extend(parsed.errors)
        try:
            carry_out(
                ws,
                hook.caller,
                parsed.commands,
                state,
                read_at=hook.read_at,
                recall_budget=hook.settings.prompt_budget,
            )
        except Exception:
            raise
        except BaseException as exc:  # the deadline: what was not done is said
            cut = exc
    if cut is not None:
        raise cut  # after the state, with its report, was kept
    return None


def _note_cited(hook: Hook, message: str) -> None:
    """Records the memories shown to the session that its answer cites by id.

    Evidence for the reference tier (:mod:`ctx.hub.dream.cited`); a record
    that cannot be written costs only that evidence.
    """
    if not hook.ws.on_disk:
        return
    state = read_session(hook.ws.path, hook.session)
    if state is None or not state.shown:
        return
    from ctx.engine import StoreError
    from ctx.hub import note_cited

    with contextlib.suppress(OSError, StoreError):
        note_cited(hook.ws.path, hook.session, state.shown, message)


def subagent_start(hook: Hook) -> str | None:
    """Gives a subagent a briefing: the composed context, smaller."""
    if not hook.ws.on_disk:
        return None
    text, _, _ = _composed(hook, hook.settings.subagent_budget, None)
    if not text:
        return None
    who = f"the {hook.input.agent_type} subagent" if hook.input.agent_type else "you"
    return f"A briefing for {who} from the project's memory (ctx):\n\n{text}"


def pre_compact(hook: Hook) -> None:
    """Saves what the session was given and wrote, to give back after it."""
    if not hook.ws.on_disk or not session_path(hook.ws.path, hook.session).exists():
        return None
    with editing(hook.ws.path, hook.session) as state:
        state.saved = unique_latest([*state.written, *state.shown])[-100:]
    return None


def session_end(hook: Hook) -> None:
    """Removes the session's state, and that of sessions idle for a week."""
    if hook.ws.on_disk:
        remove_session(hook.ws.path, hook.session)
        prune_sessions(hook.ws.path, older_than=IDLE_SESSION)
    return None


_TAIL_BYTES = 1 << 20


def last_assistant_text(transcript: Path) -> str | None:
    """Returns the text of the transcript's last assistant message, if any.

    For hosts that do not send ``last_assistant_message``: Claude Code's
    transcript is JSON lines, each an entry whose ``message`` holds a role
    and a content (a string or a list of parts, of which the ``text`` parts
    are read). Only the last megabyte is read.
    """
    import json

    try:
        with transcript.open("rb") as file:
            file.seek(0, 2)
            size = file.tell()
            file.seek(max(0, size - _TAIL_BYTES))
            lines = file.read().splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        message = entry.get("message") if isinstance(entry, dict) else None
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            texts = [
                p["text"]
                for p in content
                if isinstance(p, dict) and isinstance(p.get("text"), str)
            ]
            if texts:
                return "\n".join(texts)
    return None


EVENTS: dict[str, Event] = {
    e.name: e
    for e in (
        Event("session-start", "SessionStart", session_start),
        Event("prompt-submit", "UserPromptSubmit", prompt_submit),
        Event("stop", "Stop", stop),
        Event("subagent-start", "SubagentStart", subagent_start),
        Event("subagent-stop", "SubagentStop", stop),
        Event("pre-compact", "PreCompact", pre_compact),
        Event("session-end", "SessionEnd", session_end),
    )
}
"""The events, by their names on the command line."""

_GEMINI = {
    "BeforeAgent": "prompt-submit",
    "AfterAgent": "stop",
    "PreCompress": "pre-compact",
}
"""Gemini CLI's names for the same moments (its others are Claude Code's)."""

_ALIASES = {
    **{e.name.replace("-", ""): e.name for e in EVENTS.values()},
    **{e.host_name.lower(): e.name for e in EVENTS.values()},
    **{name.lower(): event for name, event in _GEMINI.items()},
}


def _key(name: str) -> str:
    return name.strip().lower().replace("-", "").replace("_", "")


def find_event(name: str) -> Event | None:
    """Returns the event ``name`` names (``session-start``, ``SessionStart``...)."""
    found = _ALIASES.get(_key(name))
    return None if found is None else EVENTS[found]


def host_event_name(name: str) -> str | None:
    """Returns the host's spelling of the event ``name`` names (None: unknown).

    Gemini CLI's own names (``beforeagent``: ``BeforeAgent``), else Claude
    Code's, which Codex and Gemini CLI share for the rest.
    """
    key = _key(name)
    gemini = next((n for n in _GEMINI if n.lower() == key), None)
    found = find_event(name)
    return gemini or (found.host_name if found else None)
