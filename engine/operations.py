"""The operation log and undo: every move of every branch, from the reflog.

Each move of a branch (a write, a merge, a new or deleted branch, an undo) is
one line of that branch's reflog, so the reflog is the operation log. An
operation's id is ``BRANCH@N``: the N-th move of BRANCH, counting from 1 at
the oldest. The reflog is only appended to, so an id keeps naming the same
operation however many come after it (unlike git's ``BRANCH@{N}``, which
counts back from the newest).

``undo`` works on one branch's operations. ``undo`` with ``steps=N`` moves the
branch to where it stood N operations ago, counting every move, undos
included (git's ``BRANCH@{N}``); ``to=OP`` moves it to where OP left it. An
undo is itself an operation, so undoing it is a redo, and its log line says
``ctx redo: ...`` with the message of the operation it brings back.
"""

from __future__ import annotations

import re
from datetime import datetime

import msgspec

from ctx.engine.branches import target_branch
from ctx.engine.errors import InvalidInputError, RefNotFoundError
from ctx.engine.ids import CommitId
from ctx.engine.model import Outcome
from ctx.engine.reflogs import ReflogEntry, logged_branches, reflog
from ctx.engine.store import Store
from ctx.engine.wording import plural

__all__ = ["Operation", "UndoResult", "op_log", "undo"]

_UNDO = "ctx undo: "
_REDO = "ctx redo: "
_OP_ID_RE = re.compile(r"^(?P<branch>.+)@(?P<seq>[1-9][0-9]*)$")


class Operation(msgspec.Struct, frozen=True, kw_only=True):
    """One logged move of a branch.

    Attributes:
        id: ``BRANCH@N``, the N-th move of the branch (1 is the oldest).
        branch: The branch that moved.
        old: Where it was (None: the move created it).
        new: Where it went (None: the move deleted it).
        time: When it moved.
        message: What moved it (``ctx <intent>: <summary>``, ``ctx undo: ...``).
        agent: The author of the commit the move added on top of ``old``;
            None when it added none of its own (a new branch, a delete, a
            fast-forward over several commits, most undos).
    """

    id: str
    branch: str
    old: CommitId | None
    new: CommitId | None
    time: datetime
    message: str
    agent: str | None


class UndoResult(Outcome, frozen=True, kw_only=True):
    """What ``undo`` did: which branch moved, from where to where.

    Attributes:
        branch: The branch moved.
        old: Its tip before the undo.
        new: Its tip after.
        undone: The message of the (newest) operation taken back; for a
            redo, the message of the operation brought back.
        redo: Whether the undo took back an undo, redoing what that one undid.
        steps: How many operations of the branch were taken back.
        to: The operation whose result the branch now has (``main@7``);
            None when the log does not reach that far.
    """

    branch: str
    old: CommitId
    new: CommitId
    undone: str
    redo: bool = False
    steps: int = 1
    to: str | None = None


def _operations(store: Store, branch: str) -> list[Operation]:
    entries = reflog(store, branch)
    return [
        Operation(
            id=f"{branch}@{n}",
            branch=branch,
            old=e.old,
            new=e.new,
            time=e.time,
            message=e.message,
            agent=_agent(store, e),
        )
        for n, e in enumerate(entries, start=1)
    ]


def _agent(store: Store, entry: ReflogEntry) -> str | None:
    if entry.new is None:
        return None
    info = store.commit(entry.new)
    if (info.parents[:1] if info.parents else (None,)) != (entry.old,):
        return None
    return info.author


def op_log(store: Store, branch: str | None = None) -> list[Operation]:
    """Returns the operations that moved each branch (or ``branch``), newest first.

    Deleted branches' operations are listed too: the delete's ``old`` is the
    commit that brings the branch back. Moves of two branches within the
    same second (the reflog's resolution) come in reverse order of name.

    Raises:
        RefNotFoundError: ``branch`` is neither a branch nor a logged one.
    """
    names = [branch] if branch else logged_branches(store)
    ops = [op for name in names for op in _operations(store, name)]
    if branch and not ops and branch not in store.branches():
        raise RefNotFoundError(
            f"No branch named {branch!r}, nor a deleted one with a log.",
            hint="`ctx branches` lists the branches; `ctx op log` every move.",
        )
    # The reflog keeps whole seconds. The sort is stable, and each branch's
    # moves are oldest first before reversing, so one branch's moves keep
    # their order; moves of two branches within one second come in reverse
    # order of branch name.
    ops.sort(key=lambda op: op.time)
    return ops[::-1]


