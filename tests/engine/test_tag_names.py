"""Tags of any script, and a clear error for a tag that is truly bad (issue 29)."""

from datetime import UTC, datetime

import pytest

from ctx.engine import Draft, InvalidInputError, log, remember
from ctx.engine.model import check_tag
from ctx.engine.selection import select

NOW = datetime(2026, 3, 20, 12, tzinfo=UTC)


@pytest.mark.parametrize(
    "tag",
    [
        "项目:api",
        "プロジェクト:キュー",
        "thème:été",
        "हिंदी:परियोजना",  # a namespace with combining vowel signs
        "speaker:fahim-khan",
        "v2.ns_x-y:a:b",
    ],
)
def test_a_tag_of_any_script_is_kept_and_found(store, intent, tag):
    [memory_id] = remember(store, Draft(text="x", tags=(tag,)), intent).ids
    found = select(store, f"tag:{tag}", now=NOW)
    assert [s.record.memory.id for s in found] == [memory_id]
    assert found[0].record.memory.tags == (tag,)


@pytest.mark.parametrize(
    ("tag", "message"),
    [
        ("nocolon", "Tag 'nocolon' is not of the form namespace:value."),
        ("项目", "Tag '项目' is not of the form namespace:value."),
        (":api", "Tag ':api' is not of the form namespace:value."),
        ("项目:", "Tag '项目:' is not of the form namespace:value."),
        ("a b:c", "Tag 'a b:c' holds a space."),
        ("项目:a\u3000b", "Tag '项目:a\\u3000b' holds a space."),
        ("a:b\x07", "Tag 'a:b\\x07' holds a control character."),
        (
            "-x:y",
            "Tag '-x:y' has a namespace of other characters than letters, digits,"
            " '_', '.' and '-' (starting with a letter or digit).",
        ),
        (
            "a@b:y",
            "Tag 'a@b:y' has a namespace of other characters than letters, digits,"
            " '_', '.' and '-' (starting with a letter or digit).",
        ),
        (
            "a:" + "b" * 200,
            f"Tag {'a:' + 'b' * 38!r}... is longer than 128 characters.",
        ),
    ],
)
def test_a_bad_tag_gets_one_line_that_says_what_is_wrong(store, intent, tag, message):
    with pytest.raises(InvalidInputError) as info:
        check_tag(tag)
    assert info.value.message == message
    assert "\n" not in message
    before = log(store)
    with pytest.raises(InvalidInputError):
        remember(store, Draft(text="x", tags=(tag,)), intent)
    assert log(store) == before
