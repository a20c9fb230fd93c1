"""Redaction, the hub's side: the indexes lose the removed text at once.

The engine rewrites history (:mod:`ctx.engine.redaction`); the search
indexes hold the text of every blob they projected, the removed ones too.
So a redaction, and a pull that applied one, drop every generation of the
memory indexes at once (not after the usual grace for readers), before the
rewrite and again after it: a recall that rebuilt the index in between from
the old history loses it too. The next recall rebuilds the index from the
rewritten commits. The code index (``index/code``) holds source files, not
memories, and is kept.

A text redacted with ``--text`` also leaves the store's private state (the
hooks' waiting blocks, the recall log): every file there that holds it,
raw or as JSON writes it, is rewritten without it (``keys.json`` holds
only hashes and is left alone).
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

from ctx.engine import (
    Access,
    Intent,
    PullResult,
    RedactResult,
    Store,
    redact_memory,
    redact_text,
    resolve_memory_id,
)
from ctx.engine import pull as engine_pull

__all__ = ["drop_index", "pull", "redact", "scrub_private"]

_KEEP = frozenset({"lock", "code"})


def redact(
    store: Store, target: str, *, text: bool = False, reason: str | None = None
) -> RedactResult:
    """Removes memory ``target`` (an id), or the text ``target``, from history.

    Args:
        store: The store (on disk).
        target: A memory id (full or short; a removed memory's too), or with
            ``text`` the literal text to remove wherever it is.
        text: Read ``target`` as a text, not an id.
        reason: Why, recorded with the redaction.

    Raises:
        InvalidInputError: nothing holds the text, or it is too short.
        NotFoundError: no version of the memory is in the history.
    """
    drop_index(store)
    if text:
        result = redact_text(store, target, reason=reason)
        if store.path is not None:
            scrub_private(store.path, target)
    else:
        memory_id = resolve_memory_id(store, target, removed=True)
        result = redact_memory(store, memory_id, reason=reason)
    drop_index(store)
    return result


def pull(
    store: Store,
    intent: Intent,
    remote: str = "origin",
    branch: str | None = None,
    *,
    access: Access,
    into: str | None = None,
    prefer: str | None = None,
    ignore_redactions: bool = False,
) -> PullResult:
    """Pulls as :func:`ctx.engine.pull`; drops the indexes if it applied a redaction."""
    result = engine_pull(
        store,
        intent,
        remote,
        branch,
        into=into,
        prefer=prefer,
        access=access,
        ignore_redactions=ignore_redactions,
    )
    if result.redactions:
        drop_index(store)
    return result


def drop_index(store: Store) -> None:
    """Removes every generation of the store's memory indexes, under their lock."""
    from ctx.hub.index.folder import IndexFolder

    folder = store.path / "index" if store.path else None
    if folder is None or not folder.is_dir():
        return
    with IndexFolder(folder).locked(blocking=True):
        for child in folder.iterdir():
            if child.name in _KEEP:
                continue
            with contextlib.suppress(OSError):
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child)
                else:
                    child.unlink()


def scrub_private(store_path: Path, text: str) -> int:
    """Rewrites every file of the private state that holds ``text`` without it.

    Returns:
        How many files were rewritten.
    """
    import msgspec

    from ctx.engine.redaction import REDACTED
    from ctx.hub.state import PRIVATE_FOLDER, write_atomically

    needles = {text.encode(), msgspec.json.encode(text)[1:-1]}
    folder = store_path / PRIVATE_FOLDER
    rewritten = 0
    for path in sorted(folder.rglob("*")) if folder.is_dir() else ():
        if path.is_symlink() or not path.is_file() or path.name == "keys.json":
            continue
        with contextlib.suppress(OSError):
            data = path.read_bytes()
            clean = data
            for needle in needles:
                clean = clean.replace(needle, REDACTED.encode())
            if clean != data:
                write_atomically(path, clean, durable=False)
                rewritten += 1
    return rewritten
