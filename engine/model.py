"""The stored shapes: memories, links, conflicts and commit intent.

Every value that reaches disk is a versioned, frozen msgspec Struct. Memory
blobs are JSON with a fixed key order and two-space indentation, so equal
content gives an equal blob id and ``git diff`` stays readable.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable
from datetime import UTC, datetime

import msgspec

from ctx.engine.errors import CorruptStoreError, InvalidInputError
from ctx.engine.ids import CommitId, MemoryId

__all__ = [
    "EARLIEST_TIME",
    "KINDS",
    "LATEST_TIME",
    "LINK_TYPES",
    "MAX_BODY_BYTES",
    "MAX_TAGS",
    "MAX_TITLE_CHARS",
    "PREFERENCES",
    "Conflict",
    "Intent",
    "Link",
    "Memory",
    "Outcome",
    "Source",
    "check_body",
    "check_kind",
    "check_link_type",
    "check_tag",
    "check_time",
    "check_title",
    "decode_conflict",
    "decode_link",
    "decode_memory",
    "encode",
    "encode_struct",
    "headline",
    "is_agent_name",
]

KINDS = (
    "fact",
    "decision",
    "pattern",
    "observation",
    "hypothesis",
    "task",
    "summary",
    "source",
    "open-question",
    "session",
)
LINK_TYPES = (
    "DERIVED_FROM",
    "DEPENDS_ON",
    "SUPERSEDES",
    "RELATES_TO",
    "CHILD_OF",
    "CONTRADICTS",
)
PREFERENCES = ("ours", "theirs", "newer", "confident")
"""How ``merge --prefer`` may settle clashes."""
MAX_BODY_BYTES = 100_000
"""The largest body a memory may hold, in UTF-8 bytes."""
MAX_TITLE_CHARS = 300
MAX_TAGS = 64
_MAX_TAG_CHARS = 128
_MAX_REASON_CHARS = 2000
EARLIEST_TIME = datetime(1000, 1, 1, tzinfo=UTC)
"""The earliest time a memory or link may carry (in UTC)."""
LATEST_TIME = datetime(9000, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
"""The latest time a memory or link may carry (in UTC). Far from both ends of
what Python's datetime holds (years 1 to 9999), so that moving a stored time
by any offset, to UTC, or by the decades a query may name never overflows."""
_TIME_RANGE = "1000-01-01 to 9000-12-31 (UTC)"

_TAG_FORM_HINT = "For example project:ctx or tier:working (no spaces)."
_NAMESPACE_MARKS = frozenset("_.-")
AGENT_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.@+-]{0,63}$"
"""What an agent's name (and a session id) may be: letters, digits and
``_.@+-``, at most 64 characters. The calls' schemas carry it."""
INTENT_PATTERN = r"^[a-z][a-z-]{0,31}$"
"""What an intent may be: a lower-case word (observe, decide, refine...).

Both patterns are matched whole (``fullmatch``): Python's ``$`` also
matches before a last newline, which would end a commit's trailer early."""
_NAME_RE = re.compile(AGENT_PATTERN)
_INTENT_RE = re.compile(INTENT_PATTERN)


class Source(msgspec.Struct, frozen=True, kw_only=True):
    """Where a primed memory came from: a document and one of its sections."""

    file: str
    section: str


class Memory(msgspec.Struct, frozen=True, kw_only=True):
    """One memory: the content of one blob at one path.

    Attributes:
        version: Format version of the stored object (1).
        id: Stable identity that survives edits.
        kind: One of :data:`KINDS`.
        title: Optional one-line title.
        body: The text.
        tags: Sorted, unique ``namespace:value`` strings.
        created_at: When the remembered thing happened (not the commit time).
        source: For primed memories, the document section they came from.
        meta: Free string metadata.
    """

    version: int
    id: MemoryId
    kind: str
    title: str | None = None
    body: str
    tags: tuple[str, ...] = ()
    created_at: datetime
    source: Source | None = None
    meta: dict[str, str] = {}


class Link(msgspec.Struct, frozen=True, kw_only=True):
    """The content of one link file: who proposed it, why, how sure."""

    version: int
    agent: str
    created_at: datetime
    confidence: float | None = None
    reason: str | None = None


class Conflict(msgspec.Struct, frozen=True, kw_only=True):
    """A clash a merge could not settle, stored as data until resolved.

    The memory's own path keeps ``ours``; both versions stay here.
    ``None`` for a side means that side deleted the memory.
    """

    version: int
    id: MemoryId
    path: str
    fields: tuple[str, ...]
    ours_branch: str
    theirs_ref: str
    theirs_commit: CommitId
    base: Memory | None = None
    ours: Memory | None = None
    theirs: Memory | None = None


