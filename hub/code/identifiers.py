"""The identifier channel of ``ctx find``: the chunks that define what a query names.

A question that holds an exact identifier (``resolve_command``,
``HTTPClient.send``, ```parse```) most often asks for its definition. The
words channels cannot tell it: BM25 splits ``resolve_command`` into
``resolve`` and ``command``, and the chunks that call it hold those words as
often as the one that defines it. So this channel ranks the chunks whose own
name is the identifier, from the manifest's chunk names:

- a query's identifiers are its words written as code: holding ``_`` inside,
  a ``.`` between names, a capital after a small letter or two capitals
  before a small one (``parseConfig``, ``HTTPClient``), followed by ``(``
  (``echo()``), or any word between backquotes; and a query of one word
  alone (``urlopen``: a name looked up, as one looks up a symbol). Plain
  words in a sentence ("how to parse the config") are left to the other
  channels;
- a chunk defines a name when it is a function, method or class of that name
  (the first part of one cut into parts); case is not compared, but a
  definition named in the query's case scores a quarter more (`Snapshot`:
  the class before the method ``snapshot``);
- ``A.b`` scores 2 for ``b`` defined in ``A`` (its innermost owner:
  ``Net.HTTPConnection``'s methods are ``HTTPConnection``'s), 1 for ``A``
  itself where it is a short class, one chunk with its methods inside (a
  long class's head holds none of them), and 0.5 for any other ``b``; a
  plain identifier scores 2 for its definitions. A chunk's score sums over
  the query's identifiers; equal scores keep the manifest's order (by path).

The table of names is made from the manifest once per manifest (cached in
:attr:`~ctx.hub.code.index.CodeIndex.derived`), and only for a query that
holds an identifier.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from ctx.hub.code.manifest import Manifest

__all__ = ["DEFINING_KINDS", "Definitions", "definitions_of", "query_identifiers"]

DEFINING_KINDS = frozenset({"function", "method", "class"})
"""The kinds of chunk whose name is a definition."""

_MAX_IDENTIFIERS = 16
_BACKQUOTED = re.compile(r"`([^`\s]{1,200})`")
_DOTTED = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")
_CAMEL = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]")
_ALONE = re.compile(r"\s*([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)(?:\(\))?\s*\??\s*")


def _code_like(word: str) -> bool:
    """Returns whether ``word`` is written as code, not as a plain word."""
    parts = word.split(".")
    if len(parts) > 1:
        return max(len(part) for part in parts) > 1  # not "e.g"
    return "_" in word.strip("_") or _CAMEL.search(word) is not None


def query_identifiers(query: str) -> list[str]:
    """Returns the identifiers ``query`` names, in order, each once."""
    found: dict[str, None] = {}
    for quoted in _BACKQUOTED.findall(query):
        for match in _DOTTED.finditer(quoted):
            found[match.group()] = None
    rest = _BACKQUOTED.sub(" ", query)
    alone = _ALONE.fullmatch(rest)
    if alone is not None:  # "urlopen", "echo()": a name asked alone
        found[alone.group(1)] = None
    for match in _DOTTED.finditer(rest):
        word = match.group()
        if _code_like(word) or rest[match.end() : match.end() + 1] == "(":
            found[word] = None
    return list(found)[:_MAX_IDENTIFIERS]


class Definitions:
    """Which chunks define which names, for one manifest.

    Args:
        manifest: The index's manifest.
    """

    def __init__(self, manifest: Manifest) -> None:
        self._by_name: dict[str, list[tuple[str, str, str, str]]] = {}
        # (file, class): the classes cut into chunks of their own members,
        # whose head chunk holds none of them.
        self._cut: set[tuple[str, str]] = set()
        for path, entry in manifest.files.items():
            for position, chunk in enumerate(entry.chunks):
                # The innermost owner: "Net.HTTPConnection" is HTTPConnection.
                parent = chunk.parent.lower().rsplit(".", 1)[-1]
                if parent:
                    self._cut.add((path, parent))
                if chunk.name and chunk.part <= 1 and chunk.kind in DEFINING_KINDS:
                    self._by_name.setdefault(chunk.name.lower(), []).append(
                        (f"{path}\0{position}", path, parent, chunk.name)
                    )

    def search(
        self, identifiers: Collection[str], limit: int, allowed: Collection[str] | None
    ) -> list[tuple[str, float]]:
        """Returns the chunks defining ``identifiers``, as (chunk id, score).

        Best first, at most ``limit``; only chunks of the files ``allowed``
        (``None``: every file). See the module docstring for the scores.
        """
        keep = None if allowed is None else set(allowed)
        scores: dict[str, float] = {}
        for identifier in identifiers:
            *owners, written = identifier.split(".")
            owner = owners[-1].lower() if owners else None
            named = self._by_name.get(written.lower(), ())
            found = [
                (
                    c,
                    p,
                    (2.0 if owner in (None, parent) else 0.5)
                    + _same_case(as_named, written),
                )
                for c, p, parent, as_named in named
            ]
            if owner is not None:
                # ``A`` stands for ``b`` only as a short class, one chunk with
                # its methods inside: a long class's head holds none, and
                # ranked next to ``b`` it took the first place from it in
                # every other channel (its name and words are the query's).
                found += [
                    (c, p, 1.0)
                    for c, p, _, _ in self._by_name.get(owner, ())
                    if (p, owner) not in self._cut
                ]
            for chunk_id, path, score in found:
                if keep is None or path in keep:
                    scores[chunk_id] = scores.get(chunk_id, 0.0) + score
        order = {chunk_id: i for i, chunk_id in enumerate(scores)}
        best = sorted(scores.items(), key=lambda item: (-item[1], order[item[0]]))
        return best[:limit]


def _same_case(name: str, written: str) -> float:
    """Returns what a definition gains for being named in the query's case.

    Case is not compared to find it, but it tells two apart: `Snapshot`
    asks for the class before the method ``snapshot`` (a quarter: it
    reorders definitions of one name, never one name above another).
    """
    return 0.25 if name == written else 0.0


def definitions_of(manifest: Manifest, derived: dict[str, object]) -> Definitions:
    """Returns the manifest's :class:`Definitions`, made once per manifest.

    ``derived``: what searches derive from the manifest
    (:attr:`~ctx.hub.code.index.CodeIndex.derived`, emptied when it changes).
    """
    found = derived.get("definitions")
    if not isinstance(found, Definitions):
        found = derived["definitions"] = Definitions(manifest)
    return found