def _plain(message: str) -> tuple[str, bool]:
    """Returns what an undo of a move logged ``message`` says, and if it redoes."""
    if message.startswith(_UNDO):
        return message[len(_UNDO) :], True
    if message.startswith(_REDO):
        return message[len(_REDO) :], False
    return message, False


def undo(
    store: Store, branch: str | None = None, *, steps: int = 1, to: str | None = None
) -> UndoResult:
    """Moves a branch back by its last ``steps`` logged moves, or to ``to``.

    The undo is itself a logged move, so a second ``undo`` restores what the
    first one took back (a redo, logged as ``ctx redo: ...``).

    Args:
        store: The store.
        branch: The branch (default: HEAD's).
        steps: How many of the branch's operations to go back.
        to: An operation id (``main@7``) to go back to, instead of ``steps``.

    Raises:
        InvalidInputError: nothing to undo, fewer operations than ``steps``,
            ``to`` is not an older operation of the branch, or the branch is
            already where the undo would put it.
    """
    if to is not None and steps != 1:
        raise InvalidInputError("Give either a number of operations or --to.")
    if steps < 1:
        raise InvalidInputError("Undo at least 1 operation.")
    name = target_branch(store, branch)
    with store.locked():
        tip = store.branch_tip(name)
        ops = _operations(store, name)
        # The newest move that left the branch where it is (a stock git
        # command may have moved it since, without a log line).
        current = max((n for n, op in enumerate(ops) if op.new == tip), default=-1)
        if current < 0 and ops:
            # Logged operations, none of which left the branch where it is:
            # something else moved it (a push into this store, stock git).
            raise InvalidInputError(
                f"Branch {name!r} was moved by something that logs no "
                f"operation (a push from another store, git) since {ops[-1].id}; "
                "ctx undo goes back only over its own operations.",
                hint="`ctx op log` shows them, `ctx log` the commits since.",
            )
        if current < 0 or ops[current].old is None:
            raise InvalidInputError(
                f"Branch {name!r} has no operation to undo.",
                hint="`ctx op log` shows its operations.",
            )
        if to is not None:
            reached = _position(ops, name, to)
            steps = current - reached
            if steps < 1:
                raise InvalidInputError(
                    f"Operation {to} is not older than the branch's tip.",
                    hint="`ctx op log` shows its operations.",
                )
            target = ops[reached].new
        else:
            reached = current - steps
            target = ops[reached + 1].old if reached >= -1 else None
            if target is None:
                creation = max(
                    (n for n in range(current + 1) if ops[n].old is None), default=-1
                )
                left = current - creation
                raise InvalidInputError(
                    f"Branch {name!r} has only {left} "
                    f"operation{'' if left == 1 else 's'} to undo.",
                    hint="`ctx op log` shows its operations.",
                )
        assert target is not None
        op_id = ops[reached].id if reached >= 0 else None
        if target == tip:
            # git would log a move that moves nothing; we say so instead.
            raise InvalidInputError(
                f"Branch {name!r} is already where {op_id or target[:10]} left it.",
                hint="`ctx op log` shows its operations; `ctx undo --to OP` picks one.",
            )
        undone, redo = _plain(ops[current].message)
        if steps == 1:
            message = (_REDO if redo else _UNDO) + undone
        else:
            redo = False
            message = f"{_UNDO}{plural(steps, 'operation')}, to {op_id or target[:10]}"
        store.move_branch(name, tip, target, message)
    return UndoResult(
        branch=name,
        old=tip,
        new=target,
        undone=undone,
        redo=redo,
        steps=steps,
        to=op_id,
    )


def _position(ops: list[Operation], branch: str, op_id: str) -> int:
    match = _OP_ID_RE.fullmatch(op_id)
    if match is None:
        raise InvalidInputError(
            f"{op_id!r} is not an operation id.",
            hint="Operation ids look like main@7; `ctx op log` lists them.",
        )
    if match["branch"] != branch:
        raise InvalidInputError(
            f"Operation {op_id!r} moved branch {match['branch']!r}, not {branch!r}.",
            hint=f"Add `--branch {match['branch']}`.",
        )
    seq = int(match["seq"])
    if seq > len(ops) or ops[seq - 1].new is None:
        raise InvalidInputError(
            f"No operation {op_id!r}.", hint="`ctx op log` lists the operations."
        )
    return seq - 1
