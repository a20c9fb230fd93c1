"""What a time option names: the moment every door reads from a user's text.

The command line, the MCP server, the HTTP API and imports all read their
time options here (``--when``, ``--now``, ``--at``, an import line's
``when``): the engine's forms (:func:`~ctx.engine.parse_time`), plus the
phrases recall understands (:func:`~ctx.hub.retrieval.temporal.parse.moment_of`).
``--at`` may name a revision instead, which :func:`moment_or_revision`
tells apart.

Light to import: the phrase parser loads only when a text is read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from datetime import datetime

from ctx.engine import parse_time

__all__ = ["moment_or_revision", "parse_moment"]

_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}")


def parse_moment(
    value: str, what: str = "The time", *, now: datetime | None = None
) -> datetime:
    """Returns the moment ``value`` names: what every time option accepts.

    The forms are the engine's (:func:`~ctx.engine.parse_time`: ISO 8601
    dates and times, local time when without an offset), plus the phrases
    recall understands, read as the start of the span they name against
    ``now`` (:func:`~ctx.hub.retrieval.temporal.parse.moment_of`): ``yesterday`` is
    yesterday at 00:00, ``last Tuesday`` that day at 00:00, ``2 weeks ago``
    the Monday of that week; ``now`` is ``now``.

    Args:
        value: The text, e.g. ``2023-05-08``, ``2023-05-08T13:56+02:00`` or
            ``yesterday``.
        what: How the error names it (an option, e.g. ``--now``).
        now: What phrases count from (default: the local clock).

    Raises:
        InvalidInputError: It is none of those forms (the hint lists them),
            or lies outside the times ctx accepts
            (:func:`~ctx.engine.check_time`).
    """
    from ctx.hub.retrieval.temporal.parse import moment_of

    def phrase(text: str) -> datetime | None:
        return moment_of(text, now or _local(datetime.now()))

    return parse_time(value, what, local=_local, phrase=phrase)


def _local(moment: datetime) -> datetime:
    return moment.astimezone()


def moment_or_revision(
    at: str | datetime | None,
    now: datetime,
    branches: Callable[[], Collection[str]],
) -> str | datetime | None:
    """Returns ``--at`` as a moment when it names one, else as a revision.

    A text that starts with a date is a moment (or an error); so is one that
    is wholly a time phrase (``yesterday``, ``2 weeks ago``), unless a branch
    has that name (only one-word phrases can be one).

    Args:
        at: The option's value, or a moment already.
        now: What phrases count from.
        branches: Returns the store's branch names (asked only for a phrase).

    Raises:
        InvalidInputError: ``at`` starts like a date but is not one.
    """
    if not isinstance(at, str):
        return at
    if _DATE_RE.match(at):
        return parse_moment(at, "--at", now=now)
    from ctx.hub.retrieval.temporal.parse import moment_of

    moment = moment_of(at, now)
    if moment is None or at in branches():
        return at
    return moment
