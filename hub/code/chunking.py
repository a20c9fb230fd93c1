"""Source files cut into chunks that follow the code's structure.

:func:`chunk_source` parses a file with its tree-sitter grammar
(:mod:`ctx.hub.code.languages`) and walks the tree's top level:

- a function or method, with the comments just above it, its decorators
  and its docstring, is one chunk; one longer than
  :data:`~ctx.hub.code.blocks.MAX_LINES` is cut
  between the statements of its body (never inside a line or a statement);
- a class of at most :data:`SHORT_CLASS` lines is one chunk; a longer one
  gives a chunk for its head (up to its first member) and its members are
  chunked as above, knowing their class;
- containers (an ``impl``, a namespace, a Ruby module) are looked into, and
  so are the blocks of a branching statement that define something
  (Python's ``if``/``else``, ``try``/``except``, ``with``): a function
  defined for one platform, or as a fallback, is chunked as any other;
- consecutive imports make one chunk, and so does each run of other
  statements between definitions (cut at :data:`MAX_LINES`).

Each chunk records the names it uses that the file imports (the identifiers
a tree-sitter query finds, through ``QueryCursor``). A file whose tree is
mostly errors, and Markdown, JSON, YAML and TOML, are cut into text blocks
by :func:`~ctx.hub.code.blocks.chunk_text` instead.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ctx.hub.code.blocks import (
    MAX_LINES,
    SUMMARY_CHARS,
    FileChunks,
    chunk_text,
    cuts,
    first_line,
)
from ctx.hub.code.languages import Grammar, grammar_of, identifier_query, parser_for
from ctx.hub.code.results import Chunk

if TYPE_CHECKING:
    import tree_sitter

__all__ = ["SHORT_CLASS", "chunk_file", "chunk_source"]

SHORT_CLASS = 40
"""A class of at most this many lines stays whole; a longer one is cut."""

_TAGGED_TYPES = ("struct_specifier", "enum_specifier", "union_specifier")
_FROM_IMPORT = re.compile(r"from\s+(\.*[\w.]*)\s+import\s+(.*)", re.DOTALL)
_ERROR_SHARE = 0.5  # a tree with more of its bytes in errors is read as text


def chunk_file(path: str, text: str, language: str) -> FileChunks:
    """Returns a file's chunks: structural for source, blocks for text."""
    grammar = grammar_of(language)
    if grammar is None:
        return chunk_text(path, text, language)
    return chunk_source(path, text, grammar)


# -- source -----------------------------------------------------------------


