"""The languages the code index knows: file names, grammars, and node kinds.

Source languages are parsed with tree-sitter through the per-language grammar
wheels (``tree-sitter-python`` and so on), which ship their compiled grammar
and need no network; each :class:`Grammar` names the node kinds that make a
function, a class, a container to look inside (an ``impl``, a namespace), an
import, a comment, and a wrapper to unwrap (a decorator, an ``export``).
Markdown, JSON, YAML and TOML are cut as text blocks (:data:`TEXT_LANGUAGES`).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tree_sitter

__all__ = [
    "GRAMMARS",
    "LANGUAGES",
    "SYMBOL_KINDS",
    "TEXT_LANGUAGES",
    "Grammar",
    "language_of",
    "parser_for",
]


@dataclass(frozen=True)
class Grammar:
    """How one language's syntax tree is cut into chunks.

    Attributes:
        name: The language's name.
        module: The grammar wheel's module.
        function: The name of the module's function that returns the grammar.
        extensions: File name endings, with their dot.
        functions: Node kinds of functions and methods.
        classes: Node kinds of classes, structs, interfaces, traits, enums.
        containers: Node kinds whose members are chunked one by one, as
            members of their name (an ``impl``, a namespace, a module).
        imports: Node kinds of import statements.
        comments: Node kinds of comments (a comment just above a definition
            belongs to it).
        wrappers: Node kinds around a definition (decorators, ``export``,
            ``template``): the chunk covers the wrapper.
        module_pattern: Finds the modules an import names (group 1).
        branches: Node kinds of statements whose blocks may define what
            another branch defines otherwise (Python's ``if`` / ``else`` of a
            platform, ``try: import`` / ``except ImportError: def``): their
            definitions are chunked as if they stood where the statement does.
    """

    name: str
    module: str
    function: str
    extensions: tuple[str, ...]
    functions: frozenset[str]
    classes: frozenset[str]
    containers: frozenset[str]
    imports: frozenset[str]
    comments: frozenset[str]
    wrappers: frozenset[str]
    module_pattern: re.Pattern[str]
    branches: frozenset[str] = frozenset()


def _kinds(text: str) -> frozenset[str]:
    return frozenset(text.split())


_QUOTED = re.compile(r"""["'`]([^"'`\s]+)["'`]""")

_TYPESCRIPT = Grammar(
    name="typescript",
    module="tree_sitter_typescript",
    function="language_typescript",
    extensions=(".ts", ".mts", ".cts"),
    functions=_kinds(
        "function_declaration generator_function_declaration method_definition"
        " function_signature method_signature abstract_method_signature"
    ),
    classes=_kinds(
        "class_declaration abstract_class_declaration interface_declaration"
        " enum_declaration type_alias_declaration"
    ),
    containers=_kinds("internal_module module"),
    imports=_kinds("import_statement"),
    comments=_kinds("comment"),
    wrappers=_kinds("export_statement ambient_declaration"),
    module_pattern=_QUOTED,
)

GRAMMARS: tuple[Grammar, ...] = (
    Grammar(
        name="python",
        module="tree_sitter_python",
        function="language",
        extensions=(".py", ".pyi"),
        functions=_kinds("function_definition"),
        classes=_kinds("class_definition"),
        containers=frozenset(),
        imports=_kinds(
            "import_statement import_from_statement future_import_statement"
        ),
        comments=_kinds("comment"),
        wrappers=_kinds("decorated_definition"),
        module_pattern=re.compile(
            r"(?:from\s+(\.*[\w.]*)\s+import|^\s*import\s+([\w.]+))"
        ),
        branches=_kinds("if_statement try_statement with_statement"),
    ),
    Grammar(
        name="javascript",
        module="tree_sitter_javascript",
        function="language",
        extensions=(".js", ".mjs", ".cjs", ".jsx"),
        functions=_kinds(
            "function_declaration generator_function_declaration method_definition"
        ),
        classes=_kinds("class_declaration"),
        containers=frozenset(),
        imports=_kinds("import_statement"),
        comments=_kinds("comment"),
        wrappers=_kinds("export_statement"),
        module_pattern=_QUOTED,
    ),
    _TYPESCRIPT,
    dataclasses.replace(
        _TYPESCRIPT, name="tsx", function="language_tsx", extensions=(".tsx",)
    ),
    Grammar(
        name="go",
        module="tree_sitter_go",
        function="language",
        extensions=(".go",),
        functions=_kinds("function_declaration method_declaration"),
        classes=_kinds("type_declaration"),
        containers=frozenset(),
        imports=_kinds("import_declaration"),
        comments=_kinds("comment"),
        wrappers=frozenset(),
        module_pattern=re.compile(r'"([^"]+)"'),
    ),
    Grammar(
        name="rust",
        module="tree_sitter_rust",
        function="language",
        extensions=(".rs",),
        functions=_kinds("function_item function_signature_item"),
        classes=_kinds("struct_item enum_item union_item trait_item type_item"),
        containers=_kinds("impl_item mod_item"),
        imports=_kinds("use_declaration extern_crate_declaration"),
        comments=_kinds("line_comment block_comment attribute_item"),
        wrappers=frozenset(),
        module_pattern=re.compile(r"(?:use|crate)\s+([\w:]+)"),
    ),
    Grammar(
        name="java",
        module="tree_sitter_java",
        function="language",
        extensions=(".java",),
        functions=_kinds("method_declaration constructor_declaration"),
        classes=_kinds(
            "class_declaration interface_declaration enum_declaration"
            " record_declaration annotation_type_declaration"
        ),
        containers=frozenset(),
        imports=_kinds("import_declaration package_declaration"),
        comments=_kinds("line_comment block_comment"),
        wrappers=frozenset(),
        module_pattern=re.compile(r"import\s+(?:static\s+)?([\w.]+)"),
    ),
    Grammar(
        name="c",
        module="tree_sitter_c",
        function="language",
        extensions=(".c", ".h"),
        functions=_kinds("function_definition"),
        classes=_kinds(
            "struct_specifier enum_specifier union_specifier type_definition"
        ),
        containers=frozenset(),
        imports=_kinds("preproc_include"),
        comments=_kinds("comment"),
        wrappers=frozenset(),
        module_pattern=re.compile(r"#\s*include\s*[<\"]([^>\"]+)[>\"]"),
    ),
    Grammar(
        name="cpp",
        module="tree_sitter_cpp",
        function="language",
        extensions=(".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx", ".h++", ".c++"),
        functions=_kinds("function_definition"),
        classes=_kinds(
            "class_specifier struct_specifier enum_specifier union_specifier"
            " type_definition"
        ),
        containers=_kinds("namespace_definition linkage_specification"),
        imports=_kinds("preproc_include using_declaration"),
        comments=_kinds("comment"),
        wrappers=_kinds("template_declaration"),
        module_pattern=re.compile(r"#\s*include\s*[<\"]([^>\"]+)[>\"]"),
    ),
    Grammar(
        name="ruby",
        module="tree_sitter_ruby",
        function="language",
        extensions=(".rb", ".rake"),
        functions=_kinds("method singleton_method"),
        classes=_kinds("class"),
        containers=_kinds("module"),
        imports=frozenset(),  # ``require`` is a call: see ruby_require
        comments=_kinds("comment"),
        wrappers=frozenset(),
        module_pattern=re.compile(r"""require(?:_relative)?\s*\(?\s*["']([^"']+)"""),
    ),
)

TEXT_LANGUAGES: dict[str, str] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".json": "json",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
}
"""Files cut into text blocks: Markdown by heading, the others by top-level key."""

LANGUAGES = tuple(sorted({g.name for g in GRAMMARS} | set(TEXT_LANGUAGES.values())))
"""Every language a chunk may be in (``ctx find --language``)."""
SYMBOL_KINDS = ("class", "function", "method", "section", "config")
"""The kinds of chunk listed as definitions (``ctx symbols --kind``)."""

_BY_EXTENSION = {ext: g for g in GRAMMARS for ext in g.extensions}
_BY_NAME = {g.name: g for g in GRAMMARS}


def language_of(path: str) -> str | None:
    """Returns the language of a file by its name, or None if unknown."""
    suffix = os.path.splitext(path)[1].lower()  # PurePosixPath's suffix, 20x cheaper
    grammar = _BY_EXTENSION.get(suffix)
    if grammar is not None:
        return grammar.name
    return TEXT_LANGUAGES.get(suffix)


def grammar_of(language: str) -> Grammar | None:
    """Returns the grammar of a source language, None for a text language."""
    return _BY_NAME.get(language)


@functools.cache
def parser_for(language: str) -> tuple[tree_sitter.Parser, tree_sitter.Language]:
    """Returns a parser for a source language and its grammar (loaded once).

    Raises:
        ImportError: The grammar wheel is not installed.
    """
    import tree_sitter

    grammar = _BY_NAME[language]
    module = importlib.import_module(grammar.module)
    loaded = tree_sitter.Language(getattr(module, grammar.function)())
    return tree_sitter.Parser(loaded), loaded


@functools.cache
def identifier_query(language: str) -> tree_sitter.Query:
    """Returns the query that finds every identifier-like node of a language."""
    import tree_sitter

    _, loaded = parser_for(language)
    kinds = [
        kind
        for kind in (
            "identifier",
            "type_identifier",
            "field_identifier",
            "property_identifier",
            "constant",
            "namespace_identifier",
            "package_identifier",
        )
        if _has_kind(loaded, kind)
    ]
    pattern = " ".join(f"({kind}) @name" for kind in kinds)
    return tree_sitter.Query(loaded, pattern)


def _has_kind(language: tree_sitter.Language, kind: str) -> bool:
    return language.id_for_node_kind(kind, True) not in (None, 0)
