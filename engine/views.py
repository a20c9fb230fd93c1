"""Views: named, stored selections with a budget, rendered by ``compose``.

A view is a small file, ``views/<name>.json``, in the store itself: it is
versioned, branchable and mergeable like any memory, and every change to it is
a commit with intent.
"""

from __future__ import annotations

import re
from datetime import datetime

import msgspec

from ctx.engine.branches import resolve_revision, target_branch
from ctx.engine.compose import FORMATS, Composition, compose
from ctx.engine.errors import (
    ConflictError,
    CorruptStoreError,
    InvalidInputError,
    NotFoundError,
)
from ctx.engine.ids import CommitId
from ctx.engine.layout import VIEWS, view_path
from ctx.engine.model import Intent, Outcome, encode_struct
from ctx.engine.query import parse_query
from ctx.engine.snapshot import Snapshot
from ctx.engine.store import Store

__all__ = [
    "CreateViewResult",
    "DeleteViewResult",
    "View",
    "create_view",
    "delete_view",
    "get_view",
    "list_views",
    "render_view",
]

_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")


class View(msgspec.Struct, frozen=True, kw_only=True):
    """A stored selection: a query, a budget, a format and a description."""

    version: int
    name: str
    where: str
    budget: int
    format: str = "markdown"
    description: str | None = None


_DECODER = msgspec.json.Decoder(View)


class CreateViewResult(Outcome, frozen=True, kw_only=True):
    """What ``create_view`` stored: the view's name, file and commit.

    Attributes:
        name: The view.
        path: Its file under ``views/``.
        commit: The commit, or None when an equal view was already there.
    """

    name: str
    path: str
    commit: CommitId | None


class DeleteViewResult(Outcome, frozen=True, kw_only=True):
    """What ``delete_view`` deleted: the view's name and the commit.

    Attributes:
        name: The view.
        commit: The commit that deleted it.
    """

    name: str
    commit: CommitId


def _path(name: str) -> str:
    if not _NAME_RE.fullmatch(name) or ".." in name:
        raise InvalidInputError(
            f"View name {name!r} is not allowed.",
            hint="Use lower-case letters, digits and _.- (no / or ..).",
        )
    return view_path(name)


def _read(snap: Snapshot, name: str) -> View:
    data = snap.read(_path(name))
    if data is None:
        raise NotFoundError(
            f"No view named {name!r}.", hint="`ctx view list` lists them."
        )
    try:
        view = _DECODER.decode(data)
    except msgspec.DecodeError as exc:
        raise CorruptStoreError(
            f"{view_path(name)} is not a valid view: {exc}"
        ) from exc
    # The file name is the view's name (a merge may keep a copy of one view
    # under another name).
    return view if view.name == name else msgspec.structs.replace(view, name=name)


def create_view(
    store: Store,
    name: str,
    where: str,
    budget: int,
    intent: Intent,
    *,
    fmt: str = "markdown",
    description: str | None = None,
    replace: bool = False,
    branch: str | None = None,
) -> CreateViewResult:
    """Stores a view; the query is checked first.

    Raises:
        ConflictError: a view of that name exists (unless ``replace``).
    """
    path = _path(name)
    parse_query(where)
    if budget <= 0:
        raise InvalidInputError(f"The budget must be positive, not {budget}.")
    if fmt not in FORMATS:
        raise InvalidInputError(
            f"Unknown format {fmt!r}.", hint="Use markdown, text or json."
        )
    view = View(
        version=1,
        name=name,
        where=where,
        budget=budget,
        format=fmt,
        description=description,
    )

    def build(snap: Snapshot) -> dict[str, bytes | None]:
        if snap.blob_id(path) is not None and not replace:
            raise ConflictError(
                f"View {name!r} already exists.", hint="Pass --replace to change it."
            )
        return {path: encode_struct(view)}

    commit = store.write(
        target_branch(store, branch), intent, f"View {name}: {where}", build
    )
    return CreateViewResult(name=name, path=path, commit=commit.id if commit else None)


def delete_view(
    store: Store, name: str, intent: Intent, *, branch: str | None = None
) -> DeleteViewResult:
    """Deletes a stored view."""
    path = _path(name)

    def build(snap: Snapshot) -> dict[str, bytes | None]:
        _read(snap, name)
        return {path: None}

    commit = store.write(
        target_branch(store, branch), intent, f"Delete view {name}", build
    )
    assert commit is not None  # the view was found, so its file is deleted
    return DeleteViewResult(name=name, commit=commit.id)


def get_view(store: Store, name: str, *, rev: str | None = None) -> View:
    """Returns a stored view."""
    return _read(store.snapshot(resolve_revision(store, rev)), name)


def list_views(store: Store, *, rev: str | None = None) -> list[View]:
    """Returns every stored view, by name."""
    snap = store.snapshot(resolve_revision(store, rev))
    return [
        _read(snap, path.rsplit("/", 1)[1][: -len(".json")])
        for path, _ in snap.files(VIEWS)
        if path.endswith(".json")
    ]


def render_view(
    store: Store,
    name: str,
    *,
    now: datetime,
    budget: int | None = None,
    fmt: str | None = None,
    rev: str | None = None,
) -> Composition:
    """Composes a view, with its own budget and format unless overridden."""
    view = get_view(store, name, rev=rev)
    return compose(
        store,
        budget=budget if budget is not None else view.budget,
        now=now,
        where=view.where,
        fmt=fmt or view.format,
        rev=rev,
    )
