"""Identifiers: memory ids (ULIDs), commit ids and their validation."""

from __future__ import annotations

import base64
import os
import re
from datetime import datetime
from typing import NewType

from ctx.engine.errors import InvalidInputError

__all__ = [
    "MEMORY_ID_PATTERN",
    "CommitId",
    "MemoryId",
    "is_object_id",
    "new_memory_id",
    "parse_memory_id",
]

MemoryId = NewType("MemoryId", str)
"""A memory's stable identity: a 26-character ULID, upper case."""

CommitId = NewType("CommitId", str)
"""A commit's 40-character hexadecimal git object id."""

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_TO_CROCKFORD = bytes.maketrans(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", _CROCKFORD.encode()
)
MEMORY_ID_PATTERN = "[0-7][0-9A-HJKMNP-TV-Z]{25}"
"""A memory id as a regular expression: a ULID in Crockford's base 32."""

_ULID_RE = re.compile(f"^{MEMORY_ID_PATTERN}$")
_OBJECT_ID_RE = re.compile(r"[0-9a-f]{40}")


def is_object_id(text: str) -> bool:
    """Returns whether ``text`` is a git object id as git writes one (40 hex)."""
    return _OBJECT_ID_RE.fullmatch(text) is not None


def new_memory_id(now: datetime, entropy: bytes | None = None) -> MemoryId:
    """Returns a new ULID for a memory created at ``now``.

    The first ten characters encode the millisecond timestamp, so ids sort by
    creation time; the last sixteen are random, which is why the store shards
    on the id's last characters.

    Args:
        now: The creation time (timezone aware).
        entropy: Ten random bytes; drawn from the OS when omitted.
    """
    millis = int(now.timestamp() * 1000)
    rand = entropy if entropy is not None else os.urandom(10)
    # 4 zero bytes + 16 id bytes = 160 bits = 32 base32 characters; the last
    # 26 hold the 128-bit value (their 2 leading bits are zero).
    raw = b"\0\0\0\0" + millis.to_bytes(6, "big") + rand[:10]
    return MemoryId(base64.b32encode(raw)[6:].translate(_TO_CROCKFORD).decode())


def parse_memory_id(text: str) -> MemoryId:
    """Returns ``text`` as a memory id, upper-cased, or raises.

    Raises:
        InvalidInputError: ``text`` is not a 26-character ULID.
    """
    candidate = text.strip().upper()
    if not _ULID_RE.fullmatch(candidate):
        raise InvalidInputError(
            f"{text!r} is not a memory id (26 characters of Crockford base32).",
            hint="Ids look like 01JD2X9K7M3Q4R5S6T7V8W9XYZ; `ctx ls` lists them.",
        )
    return MemoryId(candidate)
