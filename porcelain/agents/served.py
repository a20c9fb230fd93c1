"""The stores one ``ctx serve`` serves, each under a name of its own.

``ctx serve --store PATH --store NAME=PATH ...`` serves several stores in one
process: each answers under ``/s/<name>/`` (``/s/<name>/mcp``,
``/s/<name>/api/...``), with its own keys. A name is the one given
(``NAME=PATH``), else the store's folder name (a project's ``.ctx`` is
named after the project's folder), made unique with ``-2``, ``-3``, ...

What is refused before anything starts, each in one line: a name that is not
letters, digits, ``.``, ``_`` and ``-``; two given names alike (equal but for
case); the same store twice, however spelled; and a path that is not a
store (when :func:`name_stores`' caller opens it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec

from ctx.engine import InvalidInputError
from ctx.hub import STORE_FOLDER, Workspace

__all__ = ["PREFIX", "NamedStore", "ServedStore", "name_stores", "split_spec"]

PREFIX = "/s/"
"""Where each store's URLs start, before its name."""

_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_UNSAFE_RE = re.compile(r"[^A-Za-z0-9._-]+")


class ServedStore(msgspec.Struct, frozen=True, kw_only=True):
    """A store a server serves, as ``/health`` lists it.

    Attributes:
        name: Its name in the URLs.
        path: The store folder.
        mcp: Its MCP endpoint's path (``/s/<name>/mcp``).
        api: Its JSON API's root path (``/s/<name>/api``).
    """

    name: str
    path: str
    mcp: str
    api: str

    @classmethod
    def of(cls, name: str, path: Path) -> ServedStore:
        """Returns the store named ``name`` at ``path``, with its paths."""
        root = f"{PREFIX}{name}"
        return cls(name=name, path=str(path), mcp=f"{root}/mcp", api=f"{root}/api")


@dataclass(frozen=True)
class NamedStore:
    """A workspace a server serves, and its name in the URLs."""

    name: str
    ws: Workspace


def split_spec(spec: str) -> tuple[str | None, str]:
    """Returns the name and the path a ``--store`` value gives.

    ``NAME=PATH`` names the store; a value whose part before ``=`` is not a
    name (``./a=b``), or that is a folder as it stands, is a path alone.

    Raises:
        InvalidInputError: The value is empty, or names no path.
    """
    name, sep, path = spec.partition("=")
    if not sep or "/" in name or Path(spec).expanduser().is_dir():
        name, path = "", spec
    if not path:
        raise InvalidInputError(
            f"--store {spec!r} names no store folder.",
            hint="Give --store PATH or --store NAME=PATH.",
        )
    if name and _NAME_RE.fullmatch(name) is None:
        raise InvalidInputError(
            f"{name!r} cannot name a store in a URL.",
            hint="A name is letters, digits, '.', '_' and '-', at most 64.",
        )
    return name or None, path


def _folder_name(path: Path) -> str:
    """Returns a store's own name: its folder's, or its project's for ``.ctx``."""
    folder = path.parent if path.name == STORE_FOLDER else path
    name = _UNSAFE_RE.sub("-", folder.name).lstrip("._-")[:64]
    return name or "store"


def name_stores(
    workspaces: Sequence[Workspace], names: Sequence[str | None]
) -> tuple[NamedStore, ...]:
    """Returns each workspace under its name: the one given, else its own.

    Args:
        workspaces: The stores, in the order given.
        names: The name given to each (None: named after its folder).

    Raises:
        InvalidInputError: Two given names are alike, or one store is given
            twice.
    """
    seen: dict[Path, Path] = {}
    for ws in workspaces:
        real = ws.path.resolve()
        if real in seen:
            raise InvalidInputError(
                f"The store {ws.path} is given twice"
                + ("." if seen[real] == ws.path else f" (as {seen[real]}).")
            )
        seen[real] = ws.path
    taken: dict[str, str] = {}
    for name in names:
        if name is None:
            continue
        if name.casefold() in taken:
            raise InvalidInputError(
                f"Two stores are named {taken[name.casefold()]!r} and {name!r}.",
                hint="Give each store a name of its own: --store NAME=PATH.",
            )
        taken[name.casefold()] = name
    named = []
    for ws, given in zip(workspaces, names, strict=True):
        name = given
        if name is None:
            base = _folder_name(ws.path)
            name, n = base, 1
            while name.casefold() in taken:
                n += 1
                name = f"{base}-{n}"
            taken[name.casefold()] = name
        named.append(NamedStore(name=name, ws=ws))
    return tuple(named)
