"""Text rendering of engine results for people (``--json`` is for programs)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from datetime import UTC
from typing import TYPE_CHECKING

from ctx.engine import KINDS, plural
from ctx.engine import headline as engine_headline
from ctx.porcelain.output import byte_size, echo

if TYPE_CHECKING:  # only for annotations: keep start-up light
    from ctx.engine import (
        ChangedMemory,
        CommitInfo,
        Conflict,
        Diff,
        LinkRecord,
        LogEntry,
        Memory,
        MemoryRecord,
        MergeResult,
        Operation,
        RedactResult,
        RefUpdate,
        ShownMemory,
        StoreStatus,
        TraceNode,
        UndoResult,
    )
    from ctx.hub import Shown

__all__ = [
    "NO_MATCH",
    "commit_line",
    "headline",
    "kind_column",
    "render_diff",
    "render_links",
    "render_log",
    "render_memory",
    "render_merge",
    "render_ops",
    "render_redaction",
    "render_shown",
    "render_status",
    "render_trace",
    "render_transfer",
    "undo_line",
]


NO_MATCH = "No memories match."
"""What a listing says on stderr when it lists nothing (``ls``, ``query``)."""

_KIND_WIDTH = max(len(kind) for kind in KINDS)  # "open-question"


def kind_column(kind: str | None) -> str:
    """Returns a kind padded to the longest kind, and two spaces after it."""
    return f"{kind or '?':<{_KIND_WIDTH}}  "


def headline(memory: Memory, width: int = 70) -> str:
    """Returns the title, or the body's first line, shortened to ``width``."""
    return engine_headline(memory.title, memory.body, width)


def _intent_word(commit: CommitInfo) -> str:
    intent = commit.intent
    what = intent.intent if intent else "-"
    if intent and intent.confidence is not None:
        what += f" ({intent.confidence:g})"
    return what


def commit_line(commit: CommitInfo, widths: tuple[int, int] = (0, 0)) -> str:
    """Returns one line describing a commit and its intent.

    ``widths`` pads the author and the intent, to align a column of lines.
    """
    when = commit.time.strftime("%Y-%m-%d %H:%M")
    author, what = widths
    return (
        f"{commit.id[:10]}  {when}  {commit.author:<{author}}  "
        f"{_intent_word(commit):<{what}}  {commit.summary}"
    )


def render_memory(record: MemoryRecord | ShownMemory) -> None:
    """Prints a memory: a header of fields, a blank line, the body.

    A memory in conflict ends with the clash and both sides' bodies.
    """
    m = record.memory
    echo(f"id:       {m.id}")
    echo(f"kind:     {m.kind}")
    if m.title:
        echo(f"title:    {m.title}")
    echo(f"path:     {record.path}")
    echo(f"when:     {m.created_at.isoformat()}")
    if m.tags:
        echo(f"tags:     {' '.join(m.tags)}")
    if m.source:
        echo(f"source:   {m.source.file} § {m.source.section}")
    for key, value in sorted(m.meta.items()):
        echo(f"meta:     {key}={value}")
    echo("")
    echo(m.body)
    conflict: Conflict | None = getattr(record, "conflict", None)
    if conflict is None:
        return
    fields = ", ".join(conflict.fields)
    echo("")
    echo(
        f"In conflict ({fields}) with {conflict.theirs_ref}; `ctx resolve` settles it."
    )
    for side, ref, version in (
        ("ours", conflict.ours_branch, conflict.ours),
        ("theirs", conflict.theirs_ref, conflict.theirs),
    ):
        # Ours as the merge saw it: an edit since is the memory above.
        since = side == "ours" and version is not None and version.body != m.body
        echo(f"  {side} ({ref}){', at the merge' if since else ''}:")
        body = version.body if version is not None else "(deleted)"
        echo(textwrap.indent(body, "    "))


def render_log(entries: Sequence[LogEntry], *, show_changes: bool) -> None:
    """Prints log entries, each with its reason and (optionally) changes.

    The author and intent columns are as wide as their longest entry.
    """
    widths = (
        max((len(e.commit.author) for e in entries), default=0),
        max((len(_intent_word(e.commit)) for e in entries), default=0),
    )
    for entry in entries:
        echo(commit_line(entry.commit, widths))
        intent = entry.commit.intent
        if intent and intent.reason:
            echo(f"            reason: {intent.reason}")
        if intent and intent.session:
            echo(f"            session: {intent.session}")
        if show_changes:
            for change in entry.changes[:20]:
                mark = {"added": "+", "removed": "-", "changed": "~"}[change.status]
                echo(f"            {mark} {change.path}")
            if len(entry.changes) > 20:
                more = plural(len(entry.changes) - 20, "more path")
                echo(f"            ... and {more}")


