"""One parser for every time ctx takes (issue 16, "Ids, stores, dates")."""

from datetime import UTC, datetime, timedelta, timezone

import pytest

from ctx.engine import (
    TIME_FORMS,
    Draft,
    InvalidInputError,
    compose,
    edit,
    import_memories,
    parse_time,
    remember,
    show,
)

PLUS2 = timezone(timedelta(hours=2))


def as_plus2(moment: datetime) -> datetime:
    """A caller's local zone: two hours east."""
    return moment.replace(tzinfo=PLUS2)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2023-05-08", datetime(2023, 5, 8, tzinfo=PLUS2)),
        ("2023-05-08T13:56", datetime(2023, 5, 8, 13, 56, tzinfo=PLUS2)),
        (" 2023-05-08 13:56:30 ", datetime(2023, 5, 8, 13, 56, 30, tzinfo=PLUS2)),
        ("2023-05-08T13:56+00:00", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        ("2023-05-08T13:56Z", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
    ],
)
def test_the_absolute_forms(text, expected):
    moment = parse_time(text, "--when", local=as_plus2)
    assert moment == expected
    assert moment.utcoffset() == expected.utcoffset()


def test_a_phrase_is_read_by_the_callers_parser():
    day = datetime(2023, 5, 7, tzinfo=UTC)
    read = {"yesterday": day}.get
    assert parse_time("yesterday", "--when", phrase=read) == day


def test_a_refused_value_lists_the_forms():
    with pytest.raises(InvalidInputError) as caught:
        parse_time("soon", "--when", local=as_plus2, phrase=lambda _: None)
    assert caught.value.message == "--when 'soon' is not a time."
    assert caught.value.hint == (
        f"Use {TIME_FORMS}, or a phrase such as now, yesterday, last Tuesday or "
        "2 weeks ago."
    )
    with pytest.raises(InvalidInputError) as caught:
        parse_time("yesterday", "--when")  # no phrase reader: no phrases
    assert caught.value.hint == f"Use {TIME_FORMS}."


def test_a_time_without_offset_needs_a_local_zone():
    with pytest.raises(InvalidInputError, match="has no timezone offset"):
        parse_time("2023-05-08T13:56", "The time")


def test_a_time_out_of_range_is_refused():
    with pytest.raises(InvalidInputError, match="outside the accepted range"):
        parse_time("9999-01-01", "--when", local=as_plus2)


def test_an_import_line_gets_the_same_message_not_a_decoder_one(store, intent):
    lines = [b'{"text": "fine"}', b'{"text": "x", "when": "2023-13-45"}']
    with pytest.raises(InvalidInputError) as caught:
        import_memories(store, lines, intent)
    assert caught.value.message == "Line 2: `when` '2023-13-45' is not a time."
    assert caught.value.hint == f"Use {TIME_FORMS}."


def test_an_import_reads_when_with_the_parser_it_is_given(store, intent):
    def parse(text: str, what: str) -> datetime:
        return parse_time(text, what, local=as_plus2)

    lines = [b'{"text": "x", "when": "2023-05-08 09:00"}']
    result = import_memories(store, lines, intent, when=parse)
    memory = show(store, result.ids[0]).memory
    assert memory.created_at == datetime(2023, 5, 8, 9, tzinfo=PLUS2)


def test_edit_can_change_when_it_happened(store, intent):
    mid = remember(store, Draft(text="launch"), intent).ids[0]
    day = datetime(2023, 5, 8, tzinfo=UTC)
    assert edit(store, mid, intent, when=day).changed
    assert show(store, mid).memory.created_at == day
    with pytest.raises(InvalidInputError, match="timezone offset"):
        edit(store, mid, intent, when=datetime(2023, 5, 8))


def test_compose_shows_when_a_memory_happened_not_its_last_edit(store, intent):
    when = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    mid = remember(store, Draft(text="launch day", when=when), intent).ids[0]
    edit(store, mid, intent, body="launch day, moved")
    result = compose(store, budget=500, now=datetime(2026, 1, 9, tzinfo=UTC))
    assert result.included[0].created_at == when
    assert result.included[0].updated_at.year == 2026
    # The entry is dated when it happened; the edit's date is only in the
    # provenance after it (who wrote this version, in which commit, when).
    (entry,) = [
        line for line in result.text.splitlines() if result.included[0].id in line
    ]
    dated, provenance = entry.split("; by ", 1)
    assert "2023-05-08" in dated
    assert "2026-" not in dated
    assert f"{result.included[0].updated_at:%Y-%m-%d}" in provenance
