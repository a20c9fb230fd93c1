import re
from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctx.hub.retrieval.temporal.parse import (
    Cycle,
    Relation,
    TemporalQuery,
    Window,
    cycle_value,
    extract_dates,
    extract_windows,
    parse_temporal,
)
from ctx.hub.retrieval.temporal.rules import key_classes

# A Saturday afternoon.
NOW = datetime(2023, 5, 20, 15, tzinfo=UTC)


def at(y, m, d, h=0, minute=0):
    return datetime(y, m, d, h, minute, tzinfo=UTC)


def only_window(query, now=NOW):
    parsed = parse_temporal(query, now)
    assert len(parsed.windows) == 1, parsed
    assert not parsed.cycles
    assert not parsed.relations
    return parsed.windows[0]


WINDOWS = [
    # relative days
    ("today", at(2023, 5, 20), at(2023, 5, 21), "day"),
    ("yesterday", at(2023, 5, 19), at(2023, 5, 20), "day"),
    ("tomorrow", at(2023, 5, 21), at(2023, 5, 22), "day"),
    ("the day before yesterday", at(2023, 5, 18), at(2023, 5, 19), "day"),
    ("the day after tomorrow", at(2023, 5, 22), at(2023, 5, 23), "day"),
    ("3 days ago", at(2023, 5, 17), at(2023, 5, 18), "day"),
    ("three days ago", at(2023, 5, 17), at(2023, 5, 18), "day"),
    ("a few days ago", at(2023, 5, 17), at(2023, 5, 18), "day"),
    ("in 3 days", at(2023, 5, 23), at(2023, 5, 24), "day"),
    ("in two days' time", at(2023, 5, 22), at(2023, 5, 23), "day"),
    ("2 hours ago", at(2023, 5, 20, 13), at(2023, 5, 20, 14), "hour"),
    ("two weeks ago", at(2023, 5, 1), at(2023, 5, 8), "week"),
    ("a couple of weeks ago", at(2023, 5, 1), at(2023, 5, 8), "week"),
    ("a fortnight ago", at(2023, 5, 1), at(2023, 5, 8), "week"),
    ("a month ago", at(2023, 4, 1), at(2023, 5, 1), "month"),
    ("five years ago", at(2018, 1, 1), at(2019, 1, 1), "year"),
    ("a few years back", at(2020, 1, 1), at(2021, 1, 1), "year"),
    ("two weekends ago", at(2023, 5, 6), at(2023, 5, 8), "day"),
    # calendar periods
    ("last week", at(2023, 5, 8), at(2023, 5, 15), "week"),
    ("this week", at(2023, 5, 15), at(2023, 5, 22), "week"),
    ("next week", at(2023, 5, 22), at(2023, 5, 29), "week"),
    ("the previous week", at(2023, 5, 8), at(2023, 5, 15), "week"),
    ("the week before last", at(2023, 5, 1), at(2023, 5, 8), "week"),
    ("the week after next", at(2023, 5, 29), at(2023, 6, 5), "week"),
    ("last month", at(2023, 4, 1), at(2023, 5, 1), "month"),
    ("this month", at(2023, 5, 1), at(2023, 6, 1), "month"),
    ("next month", at(2023, 6, 1), at(2023, 7, 1), "month"),
    ("last year", at(2022, 1, 1), at(2023, 1, 1), "year"),
    ("this year", at(2023, 1, 1), at(2024, 1, 1), "year"),
    ("next year", at(2024, 1, 1), at(2025, 1, 1), "year"),
    ("last quarter", at(2023, 1, 1), at(2023, 4, 1), "quarter"),
    ("this quarter", at(2023, 4, 1), at(2023, 7, 1), "quarter"),
    ("next quarter", at(2023, 7, 1), at(2023, 10, 1), "quarter"),
    # rolling windows, rounded out to whole days
    ("the past 3 days", at(2023, 5, 17), at(2023, 5, 21), "day"),
    ("the past two weeks", at(2023, 5, 6), at(2023, 5, 21), "week"),
    ("in the last few weeks", at(2023, 4, 29), at(2023, 5, 21), "week"),
    ("over the past 3 months", at(2023, 2, 20), at(2023, 5, 21), "month"),
    ("the past week", at(2023, 5, 13), at(2023, 5, 21), "week"),
    ("the past 24 hours", at(2023, 5, 19, 15), at(2023, 5, 20, 16), "hour"),
    ("the next 3 days", at(2023, 5, 20), at(2023, 5, 24), "day"),
    ("in the coming two hours", at(2023, 5, 20, 15), at(2023, 5, 20, 18), "hour"),
    ("recently", at(2023, 5, 6), at(2023, 5, 21), "day"),
    ("lately", at(2023, 5, 6), at(2023, 5, 21), "day"),
    ("the other day", at(2023, 5, 13), at(2023, 5, 20), "day"),
    ("earlier this week", at(2023, 5, 15), NOW, "week"),
    ("earlier this month", at(2023, 5, 1), NOW, "month"),
    ("earlier this year", at(2023, 1, 1), NOW, "year"),
    ("so far this year", at(2023, 1, 1), NOW, "year"),
    ("earlier today", at(2023, 5, 20), NOW, "day"),
    ("later today", NOW, at(2023, 5, 21), "day"),
    ("later this week", NOW, at(2023, 5, 22), "week"),
    # weekends (NOW is a Saturday)
    ("the weekend", at(2023, 5, 20), at(2023, 5, 22), "day"),
    ("this weekend", at(2023, 5, 20), at(2023, 5, 22), "day"),
    ("last weekend", at(2023, 5, 13), at(2023, 5, 15), "day"),
    ("this past weekend", at(2023, 5, 13), at(2023, 5, 15), "day"),
    ("next weekend", at(2023, 5, 27), at(2023, 5, 29), "day"),
    # months: the most recent one that has begun
    ("in March", at(2023, 3, 1), at(2023, 4, 1), "month"),
    ("in May", at(2023, 5, 1), at(2023, 6, 1), "month"),
    ("in June", at(2022, 6, 1), at(2022, 7, 1), "month"),
    ("in December", at(2022, 12, 1), at(2023, 1, 1), "month"),
    ("next March", at(2024, 3, 1), at(2024, 4, 1), "month"),
    ("last May", at(2022, 5, 1), at(2022, 6, 1), "month"),
    ("last March", at(2023, 3, 1), at(2023, 4, 1), "month"),
    ("this June", at(2023, 6, 1), at(2023, 7, 1), "month"),
    ("in March 2022", at(2022, 3, 1), at(2022, 4, 1), "month"),
    ("March of 2021", at(2021, 3, 1), at(2021, 4, 1), "month"),
    ("early March", at(2023, 3, 1), at(2023, 3, 11), "month"),
    ("mid-March", at(2023, 3, 11), at(2023, 3, 21), "month"),
    ("late February 2023", at(2023, 2, 21), at(2023, 3, 1), "month"),
    ("the last week of August 2023", at(2023, 8, 25), at(2023, 9, 1), "week"),
    ("the first week of May", at(2023, 5, 1), at(2023, 5, 8), "week"),
    # days of months
    ("on 8 May 2023", at(2023, 5, 8), at(2023, 5, 9), "day"),
    ("8 May", at(2023, 5, 8), at(2023, 5, 9), "day"),
    ("the 8th of May", at(2023, 5, 8), at(2023, 5, 9), "day"),
    ("May 8th", at(2023, 5, 8), at(2023, 5, 9), "day"),
    ("May 8, 2023", at(2023, 5, 8), at(2023, 5, 9), "day"),
    ("Monday, May 8", at(2023, 5, 8), at(2023, 5, 9), "day"),
    ("May 25", at(2022, 5, 25), at(2022, 5, 26), "day"),
    ("on 29 February", at(2020, 2, 29), at(2020, 3, 1), "day"),
    ("2023-05-08", at(2023, 5, 8), at(2023, 5, 9), "day"),
    ("2023/05/08", at(2023, 5, 8), at(2023, 5, 9), "day"),
    ("2023-05-08T14:30:00Z", at(2023, 5, 8, 14), at(2023, 5, 8, 15), "hour"),
    ("8/5/2023", at(2023, 5, 8), at(2023, 5, 9), "day"),
    ("08.05.2023", at(2023, 5, 8), at(2023, 5, 9), "day"),
    ("5/13/2023", at(2023, 5, 13), at(2023, 5, 14), "day"),
    ("2023-04", at(2023, 4, 1), at(2023, 5, 1), "month"),
    # years, quarters, ISO weeks
    ("in 2022", at(2022, 1, 1), at(2023, 1, 1), "year"),
    ("the year 2021", at(2021, 1, 1), at(2022, 1, 1), "year"),
    ("early 2022", at(2022, 1, 1), at(2022, 5, 1), "year"),
    ("mid-2022", at(2022, 5, 1), at(2022, 9, 1), "year"),
    ("late 2022", at(2022, 9, 1), at(2023, 1, 1), "year"),
    ("in Q3", at(2022, 7, 1), at(2022, 10, 1), "quarter"),
    ("in Q2", at(2023, 4, 1), at(2023, 7, 1), "quarter"),
    ("Q3 2022", at(2022, 7, 1), at(2022, 10, 1), "quarter"),
    ("2022-Q4", at(2022, 10, 1), at(2023, 1, 1), "quarter"),
    ("next Q1", at(2024, 1, 1), at(2024, 4, 1), "quarter"),
    ("the third quarter of 2021", at(2021, 7, 1), at(2021, 10, 1), "quarter"),
    ("2023-W19", at(2023, 5, 8), at(2023, 5, 15), "week"),
    ("in week 20", at(2023, 5, 15), at(2023, 5, 22), "week"),
    ("week 52 of 2022", at(2022, 12, 26), at(2023, 1, 2), "week"),
    # seasons with last/this/next or a year
    ("last summer", at(2022, 6, 1), at(2022, 9, 1), "season"),
    ("this summer", at(2023, 6, 1), at(2023, 9, 1), "season"),
    ("this spring", at(2023, 3, 1), at(2023, 6, 1), "season"),
    ("last spring", at(2022, 3, 1), at(2022, 6, 1), "season"),
    ("last winter", at(2022, 12, 1), at(2023, 3, 1), "season"),
    ("next winter", at(2023, 12, 1), at(2024, 3, 1), "season"),
    ("last fall", at(2022, 9, 1), at(2022, 12, 1), "season"),
    ("in the autumn of 2021", at(2021, 9, 1), at(2021, 12, 1), "season"),
    ("winter 2023", at(2022, 12, 1), at(2023, 3, 1), "season"),
    # weekdays
    ("on Tuesday", at(2023, 5, 16), at(2023, 5, 17), "day"),
    ("Tuesday", at(2023, 5, 16), at(2023, 5, 17), "day"),
    ("last Tuesday", at(2023, 5, 16), at(2023, 5, 17), "day"),
    ("on Saturday", at(2023, 5, 20), at(2023, 5, 21), "day"),
    ("last Saturday", at(2023, 5, 13), at(2023, 5, 14), "day"),
    ("last Friday", at(2023, 5, 19), at(2023, 5, 20), "day"),
    ("last fri", at(2023, 5, 19), at(2023, 5, 20), "day"),
    ("this Monday", at(2023, 5, 15), at(2023, 5, 16), "day"),
    ("next Tuesday", at(2023, 5, 23), at(2023, 5, 24), "day"),
    ("next Saturday", at(2023, 5, 27), at(2023, 5, 28), "day"),
    # parts of named days
    ("this morning", at(2023, 5, 20, 5), at(2023, 5, 20, 12), "hour"),
    ("this evening", at(2023, 5, 20, 17), at(2023, 5, 20, 22), "hour"),
    ("tonight", at(2023, 5, 20, 17), at(2023, 5, 21, 5), "hour"),
    ("last night", at(2023, 5, 19, 17), at(2023, 5, 20, 5), "hour"),
    ("yesterday afternoon", at(2023, 5, 19, 12), at(2023, 5, 19, 17), "hour"),
    ("on Friday night", at(2023, 5, 19, 17), at(2023, 5, 20, 5), "hour"),
    ("on 8 May in the morning", at(2023, 5, 8, 5), at(2023, 5, 8, 12), "hour"),
    # holidays: the most recent occurrence that has begun
    ("at Christmas", at(2022, 12, 24), at(2022, 12, 27), "day"),
    ("next Christmas", at(2023, 12, 24), at(2023, 12, 27), "day"),
    ("Christmas 2021", at(2021, 12, 24), at(2021, 12, 27), "day"),
    ("on Christmas Eve", at(2022, 12, 24), at(2022, 12, 25), "day"),
    ("Christmas Day", at(2022, 12, 25), at(2022, 12, 26), "day"),
    ("at New Year", at(2022, 12, 31), at(2023, 1, 2), "day"),
    ("New Year's Eve", at(2022, 12, 31), at(2023, 1, 1), "day"),
    ("new years day", at(2023, 1, 1), at(2023, 1, 2), "day"),
    ("at Easter", at(2023, 4, 7), at(2023, 4, 11), "day"),
    ("Easter Sunday 2024", at(2024, 3, 31), at(2024, 4, 1), "day"),
    ("Good Friday", at(2023, 4, 7), at(2023, 4, 8), "day"),
    ("Thanksgiving", at(2022, 11, 24), at(2022, 11, 25), "day"),
    ("Thanksgiving 2023", at(2023, 11, 23), at(2023, 11, 24), "day"),
    ("Halloween", at(2022, 10, 31), at(2022, 11, 1), "day"),
    ("Valentine's Day", at(2023, 2, 14), at(2023, 2, 15), "day"),
    # combinations
    ("two weeks before 8 May 2023", at(2023, 4, 24), at(2023, 4, 25), "day"),
    ("a day after Christmas 2022", at(2022, 12, 25), at(2022, 12, 28), "day"),
    ("three months after March 2022", at(2022, 6, 1), at(2022, 7, 1), "month"),
    ("since March", at(2023, 3, 1), at(2023, 5, 21), "month"),
    ("since 2022", at(2022, 1, 1), at(2023, 5, 21), "year"),
    ("since last Tuesday", at(2023, 5, 16), at(2023, 5, 21), "day"),
    ("between March and May", at(2023, 3, 1), at(2023, 6, 1), "month"),
    ("from 8 May to 12 May", at(2023, 5, 8), at(2023, 5, 13), "day"),
    ("between 2020 and 2022", at(2020, 1, 1), at(2023, 1, 1), "year"),
]


