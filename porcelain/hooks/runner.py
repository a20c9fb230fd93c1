"""``ctx hook EVENT``: the host's JSON in, the context out, never a failure.

:func:`run_hook` reads what the host sent, finds the store from the
``cwd`` it names (as a command run there would: ``--store``, ``CTX_DIR``,
``.ctx/`` above, the user store), runs the event's handler and returns what
to print: ``{"hookSpecificOutput": {"hookEventName": ..., "additionalContext":
...}}`` with the context wrapped in the marker of injected text, cut to the
host's 10,000 characters, or nothing.

It never fails the agent, and never forgets silently: a store locked by a
writer, input that is not JSON, an unknown event, a hook past its deadline
(``[hooks] timeout``), any error at all is one line in
``<store>/private/hooks.log`` (or in the user's cache folder when there is
no store), which ``ctx doctor`` shows, and the command exits 0 (exit 2
would block the user's prompt). An event whose answer the agent reads
(:data:`SPEAKS`) answers with that line (:func:`failure_line`), so the
agent knows its memory failed rather than that it holds nothing; the
others, and a folder with no store, give nothing. The log is cut over to
``hooks.log.1`` past a megabyte.

Light: the indexes load only when a prompt is searched without a running
hub, and the table of calls only when a stop has commands to carry out.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import signal
import threading
import traceback
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctx.hub import Workspace, log_line, shown_during
from ctx.porcelain.hooks.blocks import cut_to, room_for
from ctx.porcelain.hooks.events import (
    Event,
    Hook,
    HookInput,
    find_event,
    host_event_name,
)

__all__ = [
    "SESSION_END_TIMEOUT",
    "SPEAKS",
    "HookTimeoutError",
    "failure_line",
    "run_hook",
]


SESSION_END_TIMEOUT = 1.0
"""Seconds ``session-end`` may take at most: the host gives it 1.5 s."""

SPEAKS = frozenset(("session-start", "prompt-submit", "subagent-start"))
"""The events whose answer the agent reads: a failure of one is said there."""


class _NoStoreError(Exception):
    """The workspace has no store on disk: nothing to give, nothing to keep."""


class HookTimeoutError(BaseException):
    """A hook ran past its deadline (a hub that hangs, a slow disk).

    A BaseException, like KeyboardInterrupt: it unwinds every handler on its
    way (a command that fails is reported and the next one run; a deadline
    stops them all) up to :func:`run_hook`.

    ``answering``: the answer still runs, in a thread of its own, which
    closes the workspace when it ends (:func:`_within`).
    """

    def __init__(self, message: str, *, answering: bool = False) -> None:
        super().__init__(message)
        self.answering = answering


@contextlib.contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    """Raises :class:`HookTimeoutError` in the block once ``seconds`` pass.

    A timer signal (``SIGALRM``) interrupts whatever waits, a hub's socket
    included; the exception unwinds the block, releasing its locks, as an
    error would. Only for the main thread: only it gets signals.
    """

    def expire(signum: int, frame: object) -> None:
        raise HookTimeoutError(f"no answer within {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _disarm() -> None:
    """:attr:`Hook.given` in the main thread: the timer signal is stopped.

    A signal that came first has raised already, before anything of the
    session was written.
    """
    signal.setitimer(signal.ITIMER_REAL, 0)


@dataclass
class _Answering:
    """A hook's answer running in a thread of its own (see :func:`_within`)."""

    ws: Workspace
    seconds: float
    text: str | None = None
    error: BaseException | None = None
    finished: bool = False
    abandoned: bool = False
    given: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    def run(self, answer: Callable[[], str | None]) -> None:
        """Runs ``answer``; closes the workspace at the end if it was abandoned."""
        try:
            self.text = answer()
        except BaseException as exc:  # raised again in the waiting thread
            self.error = exc
        finally:
            with self.lock:
                self.finished = True
                if self.abandoned:
                    self.ws.close()

    def give(self) -> None:
        """:attr:`Hook.given` in the thread: the answer will be waited for.

        Raises:
            HookTimeoutError: the caller has stopped waiting; nothing of the
                session is to be written.
        """
        with self.lock:
            if self.abandoned:
                raise HookTimeoutError(f"no answer within {self.seconds:g} s")
            self.given = True


