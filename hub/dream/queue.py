"""Which memories Dream examines next: back-off and claims, in private state.

Per branch, ``<store>/private/dream/<branch>.json`` holds, for each memory
examined, the blob it had, how many times in a row it gave nothing, and when
it is due again; ``<branch>.claims.json`` holds the memories a worker has
taken and not finished. Both are read and written under one ``flock`` on
``<branch>.lock``, and replaced whole (:func:`~ctx.hub.state.write_atomically`).
They are never committed: losing them only means memories are examined again.

- A memory never seen, or whose blob changed, is due now.
- One examined with no result waits :data:`BASE_WAIT` times two to the number
  of empty examinations in a row, at most :data:`MAX_WAIT`; one that gave a
  proposal waits :data:`BASE_WAIT`.
- A worker claims the memories it examines; another worker skips them. A
  claim ends when the worker finishes, when its process is gone, or after
  :data:`CLAIM_TTL`.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path

import msgspec

from ctx.hub.state import private_folder, process_alive, write_atomically

__all__ = [
    "BASE_WAIT",
    "CLAIM_TTL",
    "MAX_WAIT",
    "CycleSummary",
    "MemoryState",
    "QueueStatus",
    "Worker",
    "queue_status",
]

BASE_WAIT = 3600.0
"""Seconds a memory waits after it was examined (doubling while it gives nothing)."""
MAX_WAIT = 30 * 86400.0
"""The longest a memory waits: a month."""
CLAIM_TTL = 1800.0
"""Seconds after which a claim ends even if its worker seems alive."""
_FOLDER = "dream"


class MemoryState(msgspec.Struct, array_like=True):
    """One memory's back-off: the blob examined, empty runs, when due."""

    blob: str
    misses: int
    due: float


class Claim(msgspec.Struct, array_like=True):
    """A memory taken by a worker (``pid:token``) until ``until``."""

    worker: str
    until: float


class CycleSummary(msgspec.Struct, frozen=True, kw_only=True):
    """The last cycle of a branch, as ``ctx dream status`` shows it.

    Attributes:
        finished_at: When it ended.
        examined: Memories examined.
        proposed: Proposals written.
        seconds: How long it took.
        judge: What the judge did ("off", "used", or why it was left out).
    """

    finished_at: datetime
    examined: int
    proposed: int
    seconds: float
    judge: str = "off"


class _State(msgspec.Struct, kw_only=True):
    version: int = 1
    memories: dict[str, MemoryState] = {}
    last_cycle: CycleSummary | None = None


class QueueStatus(msgspec.Struct, frozen=True, kw_only=True):
    """What waits to be examined on a branch.

    Attributes:
        live: Memories on the branch.
        due: Memories due now (new, changed, or their wait is over).
        waiting: Memories backing off.
        claimed: Memories other workers hold now.
        next_due: When the next waiting memory is due (``None``: none waits).
        last_cycle: The last cycle, if any ran.
    """

    live: int
    due: int
    waiting: int
    claimed: int
    next_due: datetime | None
    last_cycle: CycleSummary | None


def _file_stem(branch: str) -> str:
    return branch.replace("/", "%2F")


def _alive(worker: str) -> bool:
    return process_alive(int(worker.split(":", 1)[0]))


