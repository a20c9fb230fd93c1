"""Remotes: named git remotes in the store's git config, and their addresses.

A remote is an ordinary git remote, so stock git reads it too::

    [remote "origin"]
        url = https://git.example.com/team/memory.git
        fetch = +refs/heads/*:refs/remotes/origin/*

Its branches, once fetched, live under ``refs/remotes/NAME/``. The transfers
themselves (fetch, push, pull, clone) are in :mod:`ctx.engine.transfer`.

A remote may keep the memory's branches under a namespace of its own, as
the code repository's remote does (:mod:`ctx.engine.code_remotes`): branch
``main`` is ``refs/heads/ctx/main`` there, and nothing outside ``ctx/`` is
read or written. The namespace is the remote's refspecs, which stock git
follows as ctx does::

    [remote "origin"]
        url = git@github.com:team/api.git
        fetch = +refs/heads/ctx/*:refs/remotes/origin/*
        push = refs/heads/*:refs/heads/ctx/*

Addresses are checked here, before dulwich sees them: dulwich reads almost
anything as an ssh host or a local path, so a typo (``htp://``) would
otherwise fail later with a confusing message.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

import msgspec
from dulwich.config import ConfigFile
from dulwich.file import FileLocked
from dulwich.objects import ObjectID
from dulwich.refs import DiskRefsContainer, Ref
from dulwich.repo import Repo
from dulwich.walk import Walker

from ctx.engine.errors import (
    ConflictError,
    InvalidInputError,
    RemoteNotFoundError,
    StoreBusyError,
)
from ctx.engine.ids import CommitId
from ctx.engine.store import PACKED_REFS

if TYPE_CHECKING:
    from ctx.engine.store import Store

__all__ = [
    "RemoteInfo",
    "RemoteLag",
    "add_remote",
    "check_url",
    "differing_branches",
    "display_url",
    "list_remotes",
    "remote_lag",
    "remote_namespace",
    "remote_url",
    "remove_remote",
    "tracking_branches",
    "tracking_ref",
    "write_refs",
]

_SCHEMES = ("file", "git", "http", "https", "ssh", "git+ssh", "ssh+git")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_SCP_RE = re.compile(r"^(?:[^@/:\s]+@)?[A-Za-z0-9][A-Za-z0-9.-]*:(?!//)\S")
_REMOTES = b"refs/remotes/"
_HEADS = "refs/heads/"
_NAMESPACE_RE = re.compile(r"^(?:[A-Za-z0-9][A-Za-z0-9._-]*/)+$")


class RemoteInfo(msgspec.Struct, frozen=True, kw_only=True):
    """A remote: its name and address (as stored in the git config).

    Attributes:
        name: The remote's name (``origin``).
        url: Where it is, without any password it holds: a path,
            ``file://``, ``git://``, ``ssh://``, an scp-like ``host:path``,
            or ``http(s)://``.
        branches: The remote's branches as last fetched or pushed.
        namespace: Where the branches are on the remote: ``""`` for
            ``refs/heads/`` itself, ``"ctx/"`` for ``refs/heads/ctx/``.
    """

    name: str
    url: str
    branches: tuple[str, ...] = ()
    namespace: str = ""


class RemoteLag(msgspec.Struct, frozen=True, kw_only=True):
    """How far a store and a remote are apart, as the remote was last fetched.

    Attributes:
        remote: The remote's name.
        unpushed: Commits of the branches compared that the remote lacks.
        unmerged: Commits of the remote's branches that no branch here has.
        differ: The branches compared whose tip here is not the remote's
            (new ones included): what a push would move.
    """

    remote: str
    unpushed: int
    unmerged: int
    differ: tuple[str, ...]


def check_name(name: str) -> str:
    """Returns ``name`` if it may name a remote, else raises InvalidInputError."""
    if not _NAME_RE.fullmatch(name) or name.endswith((".lock", ".")) or ".." in name:
        raise InvalidInputError(
            f"{name!r} is not a valid remote name.",
            hint="Use letters, digits, '.', '_' and '-' (e.g. origin).",
        )
    return name


def check_url(url: str) -> str:
    """Returns ``url`` if ctx can reach a remote at it, else raises.

    A local path comes back absolute. Accepted: ``file``, ``git``, ``ssh``
    and ``http(s)`` URLs with a host (``file://`` with a path), scp-like
    ``[user@]host:path``, and local paths.

    Raises:
        InvalidInputError: the address is malformed or its scheme unknown.
    """
    bad = InvalidInputError(
        f"{url!r} is not a remote address ctx can use.",
        hint="Use a path, file://, git://, ssh://, user@host:path or http(s)://.",
    )
    if not url or url != url.strip() or any(c in url for c in "\0\n\r"):
        raise bad
    if _SCP_RE.match(url):
        return url
    if "://" not in url:
        # A local path: kept absolute, so that it names the same folder
        # from wherever the next command runs.
        return str(Path(url).absolute())
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise bad from None
    if parts.scheme not in _SCHEMES:
        raise bad
    if parts.scheme == "file":
        if not parts.path or parts.netloc not in ("", "localhost"):
            raise bad
    elif not parts.hostname or (port is not None and not 0 < port < 65536):
        raise bad
    return url


def transport_location(url: str) -> str:
    """Returns the address to hand to dulwich for ``url``.

    A local folder holding a ctx store (``.ctx/`` or a folder above it) is
    reached through its ``git/`` repository.
    """
    if "://" in url or _SCP_RE.match(url):
        return url
    path = Path(url)
    for candidate in (path, path / ".ctx"):
        if (candidate / "git" / "config").is_file():
            return str(candidate / "git")
    return str(path)


def display_url(url: str) -> str:
    """Returns ``url`` without its password, for messages and listings."""
    if "://" not in url:
        return url
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return url
    if password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{parts.username}@{host}"))


def tracking_ref(remote: str, branch: str) -> Ref:
    """Returns the ref that holds ``remote``'s ``branch`` once fetched."""
    return Ref(_REMOTES + f"{remote}/{branch}".encode())


def tracking_branches(store: Store, remote: str) -> dict[str, CommitId]:
    """Returns ``remote``'s branches as last fetched, with their tips."""
    # Not dulwich's ``keys(base=...)``: its packed refs under
    # ``refs/remotes/o`` include ``refs/remotes/origin/*``.
    prefix = _REMOTES + remote.encode() + b"/"
    out: dict[str, CommitId] = {}
    refs = store.repo.refs
    for ref in sorted(r for r in refs.allkeys() if r.startswith(prefix)):
        name = ref[len(prefix) :].decode("utf-8", "surrogateescape")
        out[name] = CommitId(refs[ref].decode())
    return out


def remote_lag(store: Store, remote: str, branches: Iterable[str] = ()) -> RemoteLag:
    """Returns how far the store and ``remote`` (as last fetched) are apart.

    The branches compared are the remote's and ``branches``, those of them
    the store has. Only the commits between the two sides are walked.

    Raises:
        RemoteNotFoundError: the store has no such remote.
    """
    theirs, ours, compared = _compared(store, remote, branches)
    return RemoteLag(
        remote=remote,
        unpushed=_count_between(store, [ours[b] for b in compared], theirs.values()),
        unmerged=_count_between(store, theirs.values(), ours.values()),
        differ=tuple(b for b in compared if theirs.get(b) != ours[b]),
    )


def differing_branches(
    store: Store, remote: str, branches: Iterable[str] = ()
) -> tuple[str, ...]:
    """Returns :attr:`RemoteLag.differ` alone: no commit is walked.

    Raises:
        RemoteNotFoundError: the store has no such remote.
    """
    theirs, ours, compared = _compared(store, remote, branches)
    return tuple(b for b in compared if theirs.get(b) != ours[b])


def _compared(
    store: Store, remote: str, branches: Iterable[str]
) -> tuple[dict[str, CommitId], dict[str, CommitId], list[str]]:
    """Returns the remote's tips (as last fetched), the store's, and the compared.

    The branches compared are the remote's and ``branches``, those of them
    the store has.
    """
    remote_url(store, remote)
    theirs = tracking_branches(store, remote)
    ours = {name: store.branch_tip(name) for name in store.branches()}
    return theirs, ours, sorted((set(theirs) | set(branches)) & set(ours))


def _count_between(
    store: Store, include: Iterable[CommitId], exclude: Iterable[CommitId]
) -> int:
    """Returns how many commits ``include`` reaches and ``exclude`` does not."""
    wanted = [ObjectID(c.encode()) for c in set(include)]
    if not wanted:
        return 0
    unwanted = [ObjectID(c.encode()) for c in set(exclude)]
    return sum(1 for _ in Walker(store.repo.object_store, wanted, exclude=unwanted))


def write_refs(store: Store, refs: Mapping[Ref, ObjectID | None]) -> None:
    """Sets many refs at once (``None`` removes one), unlogged.

    On disk that is one write of ``packed-refs`` (each ref's loose file, if
    any, removed), as git's clone and ``pack-refs`` do: writing 20,000 ref
    files and reflogs one by one took a clone minutes. Called under the
    store's lock, by the transfers, which own ``refs/remotes/``.
    """
    if not refs:
        return
    container = store.repo.refs
    if isinstance(container, DiskRefsContainer):
        try:
            with store.moving(PACKED_REFS):
                container.add_packed_refs(refs)
        except FileLocked as exc:
            lockfile = os.fsdecode(exc.lockfilename)
            raise StoreBusyError(
                f"The store's refs are locked by {lockfile}; nothing was changed.",
                hint="A git command may be running; if none is, remove that file.",
            ) from None
        return
    for ref, sha in refs.items():
        if sha is None:
            container.remove_if_equals(ref, None)
        else:
            container[ref] = sha


def _section(name: str) -> tuple[bytes, bytes]:
    return (b"remote", name.encode())


def list_remotes(store: Store) -> list[RemoteInfo]:
    """Returns every remote of the store, sorted by name."""
    config = store.repo.get_config()
    out = []
    for section in config.sections():
        if len(section) == 2 and section[0] == b"remote":
            name = section[1].decode("utf-8", "replace")
            try:
                url = config.get(section, b"url").decode("utf-8", "replace")
            except KeyError:
                continue
            branches = tuple(tracking_branches(store, name))
            out.append(
                RemoteInfo(
                    name=name,
                    url=display_url(url),
                    branches=branches,
                    namespace=_namespace(config, name),
                )
            )
    return sorted(out, key=lambda r: r.name)


def _add_hint(name: str) -> str:
    """Returns how to add remote ``name``: by that name, if a remote can take it.

    Given an address or nothing where a remote's name goes (``ctx fetch
    /srv/x.git``), the way is to name the address, not to add a remote
    called so.
    """
    try:
        check_name(name)
    except InvalidInputError:
        shown = name if name.strip() else "URL"
        return f"Name a remote: `ctx remote add NAME {shown}` adds one."
    return f"`ctx remote add {name} URL` adds it."


def remote_url(store: Store, name: str) -> str:
    """Returns the address of remote ``name``.

    Raises:
        RemoteNotFoundError: the store has no such remote.
    """
    try:
        url = store.repo.get_config().get(_section(name), b"url")
    except KeyError:
        known = ", ".join(r.name for r in list_remotes(store)) or "none"
        raise RemoteNotFoundError(
            f"No remote named {name!r} (known: {known}).",
            hint=_add_hint(name),
        ) from None
    return url.decode("utf-8", "replace")


def remote_namespace(store: Store, name: str) -> str:
    """Returns where remote ``name`` keeps the branches (``""`` or ``"ctx/"``)."""
    return _namespace(store.repo.get_config(), name)


def _namespace(config: ConfigFile, name: str) -> str:
    """Reads the namespace from the remote's fetch refspec.

    A refspec ctx did not write (no ``*``, another destination) means the
    plain ``refs/heads/*``, as before namespaces existed.
    """
    try:
        spec = config.get(_section(name), b"fetch").decode("utf-8", "replace")
    except KeyError:
        return ""
    source, _, destination = spec.lstrip("+").partition(":")
    if destination != f"refs/remotes/{name}/*" or not source.startswith(_HEADS):
        return ""
    namespace = source[len(_HEADS) : -1] if source.endswith("/*") else ""
    return namespace if _NAMESPACE_RE.fullmatch(namespace) else ""


def add_remote(store: Store, name: str, url: str, *, namespace: str = "") -> RemoteInfo:
    """Adds remote ``name`` at ``url``, fetching ``refs/heads/NAMESPACE*`` from it.

    Args:
        store: The store.
        name: The remote's name.
        url: Its address.
        namespace: Where the branches go on the remote (``"ctx/"``: branch
            ``main`` is ``refs/heads/ctx/main`` there); ``""``: the branches
            themselves.

    Raises:
        InvalidInputError: the name, the address or the namespace is not valid.
        ConflictError: a remote of that name exists.
    """
    check_name(name)
    url = check_url(url)
    if namespace and not _NAMESPACE_RE.fullmatch(namespace):
        raise InvalidInputError(
            f"{namespace!r} is not a namespace for branches.",
            hint="Use a folder name that ends with '/' (e.g. ctx/).",
        )
    with store.locked():
        config = store.repo.get_config()
        if config.has_section(_section(name)):
            raise ConflictError(
                f"Remote {name!r} already exists.",
                hint=f"`ctx remote remove {name}` first to change its address.",
            )
        config.set(_section(name), b"url", url.encode())
        config.set(
            _section(name),
            b"fetch",
            f"+{_HEADS}{namespace}*:refs/remotes/{name}/*".encode(),
        )
        if namespace:
            # For stock git (`git --git-dir .ctx/git push origin main`); the
            # transfers read the namespace from the fetch refspec.
            config.set(
                _section(name), b"push", f"{_HEADS}*:{_HEADS}{namespace}*".encode()
            )
        if isinstance(store.repo, Repo):
            config.write_to_path()
    return RemoteInfo(name=name, url=display_url(url), namespace=namespace)


def remove_remote(store: Store, name: str) -> RemoteInfo:
    """Removes remote ``name`` and its fetched branches (not the commits).

    Raises:
        RemoteNotFoundError: the store has no such remote.
    """
    url = remote_url(store, name)
    with store.locked():
        branches = tracking_branches(store, name)
        write_refs(store, {tracking_ref(name, branch): None for branch in branches})
        config = store.repo.get_config()
        del config[_section(name)]
        if isinstance(store.repo, Repo):
            config.write_to_path()
    return RemoteInfo(name=name, url=display_url(url), branches=tuple(branches))
