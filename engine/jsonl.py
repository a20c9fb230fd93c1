"""Decoding one line of a JSON Lines import, with errors that name the line.

Both import formats (``line_import.py``, ``graph_lines.py``) decode their
lines here, so a line that is not UTF-8, not JSON or of the wrong shape is
reported the same way in both (``Line 7: not valid UTF-8.``).
"""

from __future__ import annotations

import json
from typing import TypeVar

import msgspec

from ctx.engine.errors import InvalidInputError

__all__ = ["NESTED_TOO_DEEPLY", "decode_line", "key_twice"]

T = TypeVar("T")

NESTED_TOO_DEEPLY = "its JSON is nested too deeply."
"""What a line nested past the decoder's recursion limit is told."""


def decode_line(decoder: msgspec.json.Decoder[T], n: int, raw: bytes) -> T:
    """Returns line ``n`` (1-based) decoded by ``decoder``.

    Raises:
        InvalidInputError: the line is not UTF-8, not JSON, nested too
            deeply, not of the decoder's type, or gives a key twice (the
            decoder would keep the last), named ``Line N: …``.
    """
    try:
        raw.decode("utf-8")
        decoded = decoder.decode(raw)
    except UnicodeDecodeError:
        raise InvalidInputError(f"Line {n}: not valid UTF-8.") from None
    except RecursionError:  # msgspec recurses once per level of nesting
        raise InvalidInputError(f"Line {n}: {NESTED_TOO_DEEPLY}") from None
    except msgspec.ValidationError as exc:
        raise InvalidInputError(f"Line {n}: {exc}.") from None
    except msgspec.DecodeError as exc:
        raise InvalidInputError(f"Line {n}: not a JSON object ({exc}).") from None
    twice = key_twice(raw)
    if twice is not None:
        # The decoder keeps the last; the first would be lost without a word.
        raise InvalidInputError(f"Line {n}: the key {twice!r} is given twice.")
    return decoded


def key_twice(raw: bytes) -> str | None:
    """Returns a key that an object of ``raw`` (valid JSON) gives twice.

    msgspec keeps the last of a key given twice; a reader that must not
    drop the first without a word asks this after decoding.
    """
    found: list[str] = []

    def pairs(items: list[tuple[str, object]]) -> dict[str, object]:
        keys = [key for key, _ in items]
        if len(set(keys)) < len(keys) and not found:
            found.append(next(k for k in keys if keys.count(k) > 1))
        return dict(items)

    json.loads(raw, object_pairs_hook=pairs)
    return found[0] if found else None
