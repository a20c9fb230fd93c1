"""Memory on the code's own remote: branches under ``ctx/`` beside the code's.

A project store lives inside the code's git work tree. Its branches can
travel through the code repository's own remote, the one the team already
pushes to, under a namespace of their own: memory branch ``main`` is
``refs/heads/ctx/main`` there, ``agent/claude`` is ``refs/heads/ctx/agent/claude``.
A forge shows them as branches ``ctx/main`` and ``ctx/agent/claude`` and can
open a pull request of one into the other. The code's branches are never
fetched, checked, nor moved: every transfer reads and writes only under
``refs/heads/ctx/`` (:mod:`ctx.engine.remotes`, :mod:`ctx.engine.transfer`).

The code repository is found from a folder the way git finds it (a ``.git``
folder, or a ``.git`` file of a linked worktree, in it or above it), and its
remote's address read from its config. A relative path there is relative to
the work tree's top, where git runs.
"""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

from dulwich.errors import NotGitRepository
from dulwich.repo import Repo

from ctx.engine._fetch_plan import CODE_NAMESPACE
from ctx.engine._reaching import NO_ACCESS, Access
from ctx.engine.cloning import CloneResult, clone
from ctx.engine.errors import InvalidInputError, RemoteNotFoundError
from ctx.engine.remotes import RemoteInfo, add_remote, check_url
from ctx.engine.store import Clock, Store
from ctx.engine.work_trees import code_work_tree, project_top

__all__ = [
    "add_code_remote",
    "check_code_store",
    "clone_from_code",
    "code_remote_url",
    "code_remotes",
    "code_repository",
]


def code_repository(start: Path) -> Repo | None:
    """Returns the code repository around ``start``, opened, or ``None``.

    A linked worktree's ``.git`` file is followed to its own git folder (its
    own HEAD) and the common one (the branches). The caller closes it.
    """
    top = code_work_tree(start)
    if top is None:
        return None
    try:
        return Repo(str(top))
    except NotGitRepository:
        return None


def code_remotes(start: Path) -> dict[str, str]:
    """Returns the remotes of the code repository around ``start``, by name.

    Empty when ``start`` is in no git work tree, or its repository has no
    remote.
    """
    repo = code_repository(start)
    if repo is None:
        return {}
    top = Path(repo.path)
    with closing(repo):
        config = repo.get_config()
    out = {}
    for section in config.sections():
        if len(section) == 2 and section[0] == b"remote":
            try:
                url = config.get(section, b"url").decode("utf-8", "replace")
            except KeyError:
                continue
            out[section[1].decode("utf-8", "replace")] = _absolute(url, top)
    return dict(sorted(out.items()))


def _absolute(url: str, top: Path) -> str:
    """Returns ``url`` with a relative path made relative to ``top``.

    A path to a checkout (not bare) becomes its ``.git`` folder, as git
    reads it: the checkout may hold a ctx store of its own, which a plain
    path would reach instead (:func:`ctx.engine.remotes.transport_location`).
    """
    if "://" in url or ":" in url.split("/", 1)[0]:
        return url
    path = Path(url) if Path(url).is_absolute() else (top / url).resolve()
    return str(path / ".git") if (path / ".git").is_dir() else str(path)


def code_remote_url(start: Path, name: str = "origin") -> str:
    """Returns the address of the code's remote ``name``.

    Raises:
        RemoteNotFoundError: ``start`` is in no git work tree, or the code
            repository has no such remote.
    """
    top = code_work_tree(start)
    if top is None:
        raise RemoteNotFoundError(
            f"{start.absolute()} is not inside a git work tree, so there is no "
            "code remote.",
            hint="Run it in a checkout of the code; `ctx remote add NAME URL` "
            "adds a remote of the memory's own.",
        )
    remotes = code_remotes(top)
    if name not in remotes:
        known = ", ".join(remotes) or "none"
        raise RemoteNotFoundError(
            f"The code repository at {top} has no remote named {name!r} "
            f"(it has: {known}).",
            hint=f"`git remote add {name} URL` adds it to the code first.",
        )
    return remotes[name]


def add_code_remote(
    store: Store, name: str, start: Path, url: str | None = None
) -> RemoteInfo:
    """Adds remote ``name``: the code's remote of that name, under ``ctx/``.

    Args:
        store: The store.
        name: The remote's name here, and the code remote's whose address it
            takes.
        start: A folder in the code's work tree.
        url: Another address to use, under the same namespace.

    The store must be the code's own: its folder in the code's work tree
    (that of ``start``, or the main work tree of a linked one). Any other
    (the user store every folder without a ``.ctx/`` shares, or one
    ``CTX_DIR`` names) holds memory of other projects, which the next push
    would publish to the team's repository.

    Raises:
        RemoteNotFoundError: no code remote of that name (``url`` not given).
        InvalidInputError: a name or address that is not valid, or a store
            that is not the code's own.
        ConflictError: a remote of that name exists.
    """
    address = check_url(url) if url is not None else code_remote_url(start, name)
    check_code_store(store.path, start)
    return add_remote(store, name, address, namespace=CODE_NAMESPACE)


def check_code_store(path: Path | None, start: Path) -> None:
    """Refuses a store at ``path`` that is not the code's own (:func:`add_code_remote`).

    The code's own lies in the work tree of ``start``, or in the main work
    tree of a linked one (:func:`~ctx.engine.work_trees.project_top`: not
    the superproject of a submodule, whose remote is another). A path is
    judged as written and as its links resolve: a ``.ctx`` that links to
    another disk is still the code's.

    Raises:
        InvalidInputError: it lies elsewhere, or in memory; or ``start`` is
            in no work tree.
    """
    tops = list(
        dict.fromkeys(t for t in (code_work_tree(start), project_top(start)) if t)
    )
    if not tops:
        raise InvalidInputError(
            f"{start.absolute()} is not inside a git work tree, so there is no "
            "code for memory to travel beside.",
            hint="Run it in a checkout of the code; `ctx remote add NAME URL` "
            "adds a remote of the memory's own.",
        )
    if path is not None:
        where = path.absolute()
        for top in tops:
            if where.is_relative_to(top.absolute()) or where.resolve().is_relative_to(
                top.resolve()
            ):
                return
    raise InvalidInputError(
        f"The store at {path.absolute() if path else '(in memory)'} is not the "
        f"own store of the code at {tops[0]}: its memory would be pushed to the "
        "code's remote.",
        hint="`ctx init` at the top of the code's work tree makes the code's "
        "store; run this there.",
    )


def clone_from_code(
    path: Path,
    start: Path,
    *,
    clock: Clock,
    access: Access = NO_ACCESS,
    remote: str = "origin",
) -> CloneResult:
    """Makes a store at ``path`` from the memory on the code's remote.

    Its ``origin`` is the code's remote ``remote``, under ``ctx/``, so
    ``ctx push`` and ``ctx pull`` keep going there.

    The store must be the code's own, as for :func:`add_code_remote`: a
    store elsewhere (the user store, one ``--store`` names outside the work
    tree) would push other projects' memory to the team's repository.

    Raises:
        RemoteNotFoundError: no such code remote.
        InvalidInputError: ``path`` is not the code's own store.
        ConflictError: a store already exists at ``path``.
        RemoteError: the remote cannot be reached or holds no memory.
    """
    url = code_remote_url(start, remote)
    check_code_store(path, start)
    return clone(path, url, clock=clock, access=access, namespace=CODE_NAMESPACE)