@pytest.mark.parametrize(("query", "start", "end", "precision"), WINDOWS)
def test_windows(query, start, end, precision):
    window = only_window(query)
    assert (window.start, window.end, window.precision) == (start, end, precision)
    assert window.label == " ".join(query.lower().split())
    parsed = parse_temporal(query, NOW)
    assert parsed.rest == ""
    assert parsed.spans == ((0, len(query)),)
    assert parsed.has_time


@pytest.mark.parametrize(("query", "start", "end", "precision"), WINDOWS[:40])
def test_matching_ignores_case(query, start, end, precision):
    window = only_window(query.upper())
    assert (window.start, window.end, window.precision) == (start, end, precision)


CYCLES = [
    ("every Tuesday", "weekday", (1,)),
    ("on Tuesdays", "weekday", (1,)),
    ("Tuesdays", "weekday", (1,)),
    ("every Monday and Wednesday", "weekday", (0, 2)),
    ("on Mondays, Wednesdays and Fridays", "weekday", (0, 2, 4)),
    ("on weekends", "weekday", (5, 6)),
    ("every weekday", "weekday", (0, 1, 2, 3, 4)),
    ("in the mornings", "time_of_day", (1,)),
    ("in the morning", "time_of_day", (1,)),
    ("in the afternoon", "time_of_day", (2,)),
    ("in the evening", "time_of_day", (3,)),
    ("evenings", "time_of_day", (3,)),
    ("at night", "time_of_day", (0,)),
    ("late at night", "time_of_day", (0,)),
    ("every morning", "time_of_day", (1,)),
    ("in the spring", "season", (1,)),
    ("in summer", "season", (2,)),
    ("during the winter", "season", (0,)),
    ("every fall", "season", (3,)),
    ("every March", "month", (3,)),
    ("each May", "month", (5,)),
    ("every Q3", "quarter", (3,)),
    ("on the 15th", "monthday", (15,)),
    ("on the 1st of every month", "monthday", (1,)),
    ("every first of the month", "monthday", (1,)),
    ("every week 20", "week", (20,)),
]


