"""Redaction, the hub's side: the indexes lose the removed text at once.

The engine rewrites history (:mod:`ctx.engine.redaction`); the search
indexes hold the text of every blob they projected, the removed ones too.
So a redaction, and a pull that applied one, drop every generation of the
memory indexes at once (not after the usual grace for readers), before the
rewrite and again after it: a recall that rebuilt the index in between from
the old history loses it too. The next recall rebuilds the index from the
rewritten commits. The code index (``index/code``) holds source files, not
memories, and is kept.

The store's other files can hold the removed text too: the private state
(the hooks' waiting blocks and log, the recall log, the shown record,
Dream's state, sessions), anything else beside ``git/``, and the hooks' log
in the user's cache folder (where a hook with no store yet logs). Every file
there that holds it, raw or as JSON writes it, is rewritten without it
(:func:`scrub_store`): for ``--text`` the text, for a memory each version's
title and body, each secret the detectors find in them (a prompt or a log
line may hold the secret alone), and each of their lines of
:data:`MIN_LINE` characters or more (a block quotes a memory line by
line). The caches in ``cache/`` (the text cache ``texts.sqlite``, the
history index) are removed by the engine.

Crash-safe as the engine's rewrite: before anything changes, the texts go
to ``scrub.pending`` in the store folder; the index is dropped and the files
scrubbed after the rewrite, and the note goes last. A redaction killed on
the way is finished by the next :meth:`~ctx.hub.Workspace.store`
(:func:`finish_scrub`), after the engine finished its own part.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path

import msgspec

from ctx.engine import (
    PENDING_REDACTION,
    REDACTED,
    Access,
    CtxError,
    Intent,
    PullResult,
    RedactResult,
    Store,
    memory_texts,
    redact_memory,
    redact_text,
    resolve_memory_id,
)
from ctx.engine import pull as engine_pull
from ctx.hub.state import SCRUB_PENDING, write_atomically

__all__ = [
    "MIN_LINE",
    "SCRUB_PENDING",
    "drop_index",
    "finish_scrub",
    "pull",
    "redact",
    "scrub_store",
]

MIN_LINE = 8
"""A line of a removed text this long or longer is scrubbed on its own."""

_KEEP = frozenset({"lock", "code"})
_NOT_SCRUBBED = frozenset(
    {"git", "index", "cache", "lock", SCRUB_PENDING, PENDING_REDACTION}
)
_TEXTS = msgspec.json.Decoder(tuple[str, ...])


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
    if text:
        texts: tuple[str, ...] = (target,)
    else:
        memory_id = resolve_memory_id(store, target, removed=True)
        texts = _with_secrets(memory_texts(store, memory_id))
    if store.path is not None:
        write_atomically(store.path / SCRUB_PENDING, msgspec.json.encode(texts))
    try:
        drop_index(store)
        if text:
            result = redact_text(store, target, reason=reason)
        else:
            result = redact_memory(store, memory_id, reason=reason)
    except CtxError:
        if store.path is not None:  # nothing was rewritten: nothing to scrub
            (store.path / SCRUB_PENDING).unlink(missing_ok=True)
        raise
    finish_scrub(store)
    return result


def finish_scrub(store: Store) -> None:
    """Finishes the hub's part of a redaction (``scrub.pending``), if one waits.

    The indexes are dropped, every file beside ``git/`` that holds a removed
    text is rewritten without it, then the note goes.
    """
    if store.path is None:
        return
    note = store.path / SCRUB_PENDING
    try:
        texts = _TEXTS.decode(note.read_bytes())
    except FileNotFoundError:
        return
    except msgspec.DecodeError:
        texts = ()  # torn while written: nothing was rewritten yet
    drop_index(store)
    scrub_store(store.path, texts)
    note.unlink(missing_ok=True)


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
    from ctx.hub.retrieval.index.folder import IndexFolder

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


def scrub_store(store_path: Path, texts: Iterable[str]) -> int:
    """Rewrites every file of the store that holds one of ``texts`` without it.

    ``git/`` (the engine's), ``index/`` and ``cache/`` (dropped) and the
    pending notes are left alone.

    Returns:
        How many files were rewritten.
    """
    needles = _needles(texts)
    rewritten = 0
    if not needles:
        return 0
    for path in sorted(_scrubbed_files(store_path)):
        with contextlib.suppress(OSError):
            data = path.read_bytes()
            clean = data
            for needle in needles:
                clean = clean.replace(needle, REDACTED.encode())
            if clean != data:
                write_atomically(path, clean, durable=False)
                rewritten += 1
    return rewritten


def _with_secrets(texts: tuple[str, ...]) -> tuple[str, ...]:
    """Returns ``texts`` and each secret the detectors find in them.

    A prompt or a log line can hold a memory's secret without the rest of
    its text: the secret alone is scrubbed too.
    """
    from ctx.hub.secrets import find_secrets

    found = [t[f.start : f.end] for t in texts for f in find_secrets(t)]
    return texts + tuple(dict.fromkeys(found))


def _scrubbed_files(store_path: Path) -> Iterator[Path]:
    from ctx.hub.hook_log import log_path

    # The hooks' log outside any store (the user's cache folder): a hook of
    # a session without a store yet may have logged what it was given.
    cached = log_path(None)
    for log in (cached, cached.with_name(cached.name + ".1")):
        if log.is_file() and not log.is_symlink():
            yield log
    for child in store_path.iterdir() if store_path.is_dir() else ():
        if child.name in _NOT_SCRUBBED or child.is_symlink():
            continue
        if child.is_file():
            yield child
        elif child.is_dir():
            yield from (
                p for p in child.rglob("*") if p.is_file() and not p.is_symlink()
            )


def _needles(texts: Iterable[str]) -> list[bytes]:
    """Returns each text and its long lines, raw and as JSON writes them.

    Longest first, so a text goes whole before a line of it is looked for.
    """
    parts: set[str] = set()
    for text in texts:
        if len(text.strip()) < MIN_LINE // 2:
            continue
        parts.add(text)
        parts.update(
            line.strip() for line in text.splitlines() if len(line.strip()) >= MIN_LINE
        )
    out: set[bytes] = set()
    for part in parts:
        out.add(part.encode())
        out.add(msgspec.json.encode(part)[1:-1])
    return sorted(out, key=len, reverse=True)