class _Walker:
    """Walks one parsed file, appending chunks."""

    def __init__(self, path: str, data: bytes, lines: list[str], grammar: Grammar):
        self.path = path
        self.data = data
        self.lines = lines
        self.grammar = grammar
        self.out = FileChunks()
        self.identifiers: list[tuple[int, str]] = []  # (start byte, name)
        self.starts: list[int] = []  # their start bytes, for bisect
        self.imported: set[str] = set()

    def text(self, node: tree_sitter.Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def emit(
        self,
        start: int,
        end: int,
        kind: str,
        *,
        name: str = "",
        parent: str = "",
        summary: str = "",
        part: int = 0,
    ) -> None:
        body = "\n".join(self.lines[start - 1 : end])
        if not body.strip():
            return
        if not summary:
            summary = first_line(body)
        self.out.chunks.append(
            Chunk(
                path=self.path,
                start=start,
                end=end,
                language=self.grammar.name,
                kind=kind,
                name=name,
                parent=parent,
                summary=summary[:SUMMARY_CHARS],
                part=part,
            )
        )
        self.out.texts.append(body)

    # The top level and every container's body.
    def members(
        self, nodes: Iterable[tree_sitter.Node], parent: str, *, in_class: bool = False
    ) -> None:
        grammar = self.grammar
        run: list[tree_sitter.Node] = []  # statements between definitions
        imports: list[tree_sitter.Node] = []
        comments: list[tree_sitter.Node] = []

        def flush() -> None:
            self.flush_imports(imports)
            self.flush_code([*run, *comments], parent)
            run.clear()
            comments.clear()

        for node in nodes:
            if node.type in grammar.comments:
                if comments and _line(comments[-1].end_point) + 1 < _line(
                    node.start_point
                ):
                    run.extend(comments)
                    comments.clear()
                comments.append(node)
                continue
            if self.is_import(node):
                self.flush_code([*run, *comments], parent)
                run.clear()
                comments.clear()
                imports.append(node)
                continue
            inner, role = self.role(node)
            if role is None and self.defines_inside(node):
                # ``if sys.platform == "win32": def ...`` / ``else: def ...``:
                # each definition is chunked, knowing its class, as if the
                # statement were not there.
                flush()
                self.members(self.branch_members(node), parent, in_class=in_class)
                continue
            if role is None:
                self.flush_imports(imports)
                run.extend(comments)
                comments.clear()
                run.append(node)
                continue
            self.flush_imports(imports)
            self.flush_code(run, parent)
            run.clear()
            leading = list(comments) if _touches(comments, node) else []
            if not leading:
                self.flush_code(comments, parent)
            start = (
                _line(leading[0].start_point) if leading else _line(node.start_point)
            )
            comments.clear()
            if role == "function":
                self.function(inner, start, _end_line(node), parent, leading, in_class)
            elif role == "class":
                self.klass(inner, start, _end_line(node), parent, leading)
            else:
                body = inner.child_by_field_name("body") or _last_named(inner)
                name = self.name_of(inner)
                inside = f"{parent}.{name}" if parent and name else name or parent
                if body is not None:
                    impl = inner.type == "impl_item"
                    self.members(body.named_children, inside, in_class=impl)
        flush()

    def blocks_of(self, node: tree_sitter.Node) -> list[tree_sitter.Node]:
        """Returns the blocks of a branching statement and of its clauses."""
        return [n for n in self._branch_parts(node) if n.type == "block"]

    def branch_members(self, node: tree_sitter.Node) -> list[tree_sitter.Node]:
        """Returns the statements and comments of a branching statement's blocks.

        A comment that opens a block is the clause's child, not the block's
        (``else:`` then ``# Elsewhere ...``): it is kept, in its place, to go
        with the definition below it as at the top level.
        """
        out: list[tree_sitter.Node] = []
        for part in self._branch_parts(node):
            out.extend(part.named_children if part.type == "block" else [part])
        return out

    def _branch_parts(self, node: tree_sitter.Node) -> list[tree_sitter.Node]:
        """The blocks and comments of a statement and its clauses, in order."""
        found = []
        for child in node.named_children:
            if child.type == "block" or child.type in self.grammar.comments:
                found.append(child)
            elif child.type.endswith("_clause"):  # elif, else, except, finally
                found.extend(
                    c
                    for c in child.named_children
                    if c.type == "block" or c.type in self.grammar.comments
                )
        return found

    def defines_inside(self, node: tree_sitter.Node) -> bool:
        """Returns whether a branching statement's blocks define something."""
        if node.type not in self.grammar.branches:
            return False
        return any(
            self.role(member)[1] is not None or self.defines_inside(member)
            for block in self.blocks_of(node)
            for member in block.named_children
        )

    def names_between(self, low: int, high: int) -> list[str]:
        """Returns the identifiers that start in bytes ``low`` to ``high``."""
        first = bisect.bisect_left(self.starts, low)
        last = bisect.bisect_left(self.starts, high)
        return [name for _, name in self.identifiers[first:last]]

    def is_import(self, node: tree_sitter.Node) -> bool:
        if node.type in self.grammar.imports:
            return True
        return (
            self.grammar.name == "ruby"
            and node.type == "call"
            and self.text(node).startswith("require")
        )

    def role(self, node: tree_sitter.Node) -> tuple[tree_sitter.Node, str | None]:
        """Returns the definition inside a node (unwrapped) and what it is."""
        grammar = self.grammar
        while node.type in grammar.wrappers:
            inner = (
                node.child_by_field_name("definition")
                or node.child_by_field_name("declaration")
                or _last_named(node)
            )
            if inner is None or inner == node:
                break
            node = inner
        if node.type in grammar.functions:
            return node, "function"
        if node.type in grammar.classes:
            bodiless = node.child_by_field_name("body") is None
            if bodiless and node.type in _TAGGED_TYPES:
                return node, None  # ``struct point p;``: a use, not a definition
            return node, "class"
        if node.type in grammar.containers:
            return node, "container"
        if node.type in ("lexical_declaration", "variable_declaration"):
            declarator = node.named_children[0] if node.named_children else None
            value = (
                declarator.child_by_field_name("value")
                if declarator is not None
                else None
            )
            if value is not None and value.type in (
                "arrow_function",
                "function_expression",
                "function",
                "generator_function",
            ):
                return node, "function"
        return node, None

    def name_of(self, node: tree_sitter.Node) -> str:
        for field_name in ("name", "type"):
            named = node.child_by_field_name(field_name)
            if named is not None and field_name == "name":
                return self.text(named)
            if named is not None and node.type == "impl_item":
                return self.text(named)
        declarator = node.child_by_field_name("declarator")
        while declarator is not None:
            if declarator.type in (
                "identifier",
                "field_identifier",
                "qualified_identifier",
                "type_identifier",
                "operator_name",
                "destructor_name",
            ):
                return self.text(declarator)
            declarator = declarator.child_by_field_name(
                "declarator"
            ) or declarator.child_by_field_name("name")
        for child in node.named_children:
            if child.type in ("type_spec", "variable_declarator", "type_alias"):
                return self.name_of(child)
        return ""

    def parent_of(self, node: tree_sitter.Node, parent: str) -> str:
        receiver = node.child_by_field_name("receiver")  # a Go method
        if receiver is not None:
            names = re.findall(r"\w+", self.text(receiver))
            return names[-1] if names else parent
        return parent

    def summary_of(
        self, node: tree_sitter.Node, leading: list[tree_sitter.Node]
    ) -> str:
        docstring = self.docstring(node)
        if docstring:
            return docstring
        for comment in leading:
            line = _comment_line(self.text(comment))
            if line:
                return line
        return _signature(self.text(node))

    def docstring(self, node: tree_sitter.Node) -> str:
        body = node.child_by_field_name("body")
        if self.grammar.name != "python" or body is None or not body.named_children:
            return ""
        first = body.named_children[0]
        if first.type != "expression_statement" or not first.named_children:
            return ""
        string = first.named_children[0]
        if string.type != "string":
            return ""
        return first_line(self.text(string).strip("rRbBuUfF").strip("\"'"))

    def function(
        self,
        node: tree_sitter.Node,
        start: int,
        end: int,
        parent: str,
        leading: list[tree_sitter.Node],
        in_class: bool,
    ) -> None:
        name = self.name_of(node)
        receiver = self.parent_of(node, parent)
        kind = "method" if in_class or receiver != parent else "function"
        parent = receiver
        summary = self.summary_of(node, leading)
        if end - start + 1 <= MAX_LINES:
            self.emit(start, end, kind, name=name, parent=parent, summary=summary)
            return
        body = node.child_by_field_name("body")
        statements = body.named_children if body is not None else []
        spans = cuts(start, end, [_line(s.start_point) for s in statements])
        for part, (first, last) in enumerate(spans, start=1):
            self.emit(
                first,
                last,
                kind,
                name=name,
                parent=parent,
                summary=summary,
                part=part if len(spans) > 1 else 0,
            )

    def klass(
        self,
        node: tree_sitter.Node,
        start: int,
        end: int,
        parent: str,
        leading: list[tree_sitter.Node],
    ) -> None:
        name = self.name_of(node)
        summary = self.summary_of(node, leading)
        body = node.child_by_field_name("body")
        if end - start + 1 <= SHORT_CLASS or body is None or not body.named_children:
            self.emit(
                start,
                min(end, start + MAX_LINES - 1) if body is None else end,
                "class",
                name=name,
                parent=parent,
                summary=summary,
            )
            return
        members = list(body.named_children)
        if self.docstring(node):
            head_end = _end_line(members.pop(0))
        else:
            head_end = max(start, _line(members[0].start_point) - 1)
        self.emit(
            start,
            min(head_end, start + MAX_LINES - 1),
            "class",
            name=name,
            parent=parent,
            summary=summary,
        )
        inside = f"{parent}.{name}" if parent and name else name
        self.members(members, inside, in_class=True)

    def flush_imports(self, imports: list[tree_sitter.Node]) -> None:
        if not imports:
            return
        start, end = _line(imports[0].start_point), _end_line(imports[-1])
        for node in imports:
            self.out.modules.extend(self.modules_of(self.text(node)))
            # ``from a.b import c`` binds ``c``, not ``a`` or ``b``.
            source = node.child_by_field_name("module_name")
            low = source.end_byte if source is not None else node.start_byte
            self.imported.update(self.names_between(low, node.end_byte))
        self.emit(start, end, "imports")
        imports.clear()

    def modules_of(self, text: str) -> list[str]:
        if self.grammar.name == "python":
            return python_modules(text)
        found = []
        for match in self.grammar.module_pattern.finditer(text):
            module = next((g for g in match.groups() if g), "")
            if module:
                found.append(module)
        return found

    def flush_code(self, nodes: list[tree_sitter.Node], parent: str) -> None:
        if not nodes:
            return
        start, end = _line(nodes[0].start_point), _end_line(nodes[-1])
        for first, last in cuts(start, end, [_line(n.start_point) for n in nodes]):
            self.emit(first, last, "code", parent=parent)


def chunk_source(path: str, text: str, grammar: Grammar) -> FileChunks:
    """Returns a source file's structural chunks (module doc)."""
    from tree_sitter import QueryCursor

    parser, _ = parser_for(grammar.name)
    data = text.encode("utf-8")
    tree = parser.parse(data)
    root = tree.root_node
    if root.has_error and _error_share(root) > _ERROR_SHARE:
        return chunk_text(path, text, grammar.name, as_text=True)
    lines = text.split("\n")
    walker = _Walker(path, data, lines, grammar)
    captures = QueryCursor(identifier_query(grammar.name)).captures(root)
    walker.identifiers = sorted(
        (node.start_byte, walker.text(node)) for node in captures.get("name", [])
    )
    walker.starts = [at for at, _ in walker.identifiers]
    walker.members(root.named_children, "")
    _nested_imports(walker, root)
    _attach_imports(walker)
    walker.out.chunks, walker.out.texts = _sorted(walker.out.chunks, walker.out.texts)
    return walker.out


def _nested_imports(walker: _Walker, root: tree_sitter.Node) -> None:
    """Adds the modules that imports inside definitions name (``ctx deps``).

    A function that imports when it runs (to break a cycle, or to load a
    heavy module late) depends on that module as much as the file's head
    does. Those statements stay in their function's chunk.
    """
    seen = set(walker.out.modules)
    stack = [c for c in reversed(root.named_children) if not walker.is_import(c)]
    while stack:
        node = stack.pop()
        if walker.is_import(node):
            for module in walker.modules_of(walker.text(node)):
                if module not in seen:
                    seen.add(module)
                    walker.out.modules.append(module)
            continue
        stack.extend(reversed(node.named_children))


def _attach_imports(walker: _Walker) -> None:
    """Gives each chunk the imported names it uses."""
    if not walker.imported:
        return
    offsets = _line_offsets(walker.data)
    chunks = walker.out.chunks
    for position, chunk in enumerate(chunks):
        if chunk.kind == "imports":
            continue
        low = offsets[chunk.start - 1]
        high = offsets[chunk.end] if chunk.end < len(offsets) else len(walker.data)
        used = walker.imported.intersection(walker.names_between(low, high))
        if used:
            chunks[position] = _replace(chunk, imports=tuple(sorted(used)))


def _replace(chunk: Chunk, **changes: object) -> Chunk:
    import msgspec

    return msgspec.structs.replace(chunk, **changes)


def _sorted(chunks: list[Chunk], texts: list[str]) -> tuple[list[Chunk], list[str]]:
    order = sorted(range(len(chunks)), key=lambda i: (chunks[i].start, chunks[i].end))
    return [chunks[i] for i in order], [texts[i] for i in order]


def _line_offsets(data: bytes) -> list[int]:
    offsets = [0]
    position = data.find(b"\n")
    while position != -1:
        offsets.append(position + 1)
        position = data.find(b"\n", position + 1)
    return offsets


def _error_share(root: tree_sitter.Node) -> float:
    total = max(1, root.end_byte - root.start_byte)
    errors = sum(
        child.end_byte - child.start_byte
        for child in root.children
        if child.type == "ERROR" or child.is_missing
    )
    return errors / total


def _line(point: tree_sitter.Point | tuple[int, int]) -> int:
    return int(point[0]) + 1


def _end_line(node: tree_sitter.Node) -> int:
    row, column = node.end_point
    # A node that ends at the start of a line ends on the line before.
    return int(row) if column == 0 and row > node.start_point[0] else int(row) + 1


def _touches(comments: list[tree_sitter.Node], node: tree_sitter.Node) -> bool:
    return bool(comments) and _end_line(comments[-1]) + 1 >= _line(node.start_point)


def _last_named(node: tree_sitter.Node) -> tree_sitter.Node | None:
    return node.named_children[-1] if node.named_children else None


def _comment_line(text: str) -> str:
    for line in text.splitlines():
        stripped = line.strip().lstrip("/*#!-").strip().rstrip("*/").strip()
        if stripped and not stripped.startswith("["):
            return stripped
    return ""


def _signature(text: str) -> str:
    line = first_line(text)
    return line.rstrip("{:").strip()


def python_modules(statement: str) -> list[str]:
    """Returns the modules a Python import statement names, as written.

    ``import a.b, c`` names ``a.b`` and ``c``; ``from x import y, z`` names
    ``x``, then ``x.y`` and ``x.z`` (each may be a submodule, as in ``from .
    import util``: ``.util``).
    """
    lines = statement.replace("\\\n", " ").split("\n")
    text = " ".join(line.split("#")[0] for line in lines).strip()
    if text.startswith("import "):
        return [part.split()[0] for part in text[7:].split(",") if part.split()]
    match = _FROM_IMPORT.match(text)
    if match is None:
        return []
    module, names = match.groups()
    found = [module]
    for part in names.strip().strip("()").split(","):
        name = part.split()[0] if part.split() else ""
        if name.isidentifier():
            found.append(
                f"{module}{name}" if module.endswith(".") else f"{module}.{name}"
            )
    return found
