"""The parser of <ctx:*> commands: examples, and any text (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctx.hub.calls.markup import MAX_COMMANDS, SPECS, parse_commands, wrap_context
from ctx.porcelain.hooks.actions import _ACTIONS


def names(text: str) -> list[str]:
    return [c.name for c in parse_commands(text).commands]


def test_every_command_has_an_action():
    assert set(SPECS) == set(_ACTIONS)


def test_the_commands_of_a_message_in_order():
    parsed = parse_commands(
        "I'll note that.\n"
        '<ctx:remember type="decision" tags="project:x, tier:reference">\n'
        "  We use Postgres.\n</ctx:remember>\n"
        "<ctx:recall query='how do we deploy?'/> and <ctx:status/>\n"
        '<ctx:summarize nodes="A,B" archive="true">Both say X.</ctx:summarize>\n'
        '<ctx:link from="A" to="B" type="DEPENDS_ON"/><ctx:expand node="S"/>\n'
        '<ctx:supersede old="A" new="B"/><ctx:status>'
    )
    assert parsed.errors == ()
    assert [c.name for c in parsed.commands] == [
        "remember",
        "recall",
        "status",
        "summarize",
        "link",
        "expand",
        "supersede",
        "status",
    ]
    remember = parsed.commands[0]
    assert remember.attrs == {"type": "decision", "tags": "project:x, tier:reference"}
    assert remember.body == "We use Postgres."
    assert parsed.commands[1].attrs == {"query": "how do we deploy?"}


@pytest.mark.parametrize(
    "text",
    [
        "```\n<ctx:status/>\n```",
        "```python\n<ctx:status/>\n",  # an unclosed fence runs to the end
        "   ~~~~\n<ctx:status/>\n~~~~",
        "Type `<ctx:status/>` to see it.",
        "Type ``<ctx:status/>`` to see it.",
        "> <ctx:status/>",
        "   > quoted <ctx:status/>",
        '<ctx:context source="x">\n<ctx:status/>\n</ctx:context>',
        '<ctx:context source="x">\n<ctx:status/>',  # an unclosed marker too
        wrap_context("<ctx:recall query='x'/>", "session-start"),
    ],
)
def test_code_quotes_and_injected_text_hold_no_command(text):
    assert parse_commands(text).commands == ()
    assert parse_commands(text).errors == ()


def test_text_after_a_closed_fence_is_read():
    assert names("```\n<ctx:status/>\n```\n<ctx:status/>") == ["status"]


def test_a_body_may_hold_code_and_quotes():
    parsed = parse_commands(
        "<ctx:remember>Run `make check`.\n> quoted\n```\nx\n```\n</ctx:remember>"
    )
    assert parsed.commands[0].body == "Run `make check`.\n> quoted\n```\nx\n```"


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("<ctx:bogus/>", "line 1: <ctx:bogus> is not a command (known: expand, "),
        (
            '<ctx:link from="A"/>',
            "line 1: <ctx:link> needs the attribute 'to'; not run.",
        ),
        ('<ctx:link from="A" to="B" kind="x"/>', "has unknown attribute 'kind'"),
        ("<ctx:remember>no end", "<ctx:remember> has no closing </ctx:remember>"),
        ("<ctx:remember></ctx:remember>", "needs a text between its tags"),
        ('<ctx:recall query=""/>', "needs the attribute 'query'"),
        (
            '\n\n<ctx:recall query="unclosed/>',
            "line 3: '<ctx:recall query=\"unclosed/>' is not a command",
        ),
        ("<ctx:status", "is not a command (an unclosed tag or quote)"),
    ],
)
def test_malformed_commands_are_reported_not_run(text, error):
    parsed = parse_commands(text)
    assert parsed.commands == ()
    assert len(parsed.errors) == 1
    assert error in parsed.errors[0]


def test_a_malformed_command_leaves_the_others():
    assert names('<ctx:link from="A"/> <ctx:status/>') == ["status"]


def test_too_many_commands_are_cut():
    parsed = parse_commands("<ctx:status/>" * (MAX_COMMANDS + 5))
    assert len(parsed.commands) == MAX_COMMANDS
    assert parsed.errors == (
        f"More than {MAX_COMMANDS} commands in one message; the rest were not run.",
    )


PIECES = st.sampled_from(
    [
        "<ctx:",
        "</ctx:",
        "remember",
        "recall",
        "status",
        "context",
        "link",
        "bogus",
        " ",
        "\n",
        ">",
        "/>",
        "/",
        '"',
        "'",
        "=",
        "query",
        'from="A"',
        ' to="B"',
        "`",
        "```",
        "~~~",
        "\n> ",
        "text",
        "é",
        "\x00",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(), st.lists(PIECES, max_size=40).map("".join)))
def test_any_text_gives_commands_or_errors_never_a_traceback(text):
    parsed = parse_commands(text)
    for command in parsed.commands:
        assert command.name in SPECS
        assert command.source[:20] in text
        spec = SPECS[command.name]
        assert set(spec.required) <= set(command.attrs)
        assert not spec.body or command.body
    assert len(parsed.commands) + len(parsed.errors) <= MAX_COMMANDS + 1


SAFE = st.text(
    st.characters(
        blacklist_characters='"<>`\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029',
        blacklist_categories=("Cs",),
    ),
    min_size=1,
    max_size=30,
).filter(lambda s: s.strip() and not s.lstrip().startswith((">", "~")))


@settings(max_examples=200, deadline=None)
@given(query=SAFE, body=SAFE, tags=SAFE)
def test_a_well_formed_command_is_read_back_as_written(query, body, tags):
    text = (
        f'Before.\n<ctx:remember tags="{tags}">{body}</ctx:remember>\n'
        f'<ctx:recall query="{query}"/>\nAfter.'
    )
    parsed = parse_commands(text)
    assert parsed.errors == ()
    remember, recall = parsed.commands
    assert remember.attrs == {"tags": tags}
    assert remember.body == body.strip()
    assert recall.attrs == {"query": query}