@pytest.mark.parametrize(("query", "dimension", "values"), CYCLES)
def test_cycles(query, dimension, values):
    parsed = parse_temporal(query, NOW)
    assert parsed.cycles == (
        Cycle(dimension=dimension, values=values, label=query.lower()),
    )
    assert parsed.windows == ()
    assert parsed.rest == ""
    assert parsed.has_time


def test_a_weekday_with_plural_parts_of_day_is_two_cycles():
    parsed = parse_temporal("what do we do on Tuesday mornings?", NOW)
    assert [(c.dimension, c.values) for c in parsed.cycles] == [
        ("weekday", (1,)),
        ("time_of_day", (1,)),
    ]
    assert parsed.rest == "what do we do?"


def test_cycles_of_one_dimension_are_merged():
    parsed = parse_temporal("mornings and evenings, every Tuesday", NOW)
    assert parsed.cycles == (
        Cycle(dimension="time_of_day", values=(1, 3), label="mornings, evenings"),
        Cycle(dimension="weekday", values=(1,), label="every tuesday"),
    )
    assert parsed.rest == ""


def test_an_undated_event_is_kept_as_a_relation():
    query = "what did we do two weeks before the launch?"
    parsed = parse_temporal(query, NOW)
    assert parsed.relations == (
        Relation(
            offset=timedelta(days=14),
            direction="before",
            event="the launch",
            label="two weeks before",
        ),
    )
    assert parsed.windows == ()
    assert parsed.has_time
    # the event's words stay for the lexical channels
    assert parsed.rest == "what did we do the launch?"
    assert parsed.spans == ((15, 31),)


