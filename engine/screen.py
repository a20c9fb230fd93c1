"""What a store asks before it writes: the screen the layer above gives it.

The engine finds no secrets itself (it imports no detector). A store opened
with a :class:`Screen` (the hub's workspace gives every store one, see
:mod:`ctx.hub.screen`) shows it each write before any object is written:

- :meth:`Screen.check` sees a write's new contents, its summary and its
  intent (the ``Ctx-Reason`` trailer is text too), and returns them as they
  are to be written (the same, or redacted) or raises to refuse the write,
  which then changes nothing. :meth:`~ctx.engine.Store.write` asks it on
  every attempt, and :meth:`~ctx.engine.Store.detached_commit` once.
- :meth:`Screen.scan` sees what a merge (or a pull, which merges) brings
  into a branch, and returns what it found there; the merge goes ahead and
  reports them in :attr:`~ctx.engine.MergeResult.secrets`, since refusing
  another writer's history would block a team.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

import msgspec

from ctx.engine.ids import MemoryId
from ctx.engine.model import Intent
from ctx.engine.snapshot import Snapshot

__all__ = ["PendingWrite", "Screen", "SecretFinding"]


class PendingWrite(msgspec.Struct, frozen=True, kw_only=True):
    """A write as a store is about to make it.

    Attributes:
        summary: The commit message's first line.
        intent: Its trailers.
        changes: The new content of each changed path (``None`` deletes).
    """

    summary: str
    intent: Intent
    changes: dict[str, bytes | None]


class SecretFinding(msgspec.Struct, frozen=True, kw_only=True):
    """A secret found in text that reached, or would reach, a branch.

    Attributes:
        path: The file that holds it.
        memory: The memory's id, when the file is a memory.
        kind: What it is (``aws-access-key``, ``private-key``, ...).
        field: Where in the file: ``body``, ``title``, ``tags``, ``meta``
            (its names), ``meta.NAME``, ``reason``... (``summary``,
            ``reason``, ``agent`` and ``session`` for a commit's message).
        line: The line of that field it is on, from 1.
        new: The file is not on the branch yet (a memory being written):
            its id names nothing a reader could look up.
    """

    path: str
    memory: MemoryId | None
    kind: str
    field: str
    line: int
    new: bool = False

    def place(self) -> str:
        """Returns where it is, for a message: ``memory ID's body, line 3``."""
        owner = f"memory {self.memory}'s" if self.memory else f"{self.path}'s"
        if self.memory and self.new:
            owner = "the new memory's"
        if self.field in ("summary", "reason", "agent", "session") and not self.path:
            owner = "the commit's"
        return f"{owner} {self.field}, line {self.line}"


class Screen(Protocol):
    """What a store shows each write and each merge before it is made."""

    def check(self, before: Snapshot, pending: PendingWrite) -> PendingWrite:
        """Returns ``pending`` as it is to be written, or raises to refuse it.

        ``before`` is the tip the write builds on: text already there is
        not new.
        """
        ...  # pragma: no cover

    def scan(
        self, before: Snapshot, changes: Mapping[str, bytes | None]
    ) -> tuple[SecretFinding, ...]:
        """Returns the secrets in the new text of ``changes`` (a merge's)."""
        ...  # pragma: no cover
