"""What the hooks give an agent of whole memories: each as lines of a block.

A command's answer (``<ctx:show>``, a summary's sources) and a recall cut to
the hits that pass the hook's floor are written here for the next prompt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctx.engine import Memory
    from ctx.hub import Hit, RecallResult

__all__ = [
    "CUT_NOTE",
    "MAX_CONTEXT",
    "cut_to",
    "memories_block",
    "memory_lines",
    "room_for",
    "with_hits",
]

MAX_CONTEXT = 10_000
"""Characters of context a host takes from a hook (Claude Code's cap)."""

CUT_NOTE = "\n(cut: ctx gave more than the host takes)"
"""What ends a context cut to the host's cap."""


def memory_lines(memory: Memory, written: str = "") -> list[str]:
    """Returns a memory as markdown lines for a prompt: kind, id, title, body.

    ``written`` names its last write after the id (``(by AGENT, COMMIT,
    DATE)``, its provenance). The body is quoted as a recall's block quotes
    it (:func:`ctx.engine.quoted`: every line ``  > ``, controls shown as
    escapes) and the title is put on one line, so nothing the memory says
    reads as the block's own words. A block of them opens with
    :func:`memories_block`'s note.
    """
    from ctx.engine import one_line, quoted

    title = f" {one_line(memory.title)}" if memory.title else ""
    kind = one_line(memory.kind)
    return [f"- **{kind}** `{memory.id}`{written}:{title}", *quoted(memory.body)]


def memories_block(entries: list[str]) -> str:
    """Returns entries of :func:`memory_lines` as one block, with its note.

    The block opens with :data:`ctx.engine.DATA_NOTE` (once), as a recall's
    does; no entries give "".
    """
    from ctx.engine import DATA_NOTE

    return "\n".join([DATA_NOTE, "", *entries]) if entries else ""


def with_hits(result: RecallResult, hits: tuple[Hit, ...]) -> RecallResult:
    """Returns ``result`` keeping only ``hits``, its tokens counted again.

    The hooks give no pinned memory with a prompt (the session's start gave
    them all): the pinned ones that did not fit are not named as left out.
    """
    import msgspec

    return msgspec.structs.replace(
        result,
        hits=hits,
        tokens=sum(h.tokens for h in hits),
        pinned_left_out=(),
        left_out=result.left_out - len(result.pinned_left_out),
    )


def cut_to(text: str, room: int) -> str:
    """Returns ``text`` within ``room`` characters: cut at a line, and said so."""
    if len(text) <= room:
        return text
    cut = text[: room - len(CUT_NOTE)]
    return cut[: cut.rfind("\n") + 1 or len(cut)].rstrip() + CUT_NOTE


def room_for(event: str) -> int:
    """Returns the characters a context of ``event`` may hold inside its tags."""
    from ctx.hub.calls import wrap_context

    return MAX_CONTEXT - len(wrap_context("", event))
