"""Git pack bytes written by hand, for the tests of hostile packs.

What git writes, spelled out: an entry's type and size header, a size in a
delta's header, an offset delta's distance to its base.
"""

from __future__ import annotations


def entry_header(kind: int, size: int) -> bytes:
    """A pack entry's type and size, as git writes them."""
    out = bytearray([kind << 4 | size & 0x0F])
    size >>= 4
    while size:
        out[-1] |= 0x80
        out.append(size & 0x7F)
        size >>= 7
    return bytes(out)


def delta_size(size: int) -> bytes:
    """A size in a delta's header: 7 bits a byte, least first."""
    out = bytearray()
    while True:
        out.append(size & 0x7F | (0x80 if size > 0x7F else 0))
        size >>= 7
        if not size:
            return bytes(out)


def ofs_distance(distance: int) -> bytes:
    """An offset delta's distance back to its base, as git writes it."""
    out = [distance & 0x7F]
    distance >>= 7
    while distance:
        distance -= 1
        out.append(0x80 | distance & 0x7F)
        distance >>= 7
    return bytes(reversed(out))
