"""Times as people and files write them: the one parser of every time ctx takes.

``remember --when``, ``edit``, ``recall --at``/``--now``, ``search --now``
and the ``when`` of an import line all read a time with :func:`parse_time`,
so they accept the same forms and refuse a bad one with the same message:

- a date, ``2023-05-08`` (its midnight), or a date and time,
  ``2023-05-08T13:56`` or ``2023-05-08 13:56:30`` (ISO 8601): local time;
- either with an offset, ``2023-05-08T13:56+02:00`` or ``...Z``;
- a phrase the caller can read (``yesterday``, ``last Tuesday``, ``2 weeks
  ago``: the hub's temporal parser, given as ``phrase``).

The engine reads no clock and no environment, so what "local" and "now"
mean comes from the caller: ``local`` gives a time without an offset its
zone, and ``phrase`` resolves a phrase against the caller's now. Without
them such values are refused, with the forms that would have worked.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from ctx.engine.errors import InvalidInputError
from ctx.engine.model import check_time

__all__ = ["TIME_FORMS", "parse_time"]

TIME_FORMS = (
    "a date (2023-05-08), a date and time in local time (2023-05-08T13:56), "
    "one with an offset (2023-05-08T13:56+02:00, 2023-05-08T11:56Z)"
)
"""The absolute forms every time option accepts, as error hints list them."""

_PHRASES = "a phrase such as now, yesterday, last Tuesday or 2 weeks ago"


def parse_time(
    text: str,
    what: str = "The time",
    *,
    local: Callable[[datetime], datetime] | None = None,
    phrase: Callable[[str], datetime | None] | None = None,
) -> datetime:
    """Returns the moment ``text`` names, timezone aware.

    Args:
        text: The value as given.
        what: How the error names it (an option, ``--when``, or ``Line 3:
            `when```).
        local: Gives a time written without an offset its zone (the
            caller's local time); None refuses such a time.
        phrase: Reads a phrase (``yesterday``) as a moment, or returns None
            if it is not one; None accepts no phrases.

    Raises:
        InvalidInputError: ``text`` is none of the forms, has no offset and
            no ``local`` was given, or lies outside the times ctx accepts
            (:func:`~ctx.engine.check_time`). The hint lists the forms.
    """
    forms = TIME_FORMS + (f", or {_PHRASES}" if phrase is not None else "")
    value = text.strip()
    try:
        moment: datetime | None = datetime.fromisoformat(value)
    except ValueError:
        moment = phrase(value) if phrase is not None and value else None
    if moment is None:
        raise InvalidInputError(f"{what} {text!r} is not a time.", hint=f"Use {forms}.")
    check_time(moment, what)
    if moment.tzinfo is not None:
        return moment
    if local is None:
        raise InvalidInputError(
            f"{what} {text!r} has no timezone offset.",
            hint="Add one: 2023-05-08T13:56+02:00 or 2023-05-08T11:56Z.",
        )
    # Checked first: the local offset of a time near year 1 or 9999 may not exist.
    return local(moment)