def _within(
    seconds: float, answer: Callable[[], str | None], answering: _Answering | None
) -> str | None:
    """Returns ``answer()``, or raises :class:`HookTimeoutError` past ``seconds``.

    In the main thread (``ctx hook``'s process, ``answering`` None) a timer
    signal interrupts the answer. Elsewhere (the hub answers a relayed hook
    in a thread of its own) no signal can: the answer runs in a thread of
    its own, waited for ``seconds``. One that runs past them is left to
    finish, its result thrown away, and it closes the workspace when it
    ends, not the caller under it (:attr:`HookTimeoutError.answering`);
    :attr:`Hook.given` stops it before it writes what the session was given.
    Once the handler has called that, its answer is waited for to the end:
    what the session's state says it was given is what it is given.
    """
    if answering is None:
        with _alarm(seconds):
            return answer()
    # Run in the caller's context: the hub's way of answering its own
    # requests (ctx.hub.server.client.answered_here) goes with it.
    context = contextvars.copy_context()
    worker = threading.Thread(
        target=context.run,
        args=(answering.run, answer),
        name="hook-answer",
        daemon=True,
    )
    worker.start()
    worker.join(seconds)
    with answering.lock:
        if not answering.finished and not answering.given:
            answering.abandoned = True
            message = f"no answer within {seconds:g} s"
            raise HookTimeoutError(message, answering=True)
    worker.join()  # ended, or past given: what is left is writing the block
    if answering.error is not None:
        raise answering.error
    return answering.text


