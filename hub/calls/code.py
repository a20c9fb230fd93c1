"""Calls on the code index: find and symbols (any caller: they read no memory)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import msgspec
from msgspec import Meta

from ctx.hub.access import Caller
from ctx.hub.calls.base import one_of
from ctx.hub.code.languages import LANGUAGES, SYMBOL_KINDS
from ctx.hub.code.results import FindResult, SymbolList
from ctx.hub.workspace import Workspace

__all__ = [
    "FindRequest",
    "SymbolsRequest",
    "find",
    "symbols",
]

if TYPE_CHECKING:  # type checkers read it as the string it is
    Language = str
else:
    Language = one_of(LANGUAGES)

if TYPE_CHECKING:  # type checkers read it as the string it is
    SymbolKind = str
else:
    SymbolKind = one_of(SYMBOL_KINDS)


class FindRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """``find``: where something is in the indexed code (``ctx find``)."""

    query: Annotated[
        str,
        Meta(
            description="What to find, in words or identifiers, e.g. "
            "'where are retries handled'.",
            min_length=1,
        ),
    ]
    limit: Annotated[int, Meta(ge=1, le=100, description="Hits at most.")] = 10
    language: Annotated[Language | None, Meta(description="Only this language.")] = None
    path: Annotated[
        str | None,
        Meta(description="Only files matching this glob, e.g. 'src/**' or '*.go'."),
    ] = None
    full: Annotated[bool, Meta(description="Give each hit its code.")] = False


class SymbolsRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """``symbols``: the indexed definitions (``ctx symbols``)."""

    kind: Annotated[SymbolKind | None, Meta(description="Only this kind.")] = None
    path: Annotated[
        str | None, Meta(description="Only files matching this glob, e.g. '*.py'.")
    ] = None


def find(ws: Workspace, caller: Caller, req: FindRequest) -> FindResult:
    """Finds where something is in the indexed code (any caller: no memories)."""
    from ctx.hub.api import find_code

    return find_code(
        ws,
        req.query,
        limit=req.limit,
        language=req.language,
        path=req.path,
        full=req.full,
    )


def symbols(ws: Workspace, caller: Caller, req: SymbolsRequest) -> SymbolList:
    """Lists the indexed definitions (any caller: no memories)."""
    from ctx.hub.code_api import code_symbols

    with ws.lock:
        return code_symbols(ws, kind=req.kind, path=req.path)