def render_links(links: Sequence[LinkRecord]) -> None:
    """Prints one line per link."""
    for rec in links:
        extra = (
            f"  ({rec.link.confidence:g})" if rec.link.confidence is not None else ""
        )
        reason = f"  {rec.link.reason}" if rec.link.reason else ""
        echo(f"{rec.source} {rec.type} {rec.target}{extra}{reason}")


def _field_changes(ch: ChangedMemory) -> list[tuple[str, str, str]]:
    """Returns (field, old, new) for the kind, title and tags that changed."""
    old, new = ch.old, ch.new
    sides = {
        "kind": (old.kind, new.kind),
        "title": (old.title or "", new.title or ""),
        "tags": (", ".join(old.tags), ", ".join(new.tags)),
    }
    return [
        (name, before or "(none)", after or "(none)")
        for name, (before, after) in sides.items()
        if name in ch.fields
    ]


def render_diff(result: Diff) -> None:
    """Prints memory-level changes, then link changes.

    The body's change is a unified diff; kind, title and tags are shown
    as ``old -> new``.
    """
    if result.from_merge_base:
        echo(f"Since the merge base {result.base[:10]}:")
    for m in result.added:
        echo(f"+ {m.id}  {m.kind}  {headline(m)}", fg="green")
    for m in result.removed:
        echo(f"- {m.id}  {m.kind}  {headline(m)}", fg="red")
    for ch in result.changed:
        fields = ", ".join(ch.fields)
        echo(
            f"~ {ch.new.id}  {ch.new.kind}  {headline(ch.new)}  [{fields}]", fg="yellow"
        )
        for name, old, new in _field_changes(ch):
            echo(f"    {name}: {old} -> {new}")
        if ch.old_path != ch.new_path:
            echo(f"    moved {ch.old_path} -> {ch.new_path}")
        for line in ch.body_diff.splitlines()[2:]:
            echo(f"    {line}")
    for rec in result.links_added:
        echo(f"+ link {rec.source} {rec.type} {rec.target}", fg="green")
    for rec in result.links_removed:
        echo(f"- link {rec.source} {rec.type} {rec.target}", fg="red")
    total = len(result.added) + len(result.removed) + len(result.changed)
    links = len(result.links_added) + len(result.links_removed)
    echo(
        f"{len(result.added)} added, {len(result.changed)} changed, "
        f"{len(result.removed)} removed ({plural(total, 'memory')}); "
        f"{plural(links, 'link change')}"
    )


def render_conflicts(conflicts: Sequence[Conflict]) -> None:
    """Prints one line per unresolved conflict."""
    for c in conflicts:
        fields = ", ".join(c.fields)
        echo(f"  {c.id}  {fields}  (ours: {c.ours_branch}, theirs: {c.theirs_ref})")


def render_shown(entries: Sequence[Shown], *, sessions: bool = False) -> None:
    """Prints one line per injection: when, how, where, who and what.

    With ``sessions``, each line names the session (``ctx blame --shown``);
    else the memories shown (``ctx session show``).
    """
    for e in entries:
        when = e.when.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
        at = f"{e.branch}@{e.commit[:10]}" if e.branch and e.commit else "-"
        what = (e.session or "-") if sessions else ", ".join(e.memories)
        echo(f"  {when}  {e.via:<7}  {at}  {e.agent or '-'}  {what}")


def render_redaction(result: RedactResult, *, applied: bool = False) -> None:
    """Prints what a redaction rewrote, and the remotes that still hold it."""
    why = f" ({result.reason})" if result.reason else ""
    verb = "Applied redaction" if applied else "Redacted"
    if applied:
        echo(f"{verb} {result.redaction}: {result.what}{why}.")
    else:
        echo(f"{verb} {result.what}{why}: redaction {result.redaction}.")
    rewritten = (
        f"  {plural(result.commits, 'commit')} and "
        f"{plural(result.blobs, 'version')} rewritten"
    )
    if applied and not result.branches and not result.pruned:
        # One of several a pull applied at once: the last says what moved.
        echo(f"{rewritten}.")
    else:
        where = ", ".join(result.branches) or "no branch"
        echo(
            f"{rewritten} (branches: {where}); "
            f"{plural(result.pruned, 'object')} deleted."
        )
    for remote, branches in result.remotes.items():
        echo(
            f"  {remote} still holds the old history of {', '.join(branches)}: "
            f"`ctx push {remote} --force-with-lease {' '.join(branches)}` "
            "replaces it."
        )


