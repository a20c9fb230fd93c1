"""Every time option reads the same forms (issue 16, "Ids, stores, dates")."""

from datetime import datetime, timedelta

import pytest

from ctx.engine import TIME_FORMS

HINT = (
    f"Hint: Use {TIME_FORMS}, or a phrase such as now, yesterday, last Tuesday or "
    "2 weeks ago.\n"
)


def _midnight(days_ago: int) -> datetime:
    today = datetime.now().astimezone().replace(hour=0, minute=0, second=0)
    return (today - timedelta(days=days_ago)).replace(microsecond=0)


def test_remember_and_edit_take_a_phrase(ctx):
    mid = ctx("remember", "Deployed v2", "--when", "yesterday").stdout.strip()
    shown = datetime.fromisoformat(ctx.json("show", mid)["memory"]["created_at"])
    assert shown == _midnight(1)
    ctx("edit", mid, "--when", "2023-05-08 13:56")
    shown = datetime.fromisoformat(ctx.json("show", mid)["memory"]["created_at"])
    assert shown == datetime(2023, 5, 8, 13, 56).astimezone()


def test_import_takes_what_when_takes(ctx, tmp_path):
    lines = tmp_path / "notes.jsonl"
    lines.write_text(
        '{"text": "a", "when": "yesterday"}\n{"text": "b", "when": "2023-05-08"}\n'
    )
    ids = ctx.json("import", str(lines))["ids"]
    times = [ctx.json("show", mid)["memory"]["created_at"] for mid in ids]
    assert [datetime.fromisoformat(t) for t in times] == [
        _midnight(1),
        datetime(2023, 5, 8).astimezone(),
    ]


def test_recall_now_and_at_take_phrases(ctx):
    ctx("remember", "Queue is Postgres")
    asked = ctx.json("recall", "queue", "--now", "3 days ago")["now"]
    assert datetime.fromisoformat(asked) == _midnight(3)
    assert len(ctx.json("recall", "queue", "--at", "now")["hits"]) == 1
    assert len(ctx.json("search", "queue", "--now", "last Tuesday")["hits"]) == 1


@pytest.mark.parametrize(
    ("args", "what"),
    [
        (["remember", "x", "--when", "someday"], "--when"),
        (["recall", "q", "--now", "someday"], "--now"),
        (["search", "q", "--now", "someday"], "--now"),
    ],
)
def test_a_refused_time_gets_one_message_with_the_forms(ctx, args, what):
    before = ctx.files()
    out = ctx(*args, code=4)
    assert out.stderr == f"Error: {what} 'someday' is not a time.\n{HINT}"
    assert ctx.files() == before


def test_a_refused_time_in_an_import_line(ctx, tmp_path):
    lines = tmp_path / "notes.jsonl"
    lines.write_text('{"text": "a"}\n{"text": "b", "when": "2023-13-45"}\n')
    before = ctx.files()
    out = ctx("import", str(lines), code=4)
    assert out.stderr == f"Error: Line 2: `when` '2023-13-45' is not a time.\n{HINT}"
    assert ctx.files() == before


def test_compose_dates_a_memory_by_when_it_happened(ctx):
    mid = ctx("remember", "Launch day", "--when", "2023-05-08").stdout.strip()
    ctx("edit", mid, "--body", "Launch day, moved")
    text = ctx("compose", "--format", "text", "--budget", "500").stdout
    assert f"({mid}, 2023-05-08, working)" in text
