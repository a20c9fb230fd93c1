"""Priming: one memory per section of a Markdown document, idempotently."""

from __future__ import annotations

import re

import msgspec

from ctx.engine.branches import target_branch
from ctx.engine.errors import InvalidInputError
from ctx.engine.ids import CommitId, new_memory_id
from ctx.engine.layout import (
    PINNED,
    PRIMED,
    check_source_name,
    slugify,
    source_path,
)
from ctx.engine.model import (
    Intent,
    Memory,
    Outcome,
    Source,
    check_body,
    check_title,
    encode,
)
from ctx.engine.snapshot import Snapshot
from ctx.engine.store import Store

__all__ = ["PrimeResult", "Section", "prime", "split_sections"]

_HEADING_RE = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE_RE = re.compile(r"^(```|~~~)")


class Section(msgspec.Struct, frozen=True, kw_only=True):
    """A heading and the text under it, up to the next heading."""

    title: str
    body: str
    slug: str


class PrimeResult(Outcome, frozen=True, kw_only=True):
    """What ``prime`` did: the folder the document went to and the commit.

    Attributes:
        source: The folder name under the area.
        area: ``primed`` or ``pinned``.
        commit: The commit, or None when every section was already there.
        changed: Whether a commit was made.
    """

    source: str
    area: str
    commit: CommitId | None
    changed: bool


def split_sections(text: str, default_title: str) -> list[Section]:
    """Splits Markdown into sections at ATX headings outside code fences.

    Text before the first heading becomes a section titled
    ``default_title``. Sections with no text are dropped; slugs are unique.
    """
    sections: list[tuple[str, list[str]]] = [(default_title, [])]
    fence: str | None = None
    for line in text.splitlines():
        fence_match = _FENCE_RE.match(line.lstrip())
        if fence_match:
            marker = fence_match.group(1)
            fence = None if fence == marker else (fence or marker)
        match = None if fence else _HEADING_RE.match(line)
        if match:
            sections.append((match.group(2).strip(), []))
        else:
            sections[-1][1].append(line)
    out: list[Section] = []
    seen: dict[str, int] = {}
    for title, lines in sections:
        body = "\n".join(lines).strip("\n")
        if not body.strip():
            continue
        slug = slugify(title)
        seen[slug] = seen.get(slug, 0) + 1
        if seen[slug] > 1:
            slug = f"{slug}-{seen[slug]}"
        out.append(Section(title=title, body=body, slug=slug))
    return out


def prime(
    store: Store,
    text: str,
    source: str,
    intent: Intent,
    *,
    file_name: str,
    pin: bool = False,
    branch: str | None = None,
) -> PrimeResult:
    """Writes a document's sections under ``primed/<source>/`` (or ``pinned/``).

    Re-priming the same source is idempotent: unchanged sections write
    nothing, changed ones become new versions of the same memory (same id),
    removed ones are deleted, all in one commit.
    """
    check_source_name(source)
    sections = split_sections(text, default_title=file_name)
    if not sections:
        raise InvalidInputError(f"{file_name} has no text to prime.")
    for section in sections:
        check_body(section.body)
        check_title(section.title)
    area, other = (PINNED, PRIMED) if pin else (PRIMED, PINNED)
    now = store.clock()

    def build(snap: Snapshot) -> dict[str, bytes | None]:
        existing: dict[str, Memory] = {}
        out: dict[str, bytes | None] = {}
        for folder in (other, area):  # this area's versions win
            for rec in snap.memories(f"{folder}/{source}"):
                existing[rec.path.rsplit("/", 1)[1][: -len(".json")]] = rec.memory
                out[rec.path] = None
        for section in sections:
            old = existing.get(section.slug)
            memory = Memory(
                version=1,
                id=old.id if old else new_memory_id(now),
                kind="source",
                title=section.title,
                body=section.body,
                created_at=old.created_at if old else now,
                tags=old.tags if old else (),
                source=Source(file=file_name, section=section.title),
                meta=old.meta if old else {},
            )
            out[source_path(area, source, section.slug)] = encode(memory)
        return out

    kind = "Pin" if pin else "Prime"
    commit = store.write(
        target_branch(store, branch), intent, f"{kind} {file_name} as {source}", build
    )
    return PrimeResult(
        source=source,
        area=area,
        commit=commit.id if commit else None,
        changed=commit is not None,
    )
