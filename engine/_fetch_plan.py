"""Which of a remote's branches a fetch reads, and what they must hold.

A remote's refs name branches under ``refs/heads/`` (under
``refs/heads/NAMESPACE`` for a remote shared with the code,
:mod:`ctx.engine.code_remotes`); ctx names them without that prefix and
leaves out a name git allows but ctx does not. A fetch walks only the
branches whose tips moved since the last one, and refuses a remote whose
branches hold none of the folders ctx writes.
"""

from __future__ import annotations

from collections.abc import Mapping

from dulwich.objects import ObjectID
from dulwich.refs import Ref

from ctx.engine.errors import InvalidInputError, RemoteError
from ctx.engine.ids import CommitId
from ctx.engine.layout import CONFLICTS, LINKS, MEMORY_AREAS, VIEWS
from ctx.engine.store import check_branch_name

__all__ = [
    "CODE_NAMESPACE",
    "HEADS",
    "check_holds_memory",
    "moving_branches",
    "remote_branches",
    "remote_head",
]

HEADS = b"refs/heads/"
CODE_NAMESPACE = "ctx/"
"""Where memory branches live on the code's remote: ``refs/heads/ctx/*``."""
_CTX_FOLDERS = {name.encode() for name in (*MEMORY_AREAS, LINKS, CONFLICTS, VIEWS)}


def remote_branches(
    refs: Mapping[Ref, ObjectID], namespace: str
) -> dict[str, ObjectID]:
    """Returns the branches among ``refs`` under ``namespace``, by name.

    A branch name git allows but ctx does not (``HEAD``, ``-x``) is left
    out rather than failing the whole fetch.
    """
    prefix = HEADS + namespace.encode()
    out = {}
    for ref, sha in refs.items():
        if ref.startswith(prefix):
            name = ref[len(prefix) :].decode("utf-8", "surrogateescape")
            if _usable(name):
                out[name] = sha
    return out


def moving_branches(
    refs: Mapping[Ref, ObjectID], namespace: str, known: Mapping[str, CommitId]
) -> dict[str, ObjectID]:
    """Returns the remote's branches whose tips differ from ``known``."""
    return {
        name: sha
        for name, sha in remote_branches(refs, namespace).items()
        if known.get(name) != CommitId(sha.decode())
    }


def remote_head(
    symrefs: Mapping[Ref, Ref], namespace: str, heads: Mapping[str, CommitId]
) -> str | None:
    """Returns the remote's default branch, when it says and has it."""
    target = symrefs.get(Ref(b"HEAD"))
    prefix = HEADS + namespace.encode()
    head = None
    if target and target.startswith(prefix):
        head = target[len(prefix) :].decode("utf-8", "surrogateescape")
    return head if head in heads else None


def check_holds_memory(
    shown: str,
    namespace: str,
    tops: Mapping[str, frozenset[bytes]],
    refs: Mapping[Ref, ObjectID] | None = None,
) -> None:
    """Refuses a remote one of whose moved branches holds nothing ctx writes.

    ``tops``: the names at the top of each moved branch's tree. An empty
    tree is a store with nothing in it yet. ``refs``: the remote's refs; a
    code repository with memory under :data:`CODE_NAMESPACE` is named so in
    the hint.

    Raises:
        RemoteError: the remote at ``shown`` is not a ctx store.
    """
    for branch, names in sorted(tops.items()):
        if names and not names & _CTX_FOLDERS:
            if namespace == CODE_NAMESPACE:
                # The code's own remote: a code branch named under ctx/.
                raise RemoteError(
                    f"Branch {namespace + branch!r} of {shown} holds code, not "
                    f"memories, though its name puts it among the memory's "
                    f"branches ({namespace}*).",
                    hint="Push it to the code's remote under another name and "
                    f"delete it there (`git push origin --delete "
                    f"{namespace + branch}`); nothing was changed here.",
                )
            carries = not namespace and any(
                ref.startswith(HEADS + CODE_NAMESPACE.encode()) for ref in refs or ()
            )
            raise RemoteError(
                f"{shown} is not a ctx store: branch {namespace + branch!r} "
                "holds no memories.",
                hint="It is code that carries memory under ctx/: `ctx clone "
                "--from-code` in a checkout of it gets that, and a remote added "
                "with `--with-code` reads it."
                if carries
                else "Give the address of a store that `ctx push` wrote to.",
            )


def _usable(branch: str) -> bool:
    try:
        check_branch_name(branch)
    except InvalidInputError:
        return False
    return True
