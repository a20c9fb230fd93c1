"""What every command shares: finding the store, intent options, output."""

from __future__ import annotations

import functools
import getpass
import os
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
import msgspec

from ctx.engine import Intent, InvalidInputError, NotAStoreError

if TYPE_CHECKING:  # the store (dulwich) loads when a command opens it
    from ctx.engine import EditResult, Store

__all__ = [
    "CtxState",
    "branch_option",
    "echo_change",
    "echo_json",
    "intent_options",
    "json_option",
    "make_intent",
    "now",
    "parse_when",
    "pass_state",
    "read_text",
]

F = TypeVar("F", bound=Callable[..., Any])


def now() -> datetime:
    """Returns the current local time, timezone aware (the CLI's clock)."""
    return datetime.now().astimezone()


class CtxState:
    """The store a command works on, found as git finds ``.git``.

    Order: ``--store``, then ``CTX_DIR``, then a ``.ctx`` folder in the
    working directory or one of its parents, then the user's store in the
    platform data folder (created on first write).
    """

    def __init__(self, store_path: str | None) -> None:
        self.explicit = store_path or os.environ.get("CTX_DIR") or None
        self._store: Store | None = None

    def locate(self) -> tuple[Path, bool]:
        """Returns the store folder and whether it is the user's default store."""
        if self.explicit:
            path = Path(self.explicit).expanduser()
            if (path / ".ctx" / "git").is_dir():
                path = path / ".ctx"
            return path.absolute(), False
        here = Path.cwd()
        for folder in (here, *here.parents):
            candidate = folder / ".ctx"
            if (candidate / "git").is_dir():
                return candidate, False
        import platformdirs

        return Path(platformdirs.user_data_dir("ctx", appauthor=False)), True

    def close(self) -> None:
        """Closes the store's open files, if a store was opened."""
        if self._store is not None:
            self._store.close()
            self._store = None

    def store(self, *, write: bool = False) -> Store:
        """Opens the store; the user's store is created on first write.

        Reading a user store that does not exist yet sees an empty store.
        """
        from ctx.engine import Store

        if self._store is None:
            path, default = self.locate()
            if default and not (path / "git").is_dir():
                if write:
                    self._store = Store.init(path, clock=now, exist_ok=True)
                else:
                    self._store = Store.memory(clock=now)
            elif not path.exists():
                raise NotAStoreError(
                    f"No store at {path}.", hint="Run `ctx init` there, or fix --store."
                )
            else:
                self._store = Store.open(path, clock=now)
        return self._store


def json_option(func: F) -> F:
    """Adds ``--json``: print the result as JSON instead of text."""
    return click.option(
        "--json", "as_json", is_flag=True, help="Print the result as JSON."
    )(func)


def branch_option(func: F) -> F:
    """Adds ``--branch`` (default: ``CTX_BRANCH``, then the store's HEAD)."""
    return click.option(
        "--branch",
        "-b",
        envvar="CTX_BRANCH",
        metavar="NAME",
        help="Branch (or, to read, any revision) to work on; default: CTX_BRANCH, "
        "then the current branch.",
    )(func)


def intent_options(default_intent: str) -> Callable[[F], F]:
    """Adds ``--agent --intent --confidence --reason --session``.

    The command receives them as one ``who: Intent`` argument.
    """

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def wrapper(
            *args: Any,
            agent: str | None,
            intent: str,
            confidence: float | None,
            reason: str | None,
            session: str | None,
            **kwargs: Any,
        ) -> Any:
            who = make_intent(agent, intent, confidence, reason, session)
            return func(*args, who=who, **kwargs)

        options = [
            click.option(
                "--agent",
                envvar="CTX_AGENT",
                metavar="NAME",
                help="Who is writing (default: CTX_AGENT, then your user name).",
            ),
            click.option(
                "--intent",
                default=default_intent,
                show_default=True,
                help="Why: observe, decide, refine, checkpoint, import, ...",
            ),
            click.option(
                "--confidence", type=float, metavar="0..1", help="How sure (0 to 1)."
            ),
            click.option("--reason", metavar="TEXT", help="Why, in one line."),
            click.option(
                "--session",
                envvar="CTX_SESSION",
                metavar="ID",
                help="Working session id.",
            ),
        ]
        decorated: Any = wrapper
        for option in reversed(options):
            decorated = option(decorated)
        return decorated  # type: ignore[no-any-return]

    return decorate


def make_intent(
    agent: str | None,
    intent: str,
    confidence: float | None,
    reason: str | None,
    session: str | None,
) -> Intent:
    """Returns the Intent for the intent options given to a command."""
    if not agent:
        try:
            agent = getpass.getuser()
        except (KeyError, OSError):
            agent = "human"
    return Intent(
        agent=agent,
        intent=intent,
        confidence=confidence,
        reason=reason,
        session=session,
    )


def read_text(text: str) -> str:
    """Returns ``text``, or all of stdin when it is ``-`` (strict UTF-8)."""
    if text != "-":
        return text
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInputError("The text on stdin is not valid UTF-8.") from None


def parse_when(value: str | None) -> datetime | None:
    """Parses ``--when`` (ISO 8601; no offset means local time)."""
    if value is None:
        return None
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidInputError(
            f"--when {value!r} is not a date.",
            hint="Use ISO 8601, e.g. 2023-05-08T13:56.",
        ) from None
    return when if when.tzinfo else when.astimezone()


_JSON = msgspec.json.Encoder(order="deterministic")


def echo_json(value: object) -> None:
    """Prints ``value`` as one line of JSON."""
    click.echo(_JSON.encode(value).decode("utf-8"))


def echo_change(result: EditResult, as_json: bool, verb: str) -> None:
    """Reports a write to one memory that may have changed nothing."""
    if as_json:
        echo_json(result)
    elif result.commit is None:
        click.echo(f"{result.id} unchanged: nothing to commit.")
    else:
        click.echo(f"{result.id} {verb} in {result.commit[:10]}.")


def pass_state(func: F) -> F:
    """Passes the command's :class:`CtxState` as the first argument."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        state = click.get_current_context().find_object(CtxState)
        assert state is not None
        return func(state, *args, **kwargs)

    return wrapper  # type: ignore[return-value]
