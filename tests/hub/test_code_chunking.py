"""Source and text files cut into chunks (issue 20): structure, summaries, imports."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from ctx.hub.code.blocks import MAX_LINES, chunk_text
from ctx.hub.code.chunking import SHORT_CLASS, chunk_file
from ctx.hub.code.languages import language_of

SAMPLES = Path(__file__).parent / "fixtures" / "code"


def cut(name: str, text: str | None = None):
    language = language_of(name)
    assert language is not None
    if text is None:
        text = (SAMPLES / name).read_text()
    return chunk_file(name, text, language)


def shape(name: str) -> list[tuple[str, str, int, int]]:
    return [(c.kind, c.qualified, c.start, c.end) for c in cut(name).chunks]


# One small file per grammar: the definitions each language has, found by
# its own tree-sitter grammar, with the enclosing class or impl named.
@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "a.js",
            [
                ("imports", "", 1, 1),
                ("function", "loadSettings", 3, 6),
                ("class", "Store", 8, 10),
                ("function", "parse", 12, 12),
            ],
        ),
        (
            "a.ts",
            [
                ("imports", "", 1, 1),
                ("class", "Shape", 2, 2),
                ("class", "Circle", 3, 5),
            ],
        ),
        (
            "a.go",
            [
                ("code", "", 1, 1),
                ("imports", "", 3, 3),
                ("function", "Greet", 5, 6),
                ("class", "T", 8, 8),
                ("method", "T.Run", 10, 10),
            ],
        ),
        (
            "a.rs",
            [
                ("imports", "", 1, 1),
                ("class", "Point", 3, 4),
                ("method", "Point.norm", 7, 7),
                ("function", "main", 10, 10),
            ],
        ),
        ("A.java", [("imports", "", 1, 1), ("class", "A", 3, 6)]),
        (
            "a.c",
            [
                ("imports", "", 1, 1),
                ("class", "point", 3, 3),
                ("function", "show", 5, 6),
            ],
        ),
        (
            "a.cpp",
            [
                ("imports", "", 1, 1),
                ("class", "geo.Box", 4, 7),
                ("function", "area", 10, 10),
            ],
        ),
        ("a.rb", [("imports", "", 1, 1), ("class", "Shop.Cart", 4, 9)]),
    ],
)
def test_each_grammar_finds_its_definitions(name, expected):
    assert shape(name) == expected


def test_a_comment_above_a_definition_is_its_summary():
    summaries = {c.name: c.summary for c in cut("a.js").chunks}
    assert summaries["loadSettings"] == "Reads the settings file."
    assert summaries["Store"] == "class Store"  # no comment: the signature
    assert {c.name: c.summary for c in cut("a.go").chunks}[
        "Greet"
    ] == "Greet says hello."
    assert {c.name: c.summary for c in cut("a.rs").chunks}["Point"] == "A point."


def test_imports_are_grouped_and_each_chunk_knows_the_names_it_uses():
    source = (
        "import os\n"
        "from pathlib import Path as P\n"
        "\n"
        "# Joins.\n"
        "@cache\n"
        "def join(a):\n"
        '    """Joins a path.\n\n    More.\n    """\n'
        "    return os.path.join(P(a))\n"
        "\n"
        "def plain():\n"
        "    return 1\n"
    )
    result = cut("m.py", source)
    imports, join, plain = result.chunks
    assert (imports.kind, imports.start, imports.end) == ("imports", 1, 2)
    assert (join.kind, join.name, join.start, join.end) == ("function", "join", 4, 11)
    assert join.summary == "Joins a path."
    assert join.imports == ("P", "os")
    assert plain.imports == ()
    assert result.modules == ["os", "pathlib", "pathlib.Path"]  # Path may be a module
    assert result.texts[1].startswith("# Joins.\n@cache\ndef join")


def test_a_long_class_gives_its_head_and_its_methods():
    methods = "".join(
        f"    def m{i}(self):\n        return {i}\n\n"
        for i in range(SHORT_CLASS // 3 + 1)
    )
    source = f'class Big(Base):\n    """A big one."""\n\n    size = 3\n\n{methods}'
    chunks = cut("big.py", source).chunks
    assert (chunks[0].kind, chunks[0].name, chunks[0].start, chunks[0].end) == (
        "class",
        "Big",
        1,
        2,
    )
    assert chunks[0].summary == "A big one."
    assert chunks[1].kind == "code"
    assert chunks[1].parent == "Big"
    assert [(c.kind, c.parent) for c in chunks[2:]] == [("method", "Big")] * (
        SHORT_CLASS // 3 + 1
    )


def test_definitions_in_an_if_or_a_try_are_chunked_as_any_other():
    # A platform's branch, a fallback when an import fails: everyday Python
    # (os.fwalk, subprocess.Popen.kill) that was one chunk of plain code.
    fields = "".join(f"    x{i} = {i}\n" for i in range(SHORT_CLASS))
    source = (
        "import sys\n"
        "if sys.platform == 'win32':\n"
        "    def fwalk():\n        return 1\n"
        "try:\n    from fast import speedy\n"
        "except ImportError:\n    def speedy():\n        return 8\n"
        f"class Popen:\n{fields}"
        "    if sys.platform == 'win32':\n"
        "        def kill(self):\n            return 1\n"
        "    else:\n"
        "        def kill(self):\n            return 2\n"
        "        def terminate(self):\n            return 3\n"
        "if __name__ == '__main__':\n    print(fwalk())\n"
    )
    defined = [
        (c.kind, c.name, c.parent)
        for c in cut("cond.py", source).chunks
        if c.kind in ("function", "method")
    ]
    assert defined == [
        ("function", "fwalk", ""),
        ("function", "speedy", ""),
        ("method", "kill", "Popen"),
        ("method", "kill", "Popen"),
        ("method", "terminate", "Popen"),
    ]
    # A branch that defines nothing stays a statement among the others.
    assert cut("cond.py", source).chunks[-1].kind == "code"
    # A comment that opens a block belongs to the clause in the syntax tree:
    # it still goes with the definition below it.
    commented = (
        "if sys.platform == 'win32':\n"
        "    # Windows needs the long path prefix.\n"
        "    def fix_path(p):\n        return p\n"
        "else:\n"
        "    # Elsewhere paths are left alone.\n"
        "    def fix_path(p):\n        return p\n"
    )
    chunks = cut("paths.py", commented).chunks
    assert [(c.start, c.end, c.summary) for c in chunks] == [
        (2, 4, "Windows needs the long path prefix."),
        (6, 8, "Elsewhere paths are left alone."),
    ]


def test_a_long_function_is_cut_between_statements_never_inside_one():
    statements = "".join(f"    x{i} = {i}\n" for i in range(MAX_LINES))
    block = "    if x0:\n" + "".join(f"        y{i} = {i}\n" for i in range(30))
    source = f"def long():\n    '''Long.'''\n{statements}{block}    return x0\n"
    chunks = cut("long.py", source).chunks
    assert len(chunks) > 1
    assert [c.part for c in chunks] == list(range(1, len(chunks) + 1))
    assert {c.name for c in chunks} == {"long"}
    assert {c.summary for c in chunks} == {"Long."}
    assert chunks[0].start == 1
    assert chunks[-1].end == source.count("\n")
    for before, after in itertools.pairwise(chunks):
        assert after.start == before.end + 1  # contiguous: no line lost
    if_line = source.split("\n").index("    if x0:") + 1
    assert not any(c.start < if_line + 1 <= c.end < if_line + 31 for c in chunks)


def test_a_file_that_does_not_parse_is_cut_as_text():
    result = cut("broken.py", "def (((:\n  ]]]] }}}} \n" * 20)
    assert result.as_text
    assert {c.kind for c in result.chunks} == {"text"}


def test_markdown_is_cut_at_headings_outside_code_fences():
    text = "# Title\n\nIntro.\n\n## Install\n\n```\n# not a heading\n```\n\n## Use\n\nRun it.\n"
    chunks = chunk_text("README.md", text, "markdown").chunks
    assert [(c.kind, c.name, c.start, c.end) for c in chunks] == [
        ("section", "Title", 1, 3),
        ("section", "Install", 5, 9),
        ("section", "Use", 11, 13),
    ]


@pytest.mark.parametrize(
    ("name", "text", "names"),
    [
        (
            "c.toml",
            '[project]\nname = "x"\nversion = "1"\n\n[tool.ruff]\nline = 88\n',
            ["[project]", "[tool.ruff]"],
        ),
        (
            "c.yaml",
            "jobs:\n  test:\n    runs: pytest\n\non:\n  push: true\n  pull: true\n",
            ["jobs", "on"],
        ),
        (
            "c.json",
            '{\n  "scripts": {\n    "a": 1,\n    "b": 2\n  },\n  "deps": {\n    "x": 1\n  }\n}\n',
            ["", "scripts", "deps"],
        ),
    ],
)
def test_config_files_are_cut_at_their_top_level_keys(name, text, names):
    language = language_of(name)
    assert language is not None
    chunks = chunk_file(name, text, language).chunks
    assert [c.name for c in chunks] == names
    assert {c.kind for c in chunks} == {"config"}