class Outcome(msgspec.Struct, frozen=True, kw_only=True):
    """A result that names the store it came from: a write's, a recall's, a read's.

    Lists (``ls``, ``log``) are not Outcomes: their items would each repeat it.

    Attributes:
        store: The store's folder. The engine leaves it None (its caller
            holds the store); the command line fills it in for ``--json``,
            so that a script sees when a command fell back to the user store.
    """

    store: str | None = None


class Intent(msgspec.Struct, frozen=True, kw_only=True):
    """Why a commit was made, carried as ``Ctx-*`` git trailers.

    Attributes:
        agent: Who wrote (also the commit's author).
        intent: What kind of write: observe, decide, refine, import, ...
        confidence: How sure the agent is, from 0 to 1.
        reason: Why, in one line.
        session: The working session the write belongs to.
    """

    agent: str
    intent: str
    confidence: float | None = None
    reason: str | None = None
    session: str | None = None

    def __post_init__(self) -> None:
        if not is_agent_name(self.agent):
            raise InvalidInputError(
                f"Agent name {self.agent!r} is not allowed.",
                hint="Use letters, digits and _.@+- (at most 64 characters).",
            )
        if not _INTENT_RE.fullmatch(self.intent):
            raise InvalidInputError(
                f"Intent {self.intent!r} is not allowed.",
                hint="Use a lower-case word such as observe, decide or refine.",
            )
        if self.confidence is not None and not (
            math.isfinite(self.confidence) and 0.0 <= self.confidence <= 1.0
        ):
            raise InvalidInputError(
                f"Confidence {self.confidence} is outside 0..1.",
            )
        if self.reason is not None:
            _check_text("Reason", self.reason, single_line=True)
            if not self.reason.strip() or len(self.reason) > _MAX_REASON_CHARS:
                raise InvalidInputError(
                    f"A reason must hold 1 to {_MAX_REASON_CHARS} characters."
                )
        if self.session is not None and not _NAME_RE.fullmatch(self.session):
            raise InvalidInputError(f"Session id {self.session!r} is not allowed.")


def _check_text(what: str, text: str, *, single_line: bool) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInputError(f"{what} is not valid UTF-8.") from None
    if "\x00" in text:
        raise InvalidInputError(f"{what} contains a NUL byte.")
    if single_line and any(c in text for c in "\r\n"):
        raise InvalidInputError(f"{what} must be a single line.")


def check_time(when: datetime, what: str = "The time") -> datetime:
    """Returns ``when`` if it lies from :data:`EARLIEST_TIME` to :data:`LATEST_TIME`.

    A time without an offset is read as UTC here; callers that need an
    offset check for it first.

    Raises:
        InvalidInputError: it lies outside that range.
    """
    aware = when if when.utcoffset() is not None else when.replace(tzinfo=UTC)
    # Comparing aware times never converts them, so no value can overflow here.
    if not EARLIEST_TIME <= aware <= LATEST_TIME:
        raise InvalidInputError(
            f"{what} {when.isoformat()} is outside the accepted range, {_TIME_RANGE}."
        )
    return when


def headline(title: str | None, body: str, limit: int = 80) -> str:
    """Returns the title, or the body's first line, cut to ``limit`` characters."""
    text = title or body.strip().split("\n", 1)[0]
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_body(body: str) -> str:
    """Returns ``body`` if it is a storable memory body, else raises.

    Raises:
        InvalidInputError: empty, over :data:`MAX_BODY_BYTES`, not UTF-8 or
            holding a NUL byte.
    """
    _check_text("The text", body, single_line=False)
    if not body.strip():
        raise InvalidInputError(
            "The text is empty.", hint="Give the memory some text, or - for stdin."
        )
    size = len(body.encode("utf-8"))
    if size > MAX_BODY_BYTES:
        raise InvalidInputError(
            f"The text is {size} bytes; the limit is {MAX_BODY_BYTES} bytes.",
            hint="Split it into several memories, or use `ctx prime` for documents.",
        )
    return body


def check_title(title: str | None) -> str | None:
    """Returns a stripped title (``None`` when blank) or raises."""
    if title is None:
        return None
    _check_text("The title", title, single_line=True)
    title = title.strip()
    if len(title) > MAX_TITLE_CHARS:
        raise InvalidInputError(f"A title is limited to {MAX_TITLE_CHARS} characters.")
    return title or None


def check_kind(kind: str) -> str:
    """Returns ``kind`` if it is one of :data:`KINDS`, else raises."""
    if kind not in KINDS:
        raise InvalidInputError(
            f"Unknown kind {kind!r}.", hint="Kinds: " + ", ".join(KINDS) + "."
        )
    return kind


TIERS = ("pinned", "reference", "working", "off-context")
"""Tiers in the order ``compose`` includes them (off-context never)."""


