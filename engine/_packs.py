"""Writing many objects as one pack, indexed as it is written.

dulwich's ``add_objects`` writes a pack and then reads it all back to index
it (about 60% of a 100k-memory import here). The objects are in hand, so
``write_pack_objects`` gives the offsets and checksums directly; the index
is written from them. The pack is published the way git does it: data and
index under temporary names, then the ``.pack`` renamed into place, then the
``.idx`` (readers only open a pack whose index is there). A writer killed
before the last rename leaves only files no reader opens; ``gc`` removes them.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Sequence

from dulwich.file import GitFile
from dulwich.object_store import DiskObjectStore
from dulwich.objects import ShaFile
from dulwich.pack import write_pack_index, write_pack_objects

__all__ = ["TEMP_PREFIX", "move_packs", "write_pack"]

TEMP_PREFIX = "tmp_ctx_"


def write_pack(
    store: DiskObjectStore, objects: Sequence[ShaFile], compression_level: int = 0
) -> str:
    """Writes ``objects`` into a new pack of ``store`` and makes it visible.

    Repeated objects (equal content at many paths) are written once: the
    index has one entry per object id and must count what the pack holds.
    Objects are stored uncompressed unless ``compression_level`` (zlib's)
    says otherwise. Returns the new pack's path, without ``.pack``.
    """
    objects = list({obj.id: obj for obj in objects}.values())
    pack_dir = store.pack_dir
    os.makedirs(pack_dir, exist_ok=True)
    temp = os.path.join(pack_dir, f"{TEMP_PREFIX}{uuid.uuid4().hex}")
    with GitFile(temp + ".data", "wb") as f:
        entries, checksum = write_pack_objects(
            f,
            objects,
            object_format=store.object_format,
            deltify=False,
            # Compressing each small object costs ~8 us of zlib set-up even
            # at level 1 (half of a 100k import): an import stores them, and
            # `ctx gc` compresses when it repacks.
            compression_level=compression_level,
        )
    index = sorted((sha, offset, crc) for sha, (offset, crc) in entries.items())
    with GitFile(temp + ".index", "wb") as f:
        write_pack_index(f, index, checksum)
    final = os.path.join(pack_dir, f"pack-{checksum.hex()}")
    os.rename(temp + ".data", final + ".pack")
    os.rename(temp + ".index", final + ".idx")
    store.packs  # noqa: B018  (refreshes dulwich's list of packs)
    return final


def move_packs(source: DiskObjectStore, target: DiskObjectStore) -> None:
    """Moves every pack of ``source`` into ``target`` (one file system).

    Each is published as :func:`write_pack` does: the ``.pack``, then the
    ``.idx``. ``source`` is closed first, its packs no longer mapped.
    """
    source.close()
    names = [
        name[: -len(".idx")]
        for name in sorted(os.listdir(source.pack_dir))
        if name.startswith("pack-") and name.endswith(".idx")
    ]
    for name in names:
        for suffix in (".pack", ".idx"):
            os.rename(
                os.path.join(source.pack_dir, name + suffix),
                os.path.join(target.pack_dir, name + suffix),
            )
    target.packs  # noqa: B018  (refreshes dulwich's list of packs)