@pytest.mark.parametrize(
    ("query", "offset", "direction", "event"),
    [
        ("the day after the release", timedelta(days=1), "after", "the release"),
        (
            "a couple of months after Bob joined",
            timedelta(days=60),
            "after",
            "Bob joined",
        ),
        ("3 hours before the outage, then", timedelta(hours=3), "before", "the outage"),
    ],
)
def test_relations(query, offset, direction, event):
    (relation,) = parse_temporal(query, NOW).relations
    assert (relation.offset, relation.direction, relation.event) == (
        offset,
        direction,
        event,
    )


def test_a_relation_without_an_event_is_not_temporal():
    parsed = parse_temporal("the week before", NOW)
    assert not parsed.has_time
    assert parsed.rest == "the week before"


@pytest.mark.parametrize(
    "query",
    [
        "what did we decide about auth?",
        "  what did we decide about auth?  ",
        "",
        "   ",
        "may I ask what the deploy target is?",
        "this may be wrong",
        "it may break",
        "version 8 may break the build",
        "mayday mayday",
        "the marching band",
        "we decided to march on",
        "Maybe August Rush is better",
        "an august institution",
        "ask June about it",
        "sunday-school teachers",
        "the sun is out",
        "the 3rd attempt failed",
        "week 2 of the project",
        "in the 4th quarter we scored",
        "the last time we spoke",
        "next steps for the migration",
        "a spring in the mattress",
        "the fall of Rome",
        "an easter egg in the UI",
        "error 2022 in the log",
        "port 8080 and 2 workers",
    ],
)
def test_text_without_time(query):
    parsed = parse_temporal(query, NOW)
    assert not parsed.has_time
    assert parsed == TemporalQuery(rest=query.strip())