def check_tier_tags(tags: Iterable[str]) -> None:
    """Refuses a ``tier:`` tag that names no tier, and two tiers at once.

    Raises:
        InvalidInputError: an unknown tier, or more than one.
    """
    tiers = [t for t in tags if t.startswith("tier:")]
    for value in tiers:
        if value[len("tier:") :] not in TIERS:
            raise InvalidInputError(
                f"Unknown tier {value!r}.",
                hint="Tiers: " + ", ".join("tier:" + t for t in TIERS) + ".",
            )
    if len(tiers) > 1:
        raise InvalidInputError("A memory belongs to one tier at a time.")


def is_agent_name(name: str) -> bool:
    """Returns whether ``name`` may sign a write (an :class:`Intent`'s agent).

    Letters, digits and ``_.@+-``, at most 64 characters.
    """
    return _NAME_RE.fullmatch(name) is not None


def check_tag(tag: str) -> str:
    """Returns ``tag`` if it has the ``namespace:value`` form, else raises.

    Either part may hold letters of any script (``项目:api``, ``thème:été``):
    the namespace letters, marks and digits, ``_``, ``.`` and ``-``, starting
    with a letter or digit; the value anything but spaces and control
    characters. Each way to fail has its own one-line message.
    """
    _check_text("A tag", tag, single_line=True)
    namespace, colon, value = tag.partition(":")
    if not (namespace and colon and value):
        raise InvalidInputError(
            f"Tag {tag!r} is not of the form namespace:value.", hint=_TAG_FORM_HINT
        )
    if len(tag) > _MAX_TAG_CHARS:
        raise InvalidInputError(
            f"Tag {tag[:40]!r}... is longer than {_MAX_TAG_CHARS} characters."
        )
    if any(c.isspace() for c in tag):
        raise InvalidInputError(f"Tag {tag!r} holds a space.", hint=_TAG_FORM_HINT)
    if any(unicodedata.category(c) == "Cc" for c in tag):
        raise InvalidInputError(f"Tag {tag!r} holds a control character.")
    if not (
        _namespace_char(namespace[0], first=True)
        and all(map(_namespace_char, namespace))
    ):
        raise InvalidInputError(
            f"Tag {tag!r} has a namespace of other characters than letters, "
            "digits, '_', '.' and '-' (starting with a letter or digit).",
            hint=_TAG_FORM_HINT,
        )
    return tag


def _namespace_char(char: str, *, first: bool = False) -> bool:
    """Returns whether ``char`` may stand in a tag's namespace (first: begin it)."""
    kind = unicodedata.category(char)[0]
    if first:
        return kind in "LN"
    return kind in "LMN" or char in _NAMESPACE_MARKS


def check_link_type(name: str) -> str:
    """Returns the upper-cased link type if it is one of :data:`LINK_TYPES`."""
    upper = name.upper().replace("-", "_")
    if upper not in LINK_TYPES:
        raise InvalidInputError(
            f"Unknown link type {name!r}.", hint="Types: " + ", ".join(LINK_TYPES) + "."
        )
    return upper


_ENCODER = msgspec.json.Encoder(order="deterministic")
_MEMORY_DECODER = msgspec.json.Decoder(Memory)
_LINK_DECODER = msgspec.json.Decoder(Link)
_CONFLICT_DECODER = msgspec.json.Decoder(Conflict)


def encode(value: Memory | Link | Conflict) -> bytes:
    """Returns the canonical stored bytes of ``value``."""
    return encode_struct(value)


def encode_struct(value: msgspec.Struct) -> bytes:
    """Returns any stored Struct as indented JSON with a fixed key order."""
    return msgspec.json.format(_ENCODER.encode(value), indent=2) + b"\n"


def decode_memory(data: bytes, where: str = "a blob") -> Memory:
    """Decodes a memory blob.

    Raises:
        CorruptStoreError: the bytes are not a memory.
    """
    try:
        return _MEMORY_DECODER.decode(data)
    except msgspec.DecodeError as exc:
        raise CorruptStoreError(f"{where} is not a valid memory: {exc}") from exc
    except RecursionError:
        raise CorruptStoreError(f"{where} is nested too deeply.") from None


def decode_link(data: bytes, where: str = "a blob") -> Link:
    """Decodes a link file."""
    try:
        return _LINK_DECODER.decode(data)
    except msgspec.DecodeError as exc:
        raise CorruptStoreError(f"{where} is not a valid link: {exc}") from exc
    except RecursionError:
        raise CorruptStoreError(f"{where} is nested too deeply.") from None


def decode_conflict(data: bytes, where: str = "a blob") -> Conflict:
    """Decodes a stored conflict."""
    try:
        return _CONFLICT_DECODER.decode(data)
    except msgspec.DecodeError as exc:
        raise CorruptStoreError(f"{where} is not a valid conflict: {exc}") from exc
    except RecursionError:
        raise CorruptStoreError(f"{where} is nested too deeply.") from None