def render_merge(result: MergeResult) -> None:
    """Prints what a merge did."""
    if result.up_to_date:
        echo(f"Already up to date: {result.target} has everything in {result.source}.")
        return
    assert result.commit is not None
    if result.fast_forward:
        echo(f"Fast-forwarded {result.target} to {result.commit.id[:10]}.")
        return
    echo(f"Merged {result.source} into {result.target}: {result.commit.id[:10]}")
    if result.merged:
        merged = plural(len(result.merged), "memory")
        echo(f"  {merged} changed on both sides, combined")
    if result.settled:
        echo(f"  {plural(len(result.settled), 'clash')} settled by preference")
    if result.conflicts:
        kept = plural(len(result.conflicts), "conflict")
        echo(f"  {kept} kept (both versions stored):")
        render_conflicts(result.conflicts)
        echo("  Settle them with `ctx resolve ID --take ours|theirs|both`.")


NOT_MADE = "the user store is made on first write"
"""What status and log say where the user store is not made yet."""


def render_status(st: StoreStatus) -> None:
    """Prints a branch's summary.

    Memories are counted as ``ls`` lists them (the superseded ones are
    named apart), tokens as a recall counts them.
    """
    echo(f"store:     {st.path or f'none yet ({NOT_MADE})'}")
    echo(f"branch:    {st.branch}")
    echo(f"head:      {commit_line(st.head) if st.head else 'none'}")
    hidden = f"; {st.superseded:,} superseded, left out" if st.superseded else ""
    echo(
        f"memories:  {st.memories:,} ({plural(st.tokens, 'token')} in a recall"
        f"{hidden})    links: {st.links:,}    size: {byte_size(st.size_bytes)}"
    )
    if st.by_kind:
        echo("by kind:   " + ", ".join(f"{k} {n}" for k, n in st.by_kind.items()))
    if st.by_area:
        echo("by place:  " + ", ".join(f"{k} {n}" for k, n in st.by_area.items()))
    if st.by_tier:
        tiers = ", ".join(
            f"{k} {v.memories:,} ({plural(v.tokens, 'token')})"
            for k, v in st.by_tier.items()
        )
        echo(f"by tier:   {tiers}")
    if st.links_by_type:
        echo("links:     " + ", ".join(f"{k} {n}" for k, n in st.links_by_type.items()))
    if st.top_tags:
        echo("top tags:  " + ", ".join(f"{t.tag} {t.count}" for t in st.top_tags))
    if st.conflicts:
        echo(f"conflicts: {len(st.conflicts)}")
        render_conflicts(st.conflicts)
    else:
        echo("conflicts: none")


def render_transfer(updates: Sequence[RefUpdate], prefix: str = "") -> None:
    """Prints the branches a push or fetch moved, one a line."""
    width = max((len(prefix + u.branch) for u in updates), default=0)
    for u in updates:
        old = u.old[:10] if u.old else "(new)"
        new = u.new[:10] if u.new else "(removed)"
        forced = "  (forced)" if u.forced else ""
        echo(f"  {prefix + u.branch:<{width}}  {old} -> {new}{forced}")


def render_trace(root: TraceNode) -> None:
    """Prints a provenance tree with box-drawing branches."""
    echo(f"{root.id}  {root.kind}  {root.headline}")

    def walk(node: TraceNode, prefix: str) -> None:
        for n, child in enumerate(node.children):
            last = n == len(node.children) - 1
            mark = (
                " (cycle)" if child.cycle else " (see above)" if child.repeated else ""
            )
            kind = child.kind or "?"
            echo(
                f"{prefix}{'└─' if last else '├─'} {child.via} {child.id}  {kind}  "
                f"{child.headline}{mark}"
            )
            walk(child, prefix + ("   " if last else "│  "))

    walk(root, "")


def render_ops(ops: Sequence[Operation]) -> None:
    """Prints one line per operation: id, time, old -> new, message, agent."""
    width = max((len(op.id) for op in ops), default=0)
    for op in ops:
        when = op.time.strftime("%Y-%m-%d %H:%M:%S")
        old = op.old[:10] if op.old else "-" * 10
        new = op.new[:10] if op.new else "-" * 10
        echo(
            f"{op.id:<{width}}  {when}  {old} -> {new}  {op.message}  {op.agent or '-'}"
        )


def undo_line(result: UndoResult) -> str:
    """Returns the sentence that says what an undo did."""
    moved = f"Moved {result.branch} from {result.old[:10]}"
    if result.redo:
        return f"{moved} forward to {result.new[:10]} (redid: {result.undone})."
    if result.steps == 1:
        return f"{moved} back to {result.new[:10]} (undid: {result.undone})."
    to = f", to {result.to}" if result.to else ""
    steps = plural(result.steps, "operation")
    return f"{moved} back to {result.new[:10]} (undid {steps}{to})."