@pytest.mark.parametrize(
    ("query", "rest"),
    [
        ("what did we decide in May?", "what did we decide?"),
        ("what did we decide in March about auth?", "what did we decide about auth?"),
        ("May 8: the auth meeting", "the auth meeting"),
        ("the auth meeting on May 8th", "the auth meeting"),
        ("until May we used JWTs", "until we used JWTs"),
        ("mid-March rollout", "rollout"),
        ("notes from last week's standup", "notes from standup"),
        ("Yesterday, what broke?", "what broke?"),
        ("what did we do yesterday, and last Friday?", "what did we do?"),
    ],
)
def test_phrases_are_removed_from_the_rest(query, rest):
    parsed = parse_temporal(query, NOW)
    assert parsed.has_time
    assert parsed.rest == rest


def test_spans_point_at_the_phrases():
    query = "auth bugs last week and on 8 May 2023"
    parsed = parse_temporal(query, NOW)
    assert [query[a:b] for a, b in parsed.spans] == ["last week", "on 8 May 2023"]
    assert parsed.rest == "auth bugs"


def test_anchors_are_the_days_named():
    parsed = parse_temporal("yesterday, last week and on 8 May", NOW)
    assert parsed.anchors == (at(2023, 5, 19), at(2023, 5, 8))
    assert len(parsed.windows) == 3


def test_windows_follow_the_timezone_of_now():
    tz = timezone(timedelta(hours=-4))
    now = datetime(2023, 5, 20, 1, tzinfo=tz)  # 05:00 UTC
    window = only_window("yesterday", now)
    assert window.start == datetime(2023, 5, 19, tzinfo=tz)
    assert window.start.utcoffset() == timedelta(hours=-4)
    assert window.contains(datetime(2023, 5, 20, 3, 59, tzinfo=UTC))
    assert not window.contains(datetime(2023, 5, 20, 4, 0, tzinfo=UTC))


