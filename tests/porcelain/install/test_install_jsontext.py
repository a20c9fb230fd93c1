"""JsonText edits JSON as text: whatever the file's layout, an added member
parses as added, and removing it gives back the same bytes (hypothesis)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctx.engine import InvalidInputError
from ctx.porcelain.install.jsontext import JsonText

KEYS = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=6)
SCALARS = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3)
    ),
    max_leaves=8,
)
LAYOUTS = st.sampled_from([None, 2, 4, "\t", 1])
DOCS = st.dictionaries(KEYS, VALUES, max_size=4)


def layout(doc: dict, indent, newline: bool) -> str:
    return json.dumps(doc, indent=indent, ensure_ascii=False) + (
        "\n" if newline else ""
    )


@given(doc=DOCS, indent=LAYOUTS, newline=st.booleans(), key=KEYS, value=VALUES)
def test_a_member_added_then_removed_gives_back_the_bytes(
    doc, indent, newline, key, value
):
    text = layout(doc, indent, newline)
    edited = JsonText(Path("f.json"), text)
    if key in doc:
        return
    edited.append((), key, value)
    assert json.loads(edited.text) == {**doc, key: value}
    assert list(json.loads(edited.text)) == [*doc, key]
    edited.remove((), key)
    assert edited.text == text


@given(
    items=st.lists(VALUES, min_size=1, max_size=4),
    indent=LAYOUTS,
    value=VALUES,
)
def test_an_item_added_then_removed_gives_back_the_bytes(items, indent, value):
    text = layout({"a": items, "z": 1}, indent, True)
    edited = JsonText(Path("f.json"), text)
    edited.append(("a",), None, value)
    assert json.loads(edited.text) == {"a": [*items, value], "z": 1}
    edited.remove(("a",), len(items))
    assert edited.text == text


def test_a_hand_laid_file_keeps_its_layout():
    text = '{ "a" : [1,2],\n\t"b":{ "c" :3 } }'
    edited = JsonText(Path("f.json"), text)
    edited.append(("b",), "d", [4])
    assert edited.text == '{ "a" : [1,2],\n\t"b":{ "c" :3, "d": [4] } }'
    edited.remove(("b",), "d")
    assert edited.text == text
    edited.append((), "e", {"f": 5})
    assert (
        edited.text == '{ "a" : [1,2],\n\t"b":{ "c" :3 },\n\t"e": {\n\t  "f": 5\n\t} }'
    )


def commented(text: str) -> str:
    """The text with comments as Gemini CLI's and Cursor's settings hold them:
    on the first line, trailing members (the last one too), and on lines of
    their own above members."""
    lines = text.split("\n")
    lines[0] = "/* settings: // not a line comment */ " + lines[0] + " // the top"
    out = []
    for line in lines[:-1] if len(lines) > 1 else lines:
        stripped = line.lstrip()
        if stripped.startswith('"') and len(out) > 1:
            out.append(line[: len(line) - len(stripped)] + "// about what follows")
        if line.rstrip().endswith(",") or stripped.startswith('"'):
            line += ' // a note, with a "quote" and a /* that opens nothing'
        out.append(line)
    return "\n".join(out + lines[-1:] if len(lines) > 1 else out)


@given(doc=DOCS, indent=LAYOUTS, key=KEYS, value=VALUES)
def test_a_file_with_comments_is_edited_and_keeps_them(doc, indent, key, value):
    text = commented(layout(doc, indent, True))
    edited = JsonText(Path("settings.json"), text)
    assert edited.data == doc
    if key in doc:
        return
    edited.append((), key, value)
    assert JsonText(Path("settings.json"), edited.text).data == {**doc, key: value}
    edited.remove((), key)
    assert edited.text == text


def test_comments_in_strings_are_text_and_an_open_comment_is_refused():
    text = '{\n  "url": "http://x//y", // the server\n  "b": "/*"\n}\n'
    assert JsonText(Path("f.json"), text).data == {"url": "http://x//y", "b": "/*"}
    with pytest.raises(InvalidInputError, match=r"is not valid JSON \(a /\* comment"):
        JsonText(Path("f.json"), '{"a": 1 /* never closed\n}')


@pytest.mark.parametrize(
    "text",
    [
        "{\n  // nothing yet\n}\n",
        "{ /* nothing yet */ }\n",
        '{\n  "hooks": {\n    // ours, soon\n  }\n}\n',
        '{\n  "a": 1, // about a\n  // about b\n  "b": 2\n}\n',
    ],
)
def test_comments_stay_as_a_member_comes_and_goes(text):
    edited = JsonText(Path("settings.json"), text)
    where = ("hooks",) if "hooks" in edited.data else ()
    edited.append(where, "ctx", {"command": "ctx"})
    again = JsonText(Path("settings.json"), edited.text)
    assert again.data == {**edited.data}
    for comment in ("nothing yet", "ours, soon", "about a", "about b"):
        assert (comment in text) == (comment in edited.text)
    edited.remove(where, "ctx")
    assert edited.text == text
    assert edited.encode() == text  # comments alone are not an empty file


def test_removing_the_first_member_keeps_the_comments_of_the_next():
    text = '{\n  "a": 1, // about a\n  // about b\n  "b": 2\n}\n'
    edited = JsonText(Path("settings.json"), text)
    edited.remove((), "a")
    assert edited.text == '{\n  // about b\n  "b": 2\n}\n'
    edited = JsonText(Path("settings.json"), text)
    edited.remove((), "b")  # a comment on a line of its own is kept
    assert edited.text == '{\n  "a": 1 // about a\n  // about b\n}\n'
    edited = JsonText(Path("settings.json"), '{"a": 1,\n  // about b\n  "b": 2}')
    edited.remove((), "a")
    assert edited.text == '{// about b\n  "b": 2}'


def test_the_indentation_is_read_past_a_comment():
    edited = JsonText(Path("settings.json"), '{ // the top\n    "a": 1\n}\n')
    assert edited.unit == "    "


def test_a_middle_member_goes_with_its_comma_and_its_comment():
    text = (
        '{\n  "gh": {"command": "gh"}, // my GitHub server\n'
        '  "ctx": {"command": "ctx"}, // memory\n  "fs": {"command": "fs"}\n}\n'
    )
    edited = JsonText(Path("settings.json"), text)
    edited.remove((), "ctx")
    assert edited.text == (
        '{\n  "gh": {"command": "gh"}, // my GitHub server\n'
        '  "fs": {"command": "fs"}\n}\n'
    )
    edited = JsonText(Path("settings.json"), '{"a": 1,\n"b": 2 // about b\n}')
    edited.remove((), "b")
    assert edited.text == '{"a": 1\n}'


def test_a_block_comment_over_several_lines_is_edited_around():
    text = '{\n  "gh": 1, /* pinned to v2,\n  see wiki */\n  "ctx": 2\n}\n'
    edited = JsonText(Path("settings.json"), text)
    edited.remove((), "ctx")
    assert JsonText(Path("settings.json"), edited.text).data == {"gh": 1}
    assert "see wiki */" in edited.text
    edited.append((), "ctx", 2)
    assert JsonText(Path("settings.json"), edited.text).data == {"gh": 1, "ctx": 2}
