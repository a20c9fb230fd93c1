"""What agents cited of what they were shown: evidence for the reference tier.

A memory the hooks gave a session and that the agent's answer then names
(its id, as the block showed it: `` `01J...` ``) was used, by the agent's
own words (an id inside a ``<ctx:*>`` command's tag does not count). The
stop hook calls :func:`note_cited` with the session's shown memories and
the answer; the sessions that cited each memory are kept in
``<store>/private/dream/cited.json``, so that the record outlives the
session (a session's hook state is removed when it ends). The file is
private state: never committed, replaced whole under a ``flock``, bounded
to the :data:`MAX_MEMORIES` memories cited last, each with at most
:data:`MAX_SESSIONS` sessions (enough to count up to the reference tier's
threshold). Losing it loses only evidence.

A Dream cycle counts, for each memory, the recalls agents gave feedback on
(``ctx feedback``) and the sessions that cited it (:func:`cited_counts`);
at :attr:`~ctx.hub.dream.rules.Thresholds.reference_uses` the memory is
proposed for ``tier:reference``. Being shown alone is not counted: a
memory near many questions is shown often whether or not it answers them.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

import msgspec

from ctx.hub.state import PRIVATE_FOLDER, private_folder, write_atomically

__all__ = [
    "CITED_FILE",
    "MAX_MEMORIES",
    "MAX_SESSIONS",
    "cited_counts",
    "cited_in",
    "note_cited",
]

CITED_FILE = "cited.json"
"""The record's file, in the store's private ``dream`` folder."""
MAX_MEMORIES = 5000
"""The most memories kept: those cited last."""
MAX_SESSIONS = 10
"""The most sessions kept for one memory: its latest."""
_FOLDER = "dream"
_ID_LENGTH = 26
_COMMAND_TAG_RE = re.compile(r"</?ctx:[^>]*>")


def cited_in(shown: Iterable[str], answer: str) -> list[str]:
    """Returns the memories of ``shown`` whose id ``answer`` names, in order.

    An id in a ``<ctx:*>`` command's tag is not a citation: superseding a
    memory (``<ctx:supersede old="ID" .../>``) is no sign of its use. The
    text between a command's tags counts.
    """
    said = _COMMAND_TAG_RE.sub(" ", answer)
    return [mid for mid in shown if len(mid) == _ID_LENGTH and mid in said]


def note_cited(
    store_path: Path, session: str, shown: Iterable[str], answer: str
) -> int:
    """Records the memories of ``shown`` that ``answer`` cites; returns how many.

    A memory cited again in one session counts once.

    Raises:
        StoreError: The private folder is not the user's.
        OSError: The record cannot be written.
    """
    found = cited_in(shown, answer)
    if not found or not session:
        return 0
    with _locked(store_path) as path:
        record = _read(path)
        for mid in found:
            sessions = [s for s in record.pop(mid, []) if s != session]
            record[mid] = [*sessions, session][-MAX_SESSIONS:]
        kept = dict(list(record.items())[-MAX_MEMORIES:])
        write_atomically(path, msgspec.json.encode(kept), durable=False)
    return len(found)


def cited_counts(store_path: Path) -> Counter[str]:
    """Returns in how many sessions agents cited each memory they were shown."""
    path = store_path / PRIVATE_FOLDER / _FOLDER / CITED_FILE
    return Counter({mid: len(sessions) for mid, sessions in _read(path).items()})


def _read(path: Path) -> dict[str, list[str]]:
    """Returns the record (memory -> sessions, oldest first); empty if unreadable."""
    try:
        return msgspec.json.decode(path.read_bytes(), type=dict[str, list[str]])
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return {}


@contextlib.contextmanager
def _locked(store_path: Path) -> Iterator[Path]:
    """Holds the record's lock; yields its path."""
    folder = private_folder(store_path) / _FOLDER
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder, 0o700)
    fd = os.open(folder / "cited.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield folder / CITED_FILE
    finally:
        os.close(fd)
