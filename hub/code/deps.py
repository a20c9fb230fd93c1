"""What a file imports, and what imports it (``ctx deps``).

Each file's imports are kept as written (``ctx.hub.api``, ``./util``,
``<stdio.h>``, ``crate::store``); this module resolves them to indexed files
by the rules of each language, as far as names alone allow:

- Python: a relative module from the file's package; an absolute one as
  Python's import path would find it: under the file's own root (the
  folder above its outermost package: a script's folder, ``src/``), the
  tree's root, or a folder holding a package of that first name; as a
  ``.py`` or ``.pyi`` file or a package's ``__init__``. ``from x import y``
  also names ``x.y``, which is a file when ``y`` is a submodule;
- JavaScript and TypeScript: a relative specifier, with or without its
  extension or ``/index`` (``./util.js`` also finds ``util.ts``, as
  TypeScript's own resolution does); package names are outside the tree;
- C and C++: an include, beside the file first, else by path suffix;
- Go: every file of the folder the import path ends with;
- Rust: ``crate::a::b`` as ``a/b.rs``, ``a/b/mod.rs`` or ``a.rs``;
- Java: ``com.x.Y`` as ``com/x/Y.java``;
- Ruby: ``require_relative`` beside the file, ``require`` by suffix.

An import that names no indexed file (the standard library, a package) is
listed but not resolved.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Iterable

from ctx.hub.code.index import CodeIndex
from ctx.hub.code.manifest import Manifest
from ctx.hub.code.results import Dependencies

__all__ = ["dependencies", "resolve"]

_TYPED = {  # an import's JavaScript ending, and the TypeScript files it may mean
    ".js": (".ts", ".tsx", ".d.ts"),
    ".jsx": (".tsx",),
    ".mjs": (".mts",),
    ".cjs": (".cts",),
}
_SCRIPT_ENDINGS = ("", ".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".d.ts")


class _Paths:
    """The indexed files, looked up by any tail of their path."""

    def __init__(self, manifest: Manifest) -> None:
        self.files = {p for p, e in manifest.files.items() if not e.skipped}
        self.by_tail: dict[str, list[str]] = defaultdict(list)
        self.by_folder: dict[str, list[str]] = defaultdict(list)
        for path in sorted(self.files):
            parts = path.split("/")
            for start in range(len(parts)):
                self.by_tail["/".join(parts[start:])].append(path)
            folder = "/".join(parts[:-1])
            self.by_folder[folder].append(path)

    def python_roots(self, path: str, first: str) -> list[str]:
        """Returns the folders whose ``first`` an import from ``path`` may name.

        The folder above ``path``'s outermost package, the tree's root, then
        every folder (not itself a package) that holds a package ``first``.
        """
        root = posixpath.dirname(path)
        while root and self.is_package(root):
            root = posixpath.dirname(root)
        roots = [root, ""]
        for init in ("__init__.py", "__init__.pyi"):
            for package in self.by_tail.get(f"{first}/{init}", []):
                holder = posixpath.dirname(posixpath.dirname(package))
                if not self.is_package(holder):
                    roots.append(holder)
        return list(dict.fromkeys(roots))

    def is_package(self, folder: str) -> bool:
        """Returns whether an indexed ``__init__`` makes ``folder`` a package."""
        return bool(folder) and (
            f"{folder}/__init__.py" in self.files
            or f"{folder}/__init__.pyi" in self.files
        )

    def tail(self, candidates: Iterable[str]) -> list[str]:
        """Returns the files the first candidate tail that matches names."""
        for candidate in candidates:
            found = self.by_tail.get(candidate)
            if found:
                return found
        return []

    def exact(self, candidates: Iterable[str]) -> list[str]:
        """Returns the first candidate that is an indexed file."""
        for candidate in candidates:
            if candidate in self.files:
                return [candidate]
        return []


def _python(paths: _Paths, path: str, module: str) -> list[str]:
    dots = len(module) - len(module.lstrip("."))
    name = module[dots:].replace(".", "/")
    if dots:
        base = posixpath.dirname(path)
        for _ in range(dots - 1):
            base = posixpath.dirname(base)
        target = posixpath.join(base, name) if name else base
        return paths.exact(_python_files(target))
    roots = paths.python_roots(path, name.split("/")[0])
    return paths.exact(
        file
        for root in roots
        for file in _python_files(posixpath.join(root, name) if root else name)
    )


def _python_files(target: str) -> list[str]:
    return [
        f"{target}.py",
        f"{target}/__init__.py",
        f"{target}.pyi",
        f"{target}/__init__.pyi",
    ]


def _script(paths: _Paths, path: str, module: str) -> list[str]:
    if not module.startswith("."):
        return []
    target = posixpath.normpath(posixpath.join(posixpath.dirname(path), module))
    stem, ending = posixpath.splitext(target)
    typed = [stem + end for end in _TYPED.get(ending, ())]
    return paths.exact(
        [f"{target}{end}" for end in _SCRIPT_ENDINGS]
        + typed
        + [f"{target}/index{end}" for end in _SCRIPT_ENDINGS[1:]]
    )


def _include(paths: _Paths, path: str, module: str) -> list[str]:
    beside = posixpath.normpath(posixpath.join(posixpath.dirname(path), module))
    return paths.exact([beside]) or paths.tail([module])


def _go(paths: _Paths, path: str, module: str) -> list[str]:
    parts = module.split("/")
    for start in range(len(parts)):
        tail = "/".join(parts[start:])
        for folder, files in paths.by_folder.items():
            if folder == tail or folder.endswith("/" + tail):
                return [f for f in files if f.endswith(".go") and f != path]
    return []


def _rust(paths: _Paths, path: str, module: str) -> list[str]:
    parts = [p for p in module.split("::") if p not in ("crate", "self", "super", "")]
    while parts:
        name = "/".join(parts)
        found = paths.tail([f"{name}.rs", f"{name}/mod.rs"])
        if found:
            return found
        parts.pop()
    return []


def _java(paths: _Paths, path: str, module: str) -> list[str]:
    return paths.tail([module.replace(".", "/") + ".java"])


def _ruby(paths: _Paths, path: str, module: str) -> list[str]:
    name = module if module.endswith(".rb") else f"{module}.rb"
    beside = posixpath.normpath(posixpath.join(posixpath.dirname(path), name))
    return paths.exact([beside]) or paths.tail([name])


_RESOLVERS = {
    "python": _python,
    "javascript": _script,
    "typescript": _script,
    "tsx": _script,
    "c": _include,
    "cpp": _include,
    "go": _go,
    "rust": _rust,
    "java": _java,
    "ruby": _ruby,
}


def resolve(manifest: Manifest, path: str, paths: _Paths | None = None) -> list[str]:
    """Returns the indexed files that ``path``'s imports name, each once."""
    paths = paths or _Paths(manifest)
    entry = manifest.files[path]
    resolver = _RESOLVERS.get(entry.language)
    if resolver is None:
        return []
    found: dict[str, None] = {}
    for module in entry.modules:
        for target in resolver(paths, path, module):
            if target != path:
                found[target] = None
    return list(found)


def dependencies(index: CodeIndex, path: str) -> Dependencies:
    """Returns what the indexed file ``path`` imports and what imports it."""
    manifest = index.manifest
    graph = index.derived.get("imports")
    if not isinstance(graph, dict):
        paths = _Paths(manifest)
        graph = {p: resolve(manifest, p, paths) for p in sorted(paths.files)}
        index.derived["imports"] = graph
    importers = tuple(p for p, targets in graph.items() if path in targets)
    return Dependencies(
        path=path,
        imports=manifest.files[path].modules,
        resolved=tuple(graph.get(path, ())),
        imported_by=importers,
    )