def test_days_keep_their_wall_clock_across_a_dst_change():
    tz = ZoneInfo("America/New_York")  # data from tzdata (a dev dependency)
    window = only_window("yesterday", datetime(2023, 3, 13, 12, tzinfo=tz))
    assert (window.start, window.end) == (
        datetime(2023, 3, 12, tzinfo=tz),
        datetime(2023, 3, 13, tzinfo=tz),
    )
    assert window.end.astimezone(UTC) - window.start.astimezone(UTC) == timedelta(
        hours=23
    )


@pytest.mark.parametrize(
    ("year", "easter"),
    [
        (2000, (4, 23)),
        (2019, (4, 21)),
        (2023, (4, 9)),
        (2024, (3, 31)),
        (2038, (4, 25)),
    ],
)
def test_easter_follows_the_gregorian_computus(year, easter):
    window = only_window(f"Easter Sunday {year}")
    assert window.start == at(year, *easter)


def test_window_and_cycle_membership():
    window = Window(
        start=at(2023, 5, 8), end=at(2023, 5, 9), label="x", precision="day"
    )
    assert window.contains(at(2023, 5, 8))
    assert window.contains(at(2023, 5, 8, 23, 59))
    assert not window.contains(at(2023, 5, 9))
    tuesdays = Cycle(dimension="weekday", values=(1,), label="on tuesdays")
    assert tuesdays.contains(at(2023, 5, 16, 9))
    assert not tuesdays.contains(at(2023, 5, 17, 9))


@pytest.mark.parametrize(
    ("dimension", "moment", "value"),
    [
        ("weekday", at(2023, 5, 20), 5),
        ("week", at(2023, 5, 20), 20),
        ("month", at(2023, 5, 20), 5),
        ("quarter", at(2023, 5, 20), 2),
        ("monthday", at(2023, 5, 20), 20),
        ("season", at(2023, 12, 1), 0),
        ("season", at(2023, 2, 28), 0),
        ("season", at(2023, 3, 1), 1),
        ("season", at(2023, 8, 31), 2),
        ("season", at(2023, 11, 30), 3),
        ("time_of_day", at(2023, 5, 20, 4, 59), 0),
        ("time_of_day", at(2023, 5, 20, 5), 1),
        ("time_of_day", at(2023, 5, 20, 12), 2),
        ("time_of_day", at(2023, 5, 20, 17), 3),
        ("time_of_day", at(2023, 5, 20, 22), 0),
    ],
)
def test_cycle_value(dimension, moment, value):
    assert cycle_value(dimension, moment) == value


def test_results_round_trip_through_json():
    parsed = parse_temporal(
        "every Tuesday, two weeks before the launch and last week", NOW
    )
    assert parsed.windows
    assert parsed.cycles
    assert parsed.relations
    data = msgspec.json.encode(parsed)
    assert msgspec.json.decode(data, type=TemporalQuery) == parsed


# A Monday, as a LoCoMo session is stamped.
WRITTEN = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "dates"),
    [
        ("I went to a support group yesterday.", [at(2023, 5, 7)]),
        ("We hiked last Friday!", [at(2023, 5, 5)]),
        ("The move is next month.", [at(2023, 6, 1)]),
        ("It opened on 1 May.", [at(2023, 5, 1)]),
        ("We met in 2022.", [at(2022, 1, 1)]),
        ("Signed on May 3, 2023 and 2023-04-28.", [at(2023, 5, 3), at(2023, 4, 28)]),
        ("The invoice is dated 2/5/2023.", [at(2023, 5, 2)]),
        ("I started two weeks ago.", [at(2023, 4, 24)]),
        (
            "Camping this weekend, then last summer's photos.",
            [at(2023, 5, 13), at(2022, 6, 1)],
        ),
        ("Yesterday was fun, yesterday!", [at(2023, 5, 7)]),
        ("Nothing dated here.", []),
    ],
)
def test_extract_dates(text, dates):
    assert extract_dates(text, WRITTEN) == tuple(dates)


