"""Clone: a new store made from a remote's branches, whole or not at all.

The store is built in a temporary folder and renamed into place, so a
failed clone leaves no half store behind (and the folder a killed one left
is removed by the next, :mod:`ctx.engine._builds`). Its objects are fetched
and checked as a fetch's are (:mod:`ctx.engine.transfer`); every branch and
every fetched branch is written at once.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import msgspec
from dulwich.objects import ObjectID
from dulwich.refs import Ref
from dulwich.repo import Repo

from ctx.engine._builds import BUILD_PREFIX, remove_abandoned_builds, write_gitignore
from ctx.engine._fetch_plan import HEADS
from ctx.engine._lock import write_lock
from ctx.engine._reaching import NO_ACCESS, Access
from ctx.engine.errors import ConflictError, RemoteError, StoreError
from ctx.engine.ids import CommitId
from ctx.engine.remotes import (
    add_remote,
    check_url,
    display_url,
    tracking_ref,
    write_refs,
)
from ctx.engine.store import Clock, Store
from ctx.engine.transfer import FetchResult, RefUpdate, fetch_objects, sync_record

__all__ = ["CloneResult", "clone"]


class CloneResult(msgspec.Struct, frozen=True, kw_only=True):
    """A store made from a remote.

    Attributes:
        path: The new store folder.
        url: Where it came from (the remote ``origin``).
        head: Its default branch, as the remote's.
        branches: Every branch, with its tip.
    """

    path: str
    url: str
    head: str
    branches: dict[str, CommitId]


def clone(
    path: Path,
    url: str,
    *,
    clock: Clock,
    access: Access = NO_ACCESS,
    namespace: str = "",
) -> CloneResult:
    """Makes a store in folder ``path`` from the ctx store at ``url``.

    The remote becomes ``origin``; every branch it has (under ``namespace``,
    the branches of the code's remote's ``refs/heads/ctx/``) becomes a branch
    here, and its default branch the store's (else ``main``). The store is
    built in a temporary folder and renamed into place, so a failed clone
    leaves nothing behind.

    Raises:
        ConflictError: a store already exists at ``path``.
        RemoteError: the remote cannot be reached, is empty, or is no ctx store.
    """
    url = check_url(url)
    if (path / "git").exists():
        raise ConflictError(f"A store already exists at {path}.")
    created = None  # the first folder made here, removed if the clone fails
    if not path.exists():
        created = path
        while not created.parent.exists():
            created = created.parent
    try:
        (path / "cache").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"Cannot create a store at {path}: {exc.strerror}.") from exc
    try:
        with write_lock(path / "lock", 60.0):
            if (path / "git").exists():
                raise ConflictError(f"A store already exists at {path}.")
            remove_abandoned_builds(path, locked=True)  # an earlier clone killed
            fetched = _clone_into(path, url, clock, access, namespace)
    except BaseException:
        if created is not None:
            shutil.rmtree(created, ignore_errors=True)
        raise
    assert fetched.head is not None
    write_gitignore(path)  # the history cache is filled by the commands that read it
    return CloneResult(
        path=str(path),
        url=display_url(url),
        head=fetched.head,
        branches=fetched.branches,
    )


def _clone_into(
    path: Path,
    url: str,
    clock: Clock,
    access: Access,
    namespace: str,
) -> FetchResult:
    tmp = Path(tempfile.mkdtemp(prefix=BUILD_PREFIX, dir=path))
    try:
        repo = Repo.init_bare(str(tmp))
        try:
            fetched = _fill_clone(repo, url, clock, access, namespace)
        finally:
            repo.close()
        os.rename(tmp, path / "git")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return fetched


def _fill_clone(
    repo: Repo,
    url: str,
    clock: Clock,
    access: Access,
    namespace: str,
) -> FetchResult:
    """Fetches every branch of ``url`` into the new repository, checked.

    Every branch and every fetched branch is written in one ``packed-refs``
    write; only the default branch gets a ref file and a reflog line of its
    own (the clone, in its operation log), as git's clone does.
    """
    from ctx.engine.store import STORE_FORMAT

    config = repo.get_config()
    config.set((b"ctx",), b"storeversion", str(STORE_FORMAT).encode())
    config.write_to_path()
    store = Store(repo, None, clock=clock)
    add_remote(store, "origin", url, namespace=namespace)
    heads, head, record = fetch_objects(store, url, access, {}, namespace, {})
    sync_record(
        store, url, access, record, [ObjectID(t.encode()) for t in heads.values()]
    )
    if not heads and namespace:
        raise RemoteError(
            f"{display_url(url)} holds no memory: it has no branch under {namespace}.",
            hint="To put it there, `ctx remote add origin --with-code` in a "
            "store of this code, then `ctx push`.",
        )
    if not heads:
        raise RemoteError(
            f"{display_url(url)} is empty.",
            hint="To fill it, `ctx remote add origin URL` in a store, then `ctx push`.",
        )
    if head is None:
        head = "main" if "main" in heads else sorted(heads)[0]
    refs: dict[Ref, ObjectID | None] = {
        tracking_ref("origin", branch): ObjectID(tip.encode())
        for branch, tip in heads.items()
    }
    refs |= {
        Ref(HEADS + branch.encode()): ObjectID(tip.encode())
        for branch, tip in heads.items()
        if branch != head
    }
    write_refs(store, refs)
    store.move_branch(head, None, heads[head], f"ctx clone: from {display_url(url)}")
    repo.refs.set_symbolic_ref(Ref(b"HEAD"), Ref(HEADS + head.encode()))
    return FetchResult(
        remote="origin",
        url=display_url(url),
        head=head,
        branches=heads,
        updated=tuple(
            RefUpdate(branch=branch, old=None, new=tip)
            for branch, tip in sorted(heads.items())
        ),
    )