class Worker:
    """One worker's view of a branch's queue (one per cycle runner).

    Args:
        store_path: The store folder.
        branch: The branch Dream reads.
    """

    def __init__(self, store_path: Path, branch: str) -> None:
        folder = private_folder(store_path) / _FOLDER
        with contextlib.suppress(FileExistsError):
            os.mkdir(folder, 0o700)
        stem = _file_stem(branch)
        self._state_path = folder / f"{stem}.json"
        self._claims_path = folder / f"{stem}.claims.json"
        self._lock_path = folder / f"{stem}.lock"
        self.name = f"{os.getpid()}:{secrets.token_hex(4)}"

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _read_state(self) -> _State:
        try:
            return msgspec.json.decode(self._state_path.read_bytes(), type=_State)
        except FileNotFoundError:
            return _State()
        except (msgspec.DecodeError, msgspec.ValidationError):
            return _State()  # private and derived: examining again is the cost

    def _read_claims(self, now: float) -> dict[str, Claim]:
        try:
            data = msgspec.json.decode(
                self._claims_path.read_bytes(), type=dict[str, Claim]
            )
        except (FileNotFoundError, msgspec.DecodeError, msgspec.ValidationError):
            return {}
        alive: dict[str, bool] = {}
        out = {}
        for mid, claim in data.items():
            if claim.until <= now:
                continue
            if claim.worker not in alive:
                alive[claim.worker] = _alive(claim.worker)
            if alive[claim.worker]:
                out[mid] = claim
        return out

    def _write(self, path: Path, value: object) -> None:
        # Not synced: a lost state only costs examining memories again.
        write_atomically(path, msgspec.json.encode(value), durable=False)

    def claim(
        self, live: Mapping[str, str], budget: int, now: datetime
    ) -> list[tuple[str, bool]]:
        """Takes up to ``budget`` due memories of ``live`` (id to blob).

        Returns:
            (memory id, whether it is new or changed), the most overdue first.
        """
        stamp = now.timestamp()
        with self._locked():
            state = self._read_state()
            claims = self._read_claims(stamp)
            ready: list[tuple[float, str, bool]] = []
            for mid, blob in live.items():
                known = state.memories.get(mid)
                if mid in claims:
                    continue
                if known is None or known.blob != blob:
                    ready.append((0.0, mid, True))
                elif known.due <= stamp:
                    ready.append((known.due, mid, False))
            ready.sort()
            taken = ready[:budget]
            until = stamp + CLAIM_TTL
            for _, mid, _fresh in taken:
                claims[mid] = Claim(worker=self.name, until=until)
            self._write(self._claims_path, claims)
        return [(mid, fresh) for _, mid, fresh in taken]

    def finish(
        self,
        results: Mapping[str, tuple[str, bool]],
        now: datetime,
        summary: CycleSummary | None = None,
    ) -> None:
        """Records what examining each memory gave, and ends their claims.

        Args:
            results: For each memory examined, its blob and whether it led
                to a proposal.
            now: The time.
            summary: The cycle's summary, when it is over.
        """
        stamp = now.timestamp()
        with self._locked():
            state = self._read_state()
            for mid, (blob, found) in results.items():
                old = state.memories.get(mid)
                if found:
                    misses, wait = 0, BASE_WAIT
                else:
                    same = old is not None and old.blob == blob
                    misses = (old.misses if old is not None and same else 0) + 1
                    wait = min(BASE_WAIT * 2 ** (misses - 1), MAX_WAIT)
                state.memories[mid] = MemoryState(
                    blob=blob, misses=misses, due=stamp + wait
                )
            if summary is not None:
                state.last_cycle = summary
            self._write(self._state_path, state)
            claims = self._read_claims(stamp)
            for mid in results:
                if (held := claims.get(mid)) and held.worker == self.name:
                    del claims[mid]
            if summary is not None:
                claims = {m: c for m, c in claims.items() if c.worker != self.name}
            self._write(self._claims_path, claims)

    def forget_gone(self, live: Mapping[str, str]) -> None:
        """Drops the back-off of memories no longer on the branch."""
        with self._locked():
            state = self._read_state()
            gone = [mid for mid in state.memories if mid not in live]
            if gone:
                for mid in gone:
                    del state.memories[mid]
                self._write(self._state_path, state)

    def status(self, live: Mapping[str, str], now: datetime) -> QueueStatus:
        """Returns what waits on the branch, without claiming anything."""
        stamp = now.timestamp()
        state = self._read_state()
        claims = self._read_claims(stamp)
        due = waiting = 0
        next_due: float | None = None
        for mid, blob in live.items():
            known = state.memories.get(mid)
            if mid in claims:
                continue
            if known is None or known.blob != blob or known.due <= stamp:
                due += 1
            else:
                waiting += 1
                next_due = known.due if next_due is None else min(next_due, known.due)
        return QueueStatus(
            live=len(live),
            due=due,
            waiting=waiting,
            claimed=sum(1 for mid in claims if mid in live),
            next_due=None
            if next_due is None
            else datetime.fromtimestamp(next_due, now.tzinfo),
            last_cycle=state.last_cycle,
        )


def queue_status(
    store_path: Path, branch: str, live: Mapping[str, str], now: datetime
) -> QueueStatus:
    """Returns what waits to be examined on ``branch``."""
    return Worker(store_path, branch).status(live, now)