def test_extract_dates_skips_windows_around_the_memory_itself():
    text = "Lately I run every morning; today I ran 5k, this week 20k."
    assert extract_dates(text, WRITTEN) == ()
    windows = extract_windows(text, WRITTEN)
    assert [w.label for w in windows] == ["lately", "today", "this week"]
    assert all(w.contains(WRITTEN) for w in windows)


WORDS = (
    "in on at last next this past the a an two 3 12 31 0 2022 2023 1999 9999 99999 "
    "may march june tuesday tuesdays sat week weeks weekend month year quarter q3 "
    "ago before after since between and from to every morning mornings night "
    "christmas easter spring summer winter fall of 8th 2023-05-08 8/5/2023 29 "
    "february recently day days hours , . ? - 's launch auth"
)
VOCABULARY = WORDS.split()


@settings(max_examples=300, deadline=None)
@given(
    text=st.one_of(st.text(), st.lists(st.sampled_from(VOCABULARY)).map(" ".join)),
    now=st.datetimes(
        min_value=datetime(1, 1, 1),
        max_value=datetime(9999, 12, 31),
        timezones=st.just(UTC),
    ),
)
def test_parsing_never_fails_and_windows_are_never_empty(text, now):
    parsed = parse_temporal(text, now)
    assert all(w.start < w.end for w in parsed.windows)
    assert all(c.values for c in parsed.cycles)
    previous_end = 0
    for start, end in parsed.spans:
        assert previous_end <= start < end <= len(text)
        previous_end = end
    assert parsed.has_time == bool(parsed.windows or parsed.cycles or parsed.relations)
    if not parsed.spans:
        assert parsed.rest == text.strip()
    assert all(isinstance(d, datetime) for d in extract_dates(text, now))


# The one pattern of every key word that key_classes replaced (tried at every
# character, 160 µs a kilobyte): key_classes must find at least its classes.
_MONTH_KEYS = (
    "january february march april may june july august september october"
    " november december jan feb mar apr jun jul aug sep sept oct nov dec"
)
_WEEKDAY_KEYS = (
    "monday tuesday wednesday thursday friday saturday sunday mon tue tues wed"
    " weds thu thur thurs fri sat sun"
)
_KEYS_BEFORE = re.compile(
    rf"(?P<digit>[0-9])|(?<!\w)(?:(?P<month>{'|'.join(_MONTH_KEYS.split())})"
    rf"|(?P<weekday>{'|'.join(_WEEKDAY_KEYS.split())})s?"
    r"|(?P<unit>hour|day|week|fortnight|month|quarter|year)(?:s|ends?|days?)?"
    r"|(?P<dayword>today|tonight|yesterday|tomorrow)"
    r"|(?P<part>morning|afternoon|evening|night|midnight|dawn|dusk|noon)s?"
    r"|(?P<season>spring|summer|autumn|fall|winter)(?:s|time)?"
    r"|(?P<recent>recently|lately|late))(?!\w)"
    r"|(?P<holiday>christmas|xmas|boxing|new\s+year|easter|good\s+friday|thanksgiving"
    r"|halloween|valentine)",
    re.IGNORECASE,
)
_OTHER_PIECES = """
    hours days weekend weekends weekdays fortnight quarters yearday today Tonight
    YESTERDAY tomorrow mornings noon dawn dusk springtime falls winter recently
    lately late Christmastime xmas boxing Eastern good friday valentine's the
    deploy 2023 5th a-b mayday sundays x_monday é ß
"""
_PIECES = [
    *_MONTH_KEYS.split(),
    *_WEEKDAY_KEYS.split(),
    *_OTHER_PIECES.split(),
    "new\nyear",
    "good  friday",
]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(_PIECES), max_size=12),
    st.lists(
        st.sampled_from([" ", "", ", ", "-", "_", "\n", "'", "."]),
        min_size=12,
        max_size=12,
    ),
)
def test_key_classes_find_every_class_the_old_pattern_found(pieces, glue):
    text = "".join(p + g for p, g in zip(pieces, glue, strict=False))
    before = {m.lastgroup for m in _KEYS_BEFORE.finditer(text)}
    assert key_classes(text) >= before


def test_key_classes_of_plain_texts():
    assert key_classes("We shipped the parser on Tuesday morning.") == {
        "weekday",
        "part",
    }
    assert key_classes("Invoices are stored as integer cents") == set()
    assert key_classes("Back after Christmas, in 2024") == {"holiday", "digit"}
    assert key_classes("every weekend since last spring") == {"unit", "season"}
