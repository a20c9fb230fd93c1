"""What every command shares: its workspace, intent options, output."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

import click
import msgspec

from ctx.engine import InvalidInputError
from ctx.porcelain.output import echo

if TYPE_CHECKING:  # the store (dulwich) loads when a command opens it
    from ctx.engine import EditResult, Intent, Store
    from ctx.hub import Workspace

__all__ = [
    "CtxState",
    "abbrev_option",
    "add_store_option",
    "allow_secret_option",
    "branch_name_option",
    "branch_option",
    "echo_change",
    "echo_json",
    "id_form",
    "intent_options",
    "json_option",
    "moment_text",
    "now",
    "parse_when",
    "pass_state",
    "read_text",
    "signed",
]

F = TypeVar("F", bound=Callable[..., Any])
Request = TypeVar("Request")
Answer = TypeVar("Answer")


def now() -> datetime:
    """Returns the current local time, timezone aware (the CLI's clock)."""
    from ctx.hub import local_now

    return local_now()


class CtxState:
    """What a command works on: the workspace, found once it is first asked.

    ``--store`` may come after the command name (``ctx ls --store PATH``), so
    the workspace is found when a command first needs it, not when the group
    starts. Finding it is the hub's (:meth:`Workspace.find`).
    """

    def __init__(self, store_path: str | None) -> None:
        self.explicit = store_path
        self._workspace: Workspace | None = None
        self.as_json = False
        self.allow_secrets = False
        self._used: str | None = None

    def used(self, verb: str) -> None:
        """Notes what the command did with its store (``wrote to``, ...)."""
        self._used = self._used or verb

    def user_store_notice(self) -> str | None:
        """Returns the stderr line that names the user store, if it is due.

        It is due after a write or a recall in the user store, as text: a
        ``--json`` result names its store itself.
        """
        ws = self._workspace
        if ws is None or not ws.user_store or self._used is None or self.as_json:
            return None
        home, path = os.path.expanduser("~"), str(ws.path)
        shown = "~" + path[len(home) :] if path.startswith(home + "/") else path
        return (
            f"Notice: {self._used} the user store {shown} (no .ctx/ here or "
            "above; `ctx init` makes one)."
        )

    def opened(self) -> Workspace | None:
        """Returns the workspace if the command found one, else None."""
        return self._workspace

    def workspace(self) -> Workspace:
        """Returns the workspace (``--store``, ``CTX_DIR``, ``.ctx/`` above, ...)."""
        if self._workspace is None:
            from ctx.hub import Workspace

            self._workspace = Workspace.find(self.explicit, clock=now)
            self._workspace.allow_secrets = self.allow_secrets
        return self._workspace

    def call(
        self,
        function: Callable[[Workspace, Any, Request], Answer],
        request: Request,
        who: Intent | None = None,
    ) -> Answer:
        """Makes one typed call (:mod:`ctx.hub.calls`) as the store's owner.

        The caller is the command line (``command_line``): no key limits
        it, and it works on the branch it names or HEAD. A write passes
        ``who``, whose session it is made in; its request carries the
        rest of the intent (:func:`signed`).
        """
        from ctx.hub import Caller

        if who is not None:
            self.used("wrote to")
        session = who.session if who is not None else None
        return function(
            self.workspace(), Caller(session=session, command_line=True), request
        )

    def close(self) -> None:
        """Closes the store's open files, if a store was opened."""
        if self._workspace is not None:
            self._workspace.close()

    def store(self, *, write: bool = False) -> Store:
        """Opens the store; the user's store is created on first write."""
        if write:
            self.used("wrote to")
        return self.workspace().store(write=write)


def _note_json(ctx: click.Context, _: click.Parameter, value: bool) -> bool:
    state = ctx.find_object(CtxState)
    if value and state is not None:
        state.as_json = True
    return value


def _set_store(ctx: click.Context, _: click.Parameter, value: str | None) -> None:
    if value:
        state = ctx.find_object(CtxState)
        assert state is not None
        state.explicit = value


def add_store_option(command: click.Command) -> None:
    """Adds ``--store`` to a command (and its subcommands), as after ``ctx``.

    ``--store`` is accepted after the command too: ``ctx ls --store PATH``.
    A command with a ``--store`` of its own keeps it (``ctx serve`` takes
    several).
    """
    if not any("--store" in getattr(p, "opts", ()) for p in command.params):
        command.params.append(
            click.Option(
                ["--store"],
                metavar="PATH",
                expose_value=False,
                is_eager=True,
                callback=_set_store,
                help="The store folder (as `ctx --store PATH ...`).",
            )
        )
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            add_store_option(sub)


def json_option(func: F) -> F:
    """Adds ``--json``: print the result as JSON instead of text."""
    return click.option(
        "--json",
        "as_json",
        is_flag=True,
        callback=_note_json,
        help="Print the result as JSON.",
    )(func)


def abbrev_option(func: F) -> F:
    """Adds ``--abbrev``: print ids by their shortest unique end."""
    return click.option(
        "--abbrev",
        is_flag=True,
        help="Print ids by their shortest unique end (8 characters or more); "
        "--json keeps whole ids.",
    )(func)


def id_form(
    store: Store | None, ids: Iterable[str], rev: str | None
) -> Callable[[str], str]:
    """Returns how a listing prints an id: whole, or its shortest unique end.

    Args:
        store: The store, for ``--abbrev``; None prints ids whole.
        ids: The ids the listing prints.
        rev: The revision whose memories a short end must not be shared with.
    """
    if store is None:
        return str
    from ctx.engine import abbreviate

    short = abbreviate(store, ids, rev)
    return lambda mid: short.get(mid, mid)


def _branch(what: str) -> Callable[[F], F]:
    return click.option(
        "--branch",
        "-b",
        envvar="CTX_BRANCH",
        metavar="NAME",
        help=f"{what}; default: CTX_BRANCH, then the current branch.",
    )


def branch_option(func: F) -> F:
    """Adds ``--branch`` (default: ``CTX_BRANCH``, then the store's HEAD)."""
    return _branch("Branch (or, to read, any revision) to work on")(func)


def branch_name_option(func: F) -> F:
    """Adds ``--branch`` for a command that reads a branch's tip only."""
    return _branch("Branch to read (a name, not a revision)")(func)


def _allow_secret(ctx: click.Context, _: click.Parameter, value: bool) -> None:
    state = ctx.find_object(CtxState)
    if value and state is not None:
        state.allow_secrets = True


def allow_secret_option(func: F) -> F:
    """Adds ``--allow-secret``: store text that holds a secret as given."""
    return click.option(
        "--allow-secret",
        is_flag=True,
        expose_value=False,
        callback=_allow_secret,
        help="Store text that holds a secret (a key, token, password) as "
        "given, instead of refusing it (see [secrets] mode in config.toml).",
    )(func)


def intent_options(
    default_intent: str, *, reason_required: bool = False, secrets: bool = True
) -> Callable[[F], F]:
    """Adds ``--agent --intent --confidence --reason --session``.

    The command receives them as one ``who: Intent`` argument;
    ``reason_required`` makes ``--reason`` a required option. ``secrets``
    adds ``--allow-secret`` (:func:`allow_secret_option`) for a command that
    writes new text.
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
            state = click.get_current_context().find_object(CtxState)
            assert state is not None
            who = state.workspace().intent(
                intent,
                agent=agent,
                confidence=confidence,
                reason=reason,
                session=session,
            )
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
            click.option(
                "--reason",
                metavar="TEXT",
                required=reason_required,
                help="Why, in one line.",
            ),
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
        if secrets:
            decorated = allow_secret_option(decorated)
        return decorated  # type: ignore[no-any-return]

    return decorate


def signed(who: Intent) -> dict[str, Any]:
    """Returns a write request's intent fields, as ``who`` (the options) says."""
    return {
        "agent": who.agent,
        "intent": who.intent,
        "confidence": who.confidence,
        "reason": who.reason,
    }


def read_text(text: str) -> str:
    """Returns ``text``, or all of stdin when it is ``-`` (strict UTF-8).

    The line break that ends what was piped (``echo``, a file's last line)
    is not the memory's: kept, it was a last, empty line in ``blame
    --lines``, and an edit to the same words a change that showed nothing.
    """
    if text != "-":
        return text
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError:
        raise InvalidInputError("The text on stdin is not valid UTF-8.") from None


def parse_when(value: str | None, option: str = "--when") -> datetime | None:
    """Parses a time option as every one is (:func:`ctx.hub.parse_moment`)."""
    if value is None:
        return None  # without loading the hub's API and the time parser
    from ctx.hub import parse_moment

    return parse_moment(value, option, now=now())


def moment_text(value: str | None, option: str = "--when") -> str | None:
    """Returns the moment a time option names, in ISO 8601, for a request.

    The option is read here (:func:`parse_when`), so a bad one is refused in
    the option's name.
    """
    moment = parse_when(value, option)
    return None if moment is None else moment.isoformat()


_JSON = msgspec.json.Encoder(order="deterministic")


def echo_json(value: object) -> None:
    """Prints ``value`` as one line of JSON (JSON escapes what it must).

    A result that can name its store (an :class:`~ctx.engine.Outcome`: the
    results of writes and recalls) names the store the command used.
    """
    from ctx.engine import Outcome

    state = click.get_current_context().find_object(CtxState)
    if isinstance(value, Outcome) and value.store is None and state is not None:
        value = msgspec.structs.replace(value, store=str(state.workspace().path))
    click.echo(_JSON.encode(value).decode("utf-8"))


def echo_change(result: EditResult, as_json: bool, verb: str) -> None:
    """Reports a write to one memory that may have changed nothing."""
    if as_json:
        echo_json(result)
    elif result.commit is None:
        echo(f"{result.id} unchanged: nothing to commit.")
    else:
        echo(f"{result.id} {verb} in {result.commit[:10]}.")


def pass_state(func: F) -> F:
    """Passes the command's :class:`CtxState` as the first argument."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        state = click.get_current_context().find_object(CtxState)
        assert state is not None
        return func(state, *args, **kwargs)

    return wrapper  # type: ignore[return-value]
