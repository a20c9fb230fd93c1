"""A caller's recall weights and budget: what learning left, with history.

Every learning step (:mod:`ctx.hub.retrieval.learning`), reset and undo is
kept in ``<store>/private/recall-weights.json``, the store's private state:
per caller (agent) its history, newest last; the last entry is in force and
:func:`tuned` applies it to the store's ``[recall]`` config. The file is
replaced whole under a lock. Light to import: a running hub's client reads
these structs without loading the indexes.

Bounds (:func:`bounds`): each learned weight stays within a quarter and four
times its configured value; the budget within a quarter (at least 256 tokens)
and four times the configured one.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import msgspec

from ctx.engine import InvalidInputError, Outcome
from ctx.hub.config import RecallConfig
from ctx.hub.retrieval.feedback import RecallLog
from ctx.hub.state import private_folder, write_atomically

__all__ = [
    "DEFAULT_CALLER",
    "LEARNED",
    "LearnReport",
    "Tuning",
    "WeightsReport",
    "bounds",
    "record_tuning",
    "reset_tuning",
    "tuned",
    "tuning_of",
    "undo_tuning",
    "weights_report",
]

LEARNED = ("bm25", "vector", "fuzzy")
"""The fusion weights learning moves (the time channel uses ``bm25``'s)."""

DEFAULT_CALLER = "default"
"""The caller of a recall that names no agent."""

WEIGHTS_FILE = "recall-weights.json"
_MIN_BUDGET = 256


class Tuning(msgspec.Struct, frozen=True, kw_only=True):
    """A caller's weights and budget as one step, reset or the config left them.

    Attributes:
        at: When.
        reason: ``learned``, ``reset`` or ``config`` (no step yet).
        bm25: Weight of the BM25 channel (and of the time channel).
        vector: Weight of the vector channel.
        fuzzy: Weight of the fuzzy channel.
        budget: Tokens a recall returns when it is given no budget.
        feedback: How many feedback lines the step learned from.
        mistakes: The ranking mistakes it found (a used hit at or below an
            unused one).
        learned_until: The moment of the last feedback learned so far.
        mrr_before: The used hits' mean reciprocal rank over the step's
            recalls ranked again with the weights before it.
        mrr_after: The same with the weights it kept (equal when it kept
            the weights before: no candidate step did better).
    """

    at: datetime
    reason: str
    bm25: float
    vector: float
    fuzzy: float
    budget: int
    feedback: int = 0
    mistakes: int = 0
    learned_until: datetime | None = None
    mrr_before: float | None = None
    mrr_after: float | None = None


class _History(msgspec.Struct):
    version: int = 1
    agents: dict[str, list[Tuning]] = msgspec.field(default_factory=dict)


class LearnReport(Outcome, frozen=True, kw_only=True):
    """What ``ctx recall learn`` did for one caller: before and after."""

    agent: str
    before: Tuning
    after: Tuning


class WeightsReport(Outcome, frozen=True, kw_only=True):
    """A caller's weights in force, their bounds and their history."""

    agent: str
    current: Tuning
    history: tuple[Tuning, ...]
    bounds: dict[str, tuple[float, float]]


def _path(store_path: Path) -> Path:
    return private_folder(store_path) / WEIGHTS_FILE


def _read(store_path: Path) -> _History:
    try:
        data = (store_path / "private" / WEIGHTS_FILE).read_bytes()
    except FileNotFoundError:
        return _History()
    return msgspec.json.decode(data, type=_History)


@contextmanager
def _editing(store_path: Path) -> Iterator[_History]:
    """Yields the history to change, under a lock; writes it back whole."""
    lock = private_folder(store_path) / f"{WEIGHTS_FILE}.lock"
    fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        history = _read(store_path)
        yield history
        write_atomically(_path(store_path), msgspec.json.encode(history))
    finally:
        os.close(fd)


def _configured(config: RecallConfig, at: datetime, reason: str) -> Tuning:
    return Tuning(
        at=at,
        reason=reason,
        bm25=config.bm25,
        vector=config.vector,
        fuzzy=config.fuzzy,
        budget=config.budget,
    )


def bounds(config: RecallConfig) -> dict[str, tuple[float, float]]:
    """Returns the bounds of each learned value, from the configured ones."""
    found = {name: getattr(config, name) for name in LEARNED}
    out = {name: (value / 4, value * 4) for name, value in found.items()}
    out["budget"] = (max(_MIN_BUDGET, config.budget / 4), config.budget * 4.0)
    return out


def tuning_of(store_path: Path, agent: str) -> Tuning | None:
    """Returns the tuning in force for ``agent``, or None (the config's)."""
    entries = _read(store_path).agents.get(agent)
    return entries[-1] if entries else None


def tuned(config: RecallConfig, tuning: Tuning | None) -> RecallConfig:
    """Returns ``config`` with a caller's learned weights and budget."""
    if tuning is None:
        return config
    return msgspec.structs.replace(
        config,
        bm25=tuning.bm25,
        vector=tuning.vector,
        fuzzy=tuning.fuzzy,
        budget=tuning.budget,
    )


def configured(config: RecallConfig, at: datetime, reason: str) -> Tuning:
    """Returns the config's own values as a tuning entry."""
    return _configured(config, at, reason)


def record_tuning(store_path: Path, agent: str, entry: Tuning) -> None:
    """Appends ``entry`` to ``agent``'s history: it is now in force."""
    with _editing(store_path) as history:
        history.agents.setdefault(agent, []).append(entry)


def _latest_feedback(log: RecallLog, agent: str) -> datetime | None:
    moments = [
        f.at
        for f in log.feedback
        if f.recall in log.recalls and log.recalls[f.recall].agent == agent
    ]
    return max(moments, default=None)


def reset_tuning(
    store_path: Path, agent: str, config: RecallConfig, log: RecallLog, now: datetime
) -> None:
    """Puts ``agent`` back on the configured values (an entry of its own).

    Feedback given so far stays learned-from: a reset is not undone by the
    next step relearning the same feedback.
    """
    entry = msgspec.structs.replace(
        _configured(config, now, "reset"), learned_until=_latest_feedback(log, agent)
    )
    with _editing(store_path) as history:
        history.agents.setdefault(agent, []).append(entry)


def undo_tuning(store_path: Path, agent: str) -> None:
    """Drops ``agent``'s last step or reset.

    Raises:
        InvalidInputError: There is nothing to undo.
    """
    with _editing(store_path) as history:
        entries = history.agents.get(agent)
        if not entries:
            raise InvalidInputError(
                f"{agent} has no learned weights to undo.",
                hint="`ctx recall weights` shows the history.",
            )
        entries.pop()


def weights_report(
    store_path: Path, agent: str, config: RecallConfig, now: datetime
) -> WeightsReport:
    """Returns ``agent``'s weights in force, their bounds and history."""
    history = tuple(_read(store_path).agents.get(agent, ()))
    current = history[-1] if history else _configured(config, now, "config")
    return WeightsReport(
        agent=agent, current=current, history=history, bounds=bounds(config)
    )