def run_hook(
    event: str,
    data: bytes,
    *,
    store: str | None = None,
    agent: str | None = None,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> str:
    """Answers one hook call; returns what to print ("" for nothing).

    Args:
        event: The event (``session-start``, ``prompt-submit``, ``stop``,
            ``subagent-start``, ``subagent-stop``, ``pre-compact``,
            ``session-end``, or the host's name for one).
        data: What the host wrote on stdin (a JSON object).
        store: The store folder given explicitly (``--store``).
        agent: Who writes (default: ``CTX_AGENT``, then the host's name).
        environ: The environment (default: ``os.environ``).
        cwd: The process's working folder, where the store is looked for
            when the host names no folder (default: this process's).

    Never raises: every failure is logged and answered with nothing.
    """
    env = os.environ if environ is None else environ
    ws: Workspace | None = None
    session = ""
    found = find_event(event)
    hook_input = HookInput()
    try:
        payload = _payload(data)
        hook_input = HookInput.of(payload)
        session = hook_input.session_id
        named = Path(hook_input.cwd) if hook_input.cwd else None
        ws = Workspace.find(
            store, cwd=named if named and named.is_dir() else cwd, environ=env
        )
        if found is None:
            raise ValueError(f"unknown event {event!r}")
        if agent:
            ws.agent = agent
        if not ws.on_disk and found.name not in ("stop", "subagent-stop"):
            raise _NoStoreError(f"no store at {ws.path}")
        settings = ws.config().hooks
        host = _host(event, payload, env)
        seconds = settings.timeout
        if found.name == "session-end":
            seconds = min(seconds, SESSION_END_TIMEOUT)
        main = threading.current_thread() is threading.main_thread()
        answering = None if main else _Answering(ws, seconds)
        hook = Hook(
            ws,
            hook_input,
            settings,
            host,
            given=_disarm if answering is None else answering.give,
        )
        handler = found.handler

        def answer() -> str | None:
            who = hook.ws.agent or host
            with shown_during(hook.ws, hook.session, who, hook.read_at):
                return handler(hook)

        text = _within(seconds, answer, answering)
        return _output(found, event, hook_input, text) if text else ""
    except (Exception, HookTimeoutError) as caught:  # every failure ends here
        exc = _named(caught)
        where = ws or _quietly_found(store, env, cwd)
        _log(where, event, session, exc)
        if isinstance(exc, HookTimeoutError) and exc.answering:
            ws = None  # still in use: its thread closes it
        if found is None or found.name not in SPEAKS or isinstance(exc, _NoStoreError):
            return ""
        # The agent is told that its memory failed, not left to think it has
        # none: one line, and the log that `ctx doctor` reads.
        return _output(found, event, hook_input, failure_line(exc))
    finally:
        if ws is not None:
            ws.close()


def _named(exc: BaseException) -> BaseException:
    """Returns the error to tell of ``exc``: bad bytes in the store named so.

    A git object or ref that cannot be read raises what dulwich raises (a
    missing object's ``KeyError``), met anywhere; the command line names it
    as damage that ``ctx fsck`` explains (:func:`ctx.engine.store_damage`),
    and so does the hook.
    """
    if not isinstance(exc, Exception):
        return exc
    from ctx.engine import store_damage

    damage = store_damage(exc)
    if damage is None:
        return exc
    # Its frames hold views of the pack's memory map, which closing the
    # store would fail on: they go first.
    traceback.clear_frames(exc.__traceback__)
    return damage


def failure_line(exc: BaseException) -> str:
    """Returns the line a context gives for a hook that failed."""
    return (
        f"ctx: memory unavailable for this prompt ({_said(exc)[:300]}); "
        "`ctx doctor` shows the failure."
    )


def _said(exc: BaseException) -> str:
    """Returns an error as one line: its kind and message."""
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    kind = "no store" if isinstance(exc, _NoStoreError) else type(exc).__name__
    return f"{kind}: {message}".replace("\n", " ")


def _quietly_found(
    store: str | None, env: Mapping[str, str], cwd: Path | None
) -> Workspace | None:
    """Returns the workspace of the working directory, for the log, or None."""
    try:
        return Workspace.find(store, cwd=cwd, environ=env)
    except Exception:  # a log line is all it was for
        return None


def _payload(data: bytes) -> dict[str, Any]:
    """Returns the host's JSON object (empty input: an empty object)."""
    if not data.strip():
        return {}
    payload = json.loads(data)
    if not isinstance(payload, dict):
        raise ValueError(
            f"the input is JSON but not an object ({type(payload).__name__})"
        )
    return payload


def _host(event: str, payload: Mapping[str, Any], env: Mapping[str, str]) -> str:
    """Returns the host's name, the agent of writes when CTX_AGENT names none."""
    name = event.lower().replace("-", "")
    if name in ("beforeagent", "afteragent", "precompress") or env.get(
        "GEMINI_PROJECT_DIR"
    ):
        return "gemini-cli"
    if "turn_id" in payload:
        return "codex"
    return "claude-code"


def _output(event: Event, asked: str, hook_input: HookInput, text: str) -> str:
    """Returns the host's JSON for ``text``, wrapped and cut to the cap.

    The event is named as the host named it: in its input, else as the
    hook was asked (``ctx hook BeforeAgent`` answers for ``BeforeAgent``
    when the input could not be read), else by Claude Code's name.
    """
    from ctx.hub.calls import wrap_context

    text = cut_to(text, room_for(event.name))
    name = hook_input.hook_event_name or host_event_name(asked) or event.host_name
    context = wrap_context(text, event.name)
    answer = {
        "hookSpecificOutput": {"hookEventName": name, "additionalContext": context}
    }
    return json.dumps(answer, ensure_ascii=False)


def _log(ws: Workspace | None, event: str, session: str, exc: BaseException) -> None:
    """Writes one line on a failure; a log that cannot be written is skipped."""
    log_line(ws, event, session, _said(exc))
