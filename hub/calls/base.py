"""What every call shares: its request's common fields, its checks, its lock.

A call checks the caller's reach before it reads or writes, and holds the
workspace's lock while it does.

A field that takes one of a closed set of values (a kind, a link type, a
format...) is typed with the set the engine or the hub checks it against
(:func:`one_of`), so its schema's ``enum`` is that set: a schema cannot
offer a value the call refuses, nor leave one out.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar, cast

import msgspec
from msgspec import Meta

from ctx import engine
from ctx.engine import KINDS, Intent, Store
from ctx.hub.access import Caller
from ctx.hub.lazy_branches import LazyBranches
from ctx.hub.upkeep import pack_in_background
from ctx.hub.workspace import Workspace

__all__ = [
    "Branch",
    "Id",
    "Kind",
    "Request",
    "Tags",
    "Write",
    "checked",
    "converted",
    "ensure_branch",
    "moment",
    "one_of",
    "own_branch",
    "reading",
    "reads",
    "write_intent",
    "writing",
]


R = TypeVar("R", bound=msgspec.Struct)


def one_of(choices: tuple[str, ...]) -> Any:
    """Returns the type whose values are ``choices``: a Literal, an ``enum``.

    Its JSON schema lists them, and msgspec refuses any other value.
    """
    return cast(Any, Literal)[choices]


if TYPE_CHECKING:  # type checkers read it as the string it is
    Kind = str
else:
    Kind = one_of(KINDS)

Id = Annotated[
    str,
    Meta(
        description="A memory's id, whole or 6+ characters of its start or end.",
        # An id and nothing else: never ID@REV, whose revision would pass
        # round the scope check of the branch and revision fields.
        pattern="^[0-9A-Za-z]{6,26}$",
    ),
]
Branch = Annotated[
    str | None,
    Meta(
        description=(
            "The branch (default: the server's branch, then HEAD; in a store "
            "that follows the code, the code branch of the server's folder)."
        )
    ),
]
Tags = Annotated[
    tuple[str, ...],
    Meta(description='Tags as "namespace:value", e.g. "project:api".'),
]


class Request(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """The fields every call shares."""

    branch: Branch = None


class Write(Request, kw_only=True, forbid_unknown_fields=True):
    """The intent every write carries (the commit's trailers)."""

    agent: (
        Annotated[
            str,
            Meta(
                description="Who writes (default: CTX_AGENT, then the client's name).",
                pattern=engine.AGENT_PATTERN,
            ),
        ]
        | None
    ) = None
    confidence: (
        Annotated[float, Meta(ge=0.0, le=1.0, description="How sure, 0 to 1.")] | None
    ) = None
    reason: Annotated[
        str | None, Meta(description="Why this write is made, in a sentence.")
    ] = None
    intent: (
        Annotated[
            str,
            Meta(
                description="Why, in a lower-case word: observe, decide, "
                "refine... (default: the call's own).",
                pattern=engine.INTENT_PATTERN,
            ),
        ]
        | None
    ) = None


def checked(request: R) -> R:
    """Returns ``request`` checked as a call's decoded arguments are.

    For a door that builds a request from what a caller wrote (an agent's
    ``<ctx:*>`` command): every field against its schema, as the MCP tools
    and the HTTP routes check theirs (an id is an id and nothing else,
    never ``ID@REV``; a kind or a link type one the engine knows).

    Raises:
        InvalidInputError: A field is of the wrong type or out of range.
    """
    name = type(request).__name__.removesuffix("Request")
    call = re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
    return converted(msgspec.to_builtins(request), type(request), call)


def converted(arguments: object, request: type[R], call: str) -> R:
    """Returns ``arguments`` as a ``request`` of ``call``, checked against its schema.

    What every door's check of a call's arguments comes to (:func:`checked`,
    :func:`~ctx.hub.calls.table.decode`).

    Raises:
        InvalidInputError: A field is unknown, missing, of the wrong type or
            out of range.
    """
    try:
        return msgspec.convert(arguments, request, strict=False)
    except msgspec.ValidationError as exc:
        raise engine.InvalidInputError(
            f"Invalid arguments for {call}: {exc}.",
            hint="The call's input schema lists its arguments.",
        ) from None


def write_intent(ws: Workspace, caller: Caller, req: Write, intent: str) -> Intent:
    """Returns the intent of a write: the request's, else the call's own ``intent``.

    The agent is :meth:`~ctx.hub.access.Caller.signed_by`'s (the workspace's
    agent the default); the session is the caller's, else the workspace's.
    """
    return ws.intent(
        req.intent or intent,
        agent=caller.signed_by(ws.agent, req.agent),
        confidence=req.confidence,
        reason=req.reason,
        session=caller.session,
    )


def own_branch(
    ws: Workspace, caller: Caller, branch: str | None, agent: str | None = None
) -> str | None:
    """Returns ``agent/<name>`` where the agent works on a branch of its own.

    That is where ``[agents] branch_per_agent`` or ``review_writes`` is
    set, the call names no branch and the server was given none. The agent
    is the one a write's commit names (``agent``), else the caller's: a
    write through the HTTP API, whose caller has no name, went to main
    unreviewed, and one naming another agent over MCP landed on the
    client's branch.
    """
    if branch is not None or caller.branch is not None or caller.command_line:
        return None
    if agent is None:  # a read: the agent the caller's writes are signed by
        agent = ws.intent("read", agent=caller.signed_by(ws.agent)).agent
    return ws.own_branch(agent)


def ensure_branch(store: Store, name: str) -> None:
    """Names ``name``, from HEAD's branch, unless it exists.

    A workspace's store makes it by its first write, so that a call refused
    before it wrote makes none (:mod:`ctx.hub.lazy_branches`); another
    store makes it now (race-safe).
    """
    if name in store.branches():
        return
    if isinstance(store, LazyBranches):
        store.await_branch(name, store.head_branch())
        return
    # Another writer may make it first: the same branch from the same start.
    with suppress(engine.ConflictError):
        engine.create_branch(store, name, store.head_branch())


@contextmanager
def writing(
    ws: Workspace, caller: Caller, branch: str | None, who: Intent
) -> Iterator[tuple[Store, str]]:
    """Holds the lock; yields the store and the branch to write, if allowed.

    ``who`` is the write's intent (:func:`write_intent`): its agent's own
    branch is the one written where agents have theirs. It is made here, on
    its first write: a call reads its request (the intent, a time) before,
    so a request refused makes nothing.
    """
    with ws.lock:
        store = ws.store(write=True)
        own = own_branch(ws, caller, branch, who.agent)
        name = caller.write_branch(store, own or branch)
        if own is not None:
            ensure_branch(store, own)
        try:
            yield store, name
        finally:
            # Made by the write, or not wanted: a refused call's name is
            # forgotten, not kept for the server's next reader to find.
            if own is not None and isinstance(store, LazyBranches):
                store.drop_awaited(own)
        # A server writes for days without closing its workspace.
        pack_in_background(store)


def reads(
    ws: Workspace, caller: Caller, store: Store, branch: str | None
) -> str | None:
    """Returns the branch a read reads, when it names none: the agent's own.

    That is its branch once its first write made it (``branch_per_agent``),
    else the caller's default.
    """
    if branch is None:
        own = own_branch(ws, caller, None)
        if own is not None and own in store.branches():
            return own
    return branch or caller.branch


@contextmanager
def reading(
    ws: Workspace, caller: Caller, branch: str | None
) -> Iterator[tuple[Store, str | None]]:
    """Holds the lock to read; yields the store and the revision, if allowed."""
    with ws.lock.reading():
        store = ws.store()
        yield store, caller.read_revision(store, reads(ws, caller, store, branch))


def moment(ws: Workspace, value: str | None, what: str) -> datetime | None:
    """Returns the moment a time field names (:func:`ctx.hub.parse_moment`).

    A phrase (``yesterday``) counts from the workspace's clock.
    """
    if value is None:
        return None  # without loading the time parser
    from ctx.hub.retrieval.temporal.moment import parse_moment

    return parse_moment(value, what, now=ws.clock())
