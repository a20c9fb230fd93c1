"""Where things live in a store's tree.

::

    memory/<context>/<a>/<b>/<c>/<id>.json     free-form memories
    pinned/<source>/<slug>.json                always recalled first
    primed/<source>/<slug>.json                sections of primed documents
    links/<a>/<b>/<c>/<from-id>/<TYPE>/<to-id> one file per typed link
    conflicts/<id>.json                        unresolved merge clashes
    views/<name>.json                          saved views
    proposals/<ab>/<id>.json                   Dream's proposals (dream/ branches)

Every other module names these folders through this one: the constants
below, and the small functions that build and test paths.

``<a>/<b>/<c>`` are the id's last three characters, one folder level each.
They are random (the ULID's entropy), so 32 x 32 x 32 leaf folders fill
evenly: a write rewrites six small trees whether the store holds a thousand
memories or ten million (docs/storage.md has the measurements).
"""

from __future__ import annotations

import re

from ctx.engine.errors import InvalidInputError
from ctx.engine.ids import MemoryId

__all__ = [
    "CONFLICTS",
    "LINKS",
    "MEMORY",
    "MEMORY_AREAS",
    "PINNED",
    "PRIMED",
    "PROPOSALS",
    "SESSIONS",
    "VIEWS",
    "area_of",
    "check_context",
    "check_source_name",
    "conflict_path",
    "context_of",
    "id_from_conflict_path",
    "id_from_memory_path",
    "is_conflict_path",
    "is_memory_path",
    "is_pinned",
    "link_dir",
    "link_path",
    "memory_path",
    "parse_link_path",
    "proposal_path",
    "shard",
    "slugify",
    "source_path",
    "view_path",
]

MEMORY = "memory"
"""Free-form memories, by context and shard."""
PINNED = "pinned"
"""Memories always recalled first, by source."""
PRIMED = "primed"
"""Sections of primed documents, by source."""
SESSIONS = "sessions"
"""What working sessions learned, by session id."""
LINKS = "links"
"""One file per typed link."""
CONFLICTS = "conflicts"
"""Unresolved merge clashes, one file per memory."""
VIEWS = "views"
"""Saved views, one file per name."""
PROPOSALS = "proposals"
"""Dream's proposals, one file each, only on ``dream/`` branches."""

MEMORY_AREAS = (MEMORY, PINNED, PRIMED, SESSIONS)
"""Top-level folders that hold memories."""

# The predicates below run once per memory of a branch (100k calls for a
# view), so their prefixes are made once here.
_AREA_PREFIXES = tuple(f"{area}/" for area in MEMORY_AREAS)
_MEMORY_PREFIX = f"{MEMORY}/"
_PINNED_PREFIX = f"{PINNED}/"
_CONFLICTS_PREFIX = f"{CONFLICTS}/"

_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")


def shard(memory_id: MemoryId) -> str:
    """Returns the three-level fan-out folder of ``memory_id``."""
    return f"{memory_id[-1]}/{memory_id[-2]}/{memory_id[-3]}"


def check_context(name: str) -> str:
    """Returns ``name`` if it can name a context folder, else raises."""
    if not _NAME_RE.fullmatch(name) or ".." in name:
        raise InvalidInputError(
            f"Context {name!r} is not allowed.",
            hint="Use lower-case letters, digits and _.- (no / or ..).",
        )
    return name


def check_source_name(name: str) -> str:
    """Returns ``name`` if it can name a pinned or primed source folder."""
    if not _NAME_RE.fullmatch(name) or ".." in name:
        raise InvalidInputError(
            f"Source name {name!r} is not allowed.",
            hint="Use lower-case letters, digits and _.- (no / or ..), or --source.",
        )
    return name


def slugify(text: str, limit: int = 60) -> str:
    """Returns a lower-case, dash-separated file name stem for ``text``."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:limit].strip("-")
    return slug or "section"


def area_of(path: str) -> str:
    """Returns the top-level folder of ``path`` (for a memory, its area)."""
    return path.split("/", 1)[0]


def context_of(path: str) -> str:
    """Returns a memory's context (``memory/``) or source (pinned, primed)."""
    return path.split("/")[1]


def is_memory_path(path: str) -> bool:
    """Returns whether ``path`` holds a memory (a JSON file in a memory area)."""
    return path.endswith(".json") and path.startswith(_AREA_PREFIXES)


def is_pinned(path: str) -> bool:
    """Returns whether the memory at ``path`` is always recalled first."""
    return path.startswith(_PINNED_PREFIX)


def memory_path(context: str, memory_id: MemoryId) -> str:
    """Returns the path of a free-form memory."""
    return f"{MEMORY}/{context}/{shard(memory_id)}/{memory_id}.json"


def source_path(area: str, source: str, stem: str) -> str:
    """Returns the path of a pinned or primed memory named ``stem``."""
    return f"{area}/{source}/{stem}.json"


def id_from_memory_path(path: str) -> MemoryId | None:
    """Returns the id encoded in a ``memory/`` path, or ``None``.

    Only free-form memories carry their id in their path; a memory in any
    other area must be read to learn it.
    """
    if path.startswith(_MEMORY_PREFIX) and path.endswith(".json"):
        return MemoryId(path.rsplit("/", 1)[1][:-5])
    return None


def link_dir(from_id: MemoryId) -> str:
    """Returns the folder that holds every outgoing link of ``from_id``."""
    return f"{LINKS}/{shard(from_id)}/{from_id}"


def link_path(from_id: MemoryId, link_type: str, to_id: MemoryId) -> str:
    """Returns the path of one typed link."""
    return f"{link_dir(from_id)}/{link_type}/{to_id}"


def parse_link_path(path: str) -> tuple[MemoryId, str, MemoryId] | None:
    """Returns ``(from, type, to)`` for a link path, or ``None``."""
    parts = path.split("/")
    if len(parts) != 7 or parts[0] != LINKS:
        return None
    return MemoryId(parts[4]), parts[5], MemoryId(parts[6])


def conflict_path(memory_id: MemoryId) -> str:
    """Returns the path where an unresolved conflict on a memory is kept."""
    return f"{CONFLICTS}/{memory_id}.json"


def is_conflict_path(path: str) -> bool:
    """Returns whether ``path`` is in the conflicts folder."""
    return path.startswith(_CONFLICTS_PREFIX)


def id_from_conflict_path(path: str) -> MemoryId | None:
    """Returns the memory id of a stored conflict's path, or ``None``."""
    if is_conflict_path(path) and path.endswith(".json"):
        return MemoryId(path[len(CONFLICTS) + 1 : -len(".json")])
    return None


def view_path(name: str) -> str:
    """Returns the path of the saved view ``name`` (checked by the caller)."""
    return f"{VIEWS}/{name}.json"


def proposal_path(proposal_id: str) -> str:
    """Returns the path of one of Dream's proposals (fanned out by its id)."""
    return f"{PROPOSALS}/{proposal_id[:2]}/{proposal_id}.json"
