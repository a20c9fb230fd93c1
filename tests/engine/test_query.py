import re
from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ctx.engine.tokens
from ctx.engine.ids import MemoryId
from ctx.engine.layout import MEMORY_AREAS
from ctx.engine.model import KINDS, Memory, Source
from ctx.engine.query import (
    FIELDS,
    HAS_VALUES,
    And,
    Facts,
    Node,
    Not,
    Or,
    QuerySyntaxError,
    Term,
    Text,
    estimate_tokens,
    evaluate,
    format_query,
    memory_tokens,
    parse_query,
    validate,
)

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
ME = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
OTHER = "01JD2X9K7M3Q4R5S6T7V8W9XYZ"
THIRD = "01JD2X9K7M3Q4R5S6T7V8W9XY0"


def t(field: str, value: str, op: str = "=") -> Term:
    return Term(field=field, op=op, value=value)


def w(value: str) -> Text:
    return Text(value=value, phrase=False)


def make_facts(
    *,
    kind: str = "decision",
    title: str | None = "Use Postgres",
    body: str = "We queue jobs in  Postgres\nwith SKIP LOCKED.",
    tags: tuple[str, ...] = ("project:ctx", "tier:working"),
    created_at: datetime = datetime(2026, 2, 27, 9, 30, tzinfo=UTC),
    source: Source | None = None,
    **overrides: object,
) -> Facts:
    memory = Memory(
        version=1,
        id=MemoryId(ME),
        kind=kind,
        title=title,
        body=body,
        tags=tags,
        created_at=created_at,
        source=source,
        meta={},
    )
    fields: dict[str, object] = {
        "path": f"memory/decisions/V/A/F/{ME}.json",
        "area": "memory",
        "context": "decisions",
        "tokens": memory_tokens(memory),
        "updated_at": datetime(2026, 3, 1, 10, 0, tzinfo=UTC),
        "agents": frozenset({"claude", "tester"}),
        "links_out": frozenset({OTHER}),
        "links_in": frozenset(),
        "has_summary": False,
        **overrides,
    }
    return Facts(memory=memory, **fields)  # type: ignore[arg-type]


# --- parsing -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "tree"),
    [
        (
            "kind:decision AND tag:project:ctx",
            And(left=t("kind", "decision"), right=t("tag", "project:ctx")),
        ),
        (
            "(kind:decision OR kind:pattern) AND created:>7d",
            And(
                left=Or(left=t("kind", "decision"), right=t("kind", "pattern")),
                right=t("created", "7d", ">"),
            ),
        ),
        (
            "tag:tier:working AND NOT has:summary",
            And(left=t("tag", "tier:working"), right=Not(operand=t("has", "summary"))),
        ),
        ("tokens:<500", t("tokens", "500", "<")),
        ("tokens:>=500", t("tokens", "500", ">=")),
        ("updated:>2026-01-01", t("updated", "2026-01-01", ">")),
        ("created:<=2026-01-01T10:00", t("created", "2026-01-01T10:00", "<=")),
        ("created:=2w", t("created", "2w")),
        ("has:links", t("has", "links")),
        (f"from:{OTHER}", t("from", OTHER)),
        (f"to:{OTHER}", t("to", OTHER)),
        ("context:decisions", t("context", "decisions")),
        ("agent:claude", t("agent", "claude")),
        ('text:"exact phrase"', t("text", "exact phrase")),
        ("postgres queue", And(left=w("postgres"), right=w("queue"))),
        (
            "kind:decision postgres",
            And(left=t("kind", "decision"), right=w("postgres")),
        ),
        ('"exact phrase"', Text(value="exact phrase", phrase=True)),
        ('tag:"project:my app"', t("tag", "project:my app")),
        ('text:"a \\"b\\""', t("text", 'a "b"')),
        ('"back\\\\slash"', Text(value="back\\slash", phrase=True)),
        ("tag:tier:", t("tag", "tier:")),
        ("tag:task:*", t("tag", "task:*")),
        ("Kind:fact", t("kind", "fact")),
        (
            "10:30 a-b c\\d",
            And(left=And(left=w("10:30"), right=w("a-b")), right=w("c\\d")),
        ),
        ("-kind:fact", Not(operand=t("kind", "fact"))),
        ("-(a OR b)", Not(operand=Or(left=w("a"), right=w("b")))),
        ('-"x y"', Not(operand=Text(value="x y", phrase=True))),
        (
            '"and" "OR"',
            And(
                left=Text(value="and", phrase=True), right=Text(value="OR", phrase=True)
            ),
        ),
        ("((a))", w("a")),
        ("  a\n\tb  ", And(left=w("a"), right=w("b"))),
    ],
)
def test_examples_parse(query, tree):
    assert parse_query(query) == tree


@pytest.mark.parametrize(
    ("query", "tree"),
    [
        ("a OR b AND c", Or(left=w("a"), right=And(left=w("b"), right=w("c")))),
        ("a AND b OR c", Or(left=And(left=w("a"), right=w("b")), right=w("c"))),
        ("NOT a AND b", And(left=Not(operand=w("a")), right=w("b"))),
        ("NOT a OR b", Or(left=Not(operand=w("a")), right=w("b"))),
        ("NOT NOT a", Not(operand=Not(operand=w("a")))),
        ("a b OR c", Or(left=And(left=w("a"), right=w("b")), right=w("c"))),
        ("a OR b c", Or(left=w("a"), right=And(left=w("b"), right=w("c")))),
        ("a b c", And(left=And(left=w("a"), right=w("b")), right=w("c"))),
        ("a OR b OR c", Or(left=Or(left=w("a"), right=w("b")), right=w("c"))),
        ("(a OR b) c", And(left=Or(left=w("a"), right=w("b")), right=w("c"))),
        ("a -b", And(left=w("a"), right=Not(operand=w("b")))),
    ],
)
def test_precedence_and_associativity(query, tree):
    assert parse_query(query) == tree


def test_keywords_ignore_case():
    assert parse_query("a and not b or c") == parse_query("a AND NOT b OR c")
    assert parse_query("a AnD b") == And(left=w("a"), right=w("b"))


@pytest.mark.parametrize(
    ("query", "canonical"),
    [
        ("a b c", "a AND b AND c"),
        ("a (b c)", "a AND (b AND c)"),
        ("(a OR b) AND c", "(a OR b) AND c"),
        ("a OR (b AND c)", "a OR b AND c"),
        ("-(a b)", "NOT (a AND b)"),
        ("kind:=fact", "kind:fact"),
        ('tag:"tier:working"', "tag:tier:working"),
        ('context:"<odd"', 'context:"<odd"'),
        ('"and" x', '"and" AND x'),
        ('text:"a \\"b\\""', 'text:"a \\"b\\""'),
    ],
)
def test_format_is_canonical(query, canonical):
    assert format_query(parse_query(query)) == canonical


def test_format_quotes_what_would_not_read_back():
    assert format_query(w("-x")) == '"-x"'
    assert format_query(w("not")) == '"not"'
    assert format_query(w("a:b")) == '"a:b"'
    assert format_query(t("agent", "=x")) == 'agent:"=x"'
    assert format_query(t("tokens", "5", ">=")) == "tokens:>=5"


# --- errors ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "message", "column"),
    [
        ("kind:", "Expected a value after 'kind:' at column 6.", 6),
        ("kind: fact", "Expected a value after 'kind:' at column 6.", 6),
        ("created:>", "Expected a value after 'created:>' at column 10.", 10),
        ("kind:opinion", "Unknown kind 'opinion' at column 6.", 6),
        ('kind:"opinion"', "Unknown kind 'opinion' at column 6.", 6),
        ("(kind:fact", "Missing ')' for the '(' at column 1.", 1),
        ("a (b (c)", "Missing ')' for the '(' at column 3.", 3),
        ("kind:fact)", "Unmatched ')' at column 10.", 10),
        ("AND", "Expected a term, found 'AND' at column 1.", 1),
        ("a or or b", "Expected a term, found 'or' at column 6.", 6),
        ("()", "Expected a term, found ')' at column 2.", 2),
        ("a AND", "Expected a term after 'AND' at column 6.", 6),
        ("NOT", "Expected a term after 'NOT' at column 4.", 4),
        ("a -", "Expected a term after '-' at column 4.", 4),
        ("a - b", "Expected a term right after '-' at column 4.", 4),
        ("created:>yesterday", "Invalid date or age 'yesterday' at column 10.", 10),
        ("created:2026-02-30", "Invalid date '2026-02-30' at column 9.", 9),
        ("updated:<999999999w", "The age '999999999w' is too large at column 10.", 10),
        ("tokens:<abc", "Invalid token count 'abc' at column 9.", 9),
        ("tokens:<-5", "Invalid token count '-5' at column 9.", 9),
        ("knd:x", "Unknown field 'knd' at column 1.", 1),
        ("a http://example.com", "Unknown field 'http' at column 3.", 3),
        ("kind:>fact", "Operator '>' does not apply to 'kind:' at column 6.", 6),
        ("tag:tier", "Tag 'tier' is not of the form namespace:value at column 5.", 5),
        ("area:attic", "Unknown area 'attic' at column 6.", 6),
        ("has:wings", "Unknown has: value 'wings' at column 5.", 5),
        ("id:01AI", "'01AI' is not a memory id or id prefix at column 4.", 4),
        ('agent:"  "', "Empty value for 'agent:' at column 7.", 7),
        ('a ""', "Empty quotes at column 3.", 3),
        ('text:"abc', "Unterminated quote at column 6.", 6),
        ('"abc\\"', "Unterminated quote at column 1.", 1),
        ("", "The query is empty.", 1),
        (" \t\n", "The query is empty.", 1),
        (
            "(" * 70 + "a" + ")" * 70,
            "The query nests deeper than 64 levels at column 65.",
            65,
        ),
    ],
)
def test_errors_name_the_column(query, message, column):
    with pytest.raises(QuerySyntaxError) as caught:
        parse_query(query)
    assert str(caught.value) == message
    assert caught.value.column == column
    assert caught.value.exit_code == 4


def test_error_hint_shows_a_caret():
    with pytest.raises(QuerySyntaxError) as caught:
        parse_query("kind:decision\tAND kind:opinion")
    assert caught.value.hint == (
        "Use one of " + ", ".join(KINDS) + ".\n"
        "  kind:decision AND kind:opinion\n"
        "                         ^"
    )


def test_validate_checks_trees_built_in_code():
    validate(And(left=t("kind", "fact"), right=Not(operand=w("x"))))
    with pytest.raises(QuerySyntaxError) as caught:
        validate(Or(left=w("a"), right=t("created", "soon", ">=")))
    assert str(caught.value) == "Invalid date or age 'soon' at column 16."
    assert caught.value.query == "a OR created:>=soon"
    with pytest.raises(QuerySyntaxError, match=r"^Unknown field 'Kind' at column 5\.$"):
        validate(Not(operand=t("Kind", "fact")))
    with pytest.raises(QuerySyntaxError, match=r"^Operator '!' does not apply"):
        validate(t("tokens", "5", "!"))


def test_evaluate_rejects_invalid_trees():
    with pytest.raises(QuerySyntaxError, match="Unknown field 'colour'"):
        evaluate(t("colour", "red"), make_facts(), NOW)
    with pytest.raises(QuerySyntaxError, match="Unknown has: value 'wings'"):
        evaluate(t("has", "wings"), make_facts(), NOW)
    with pytest.raises(QuerySyntaxError, match="Invalid token count"):
        evaluate(t("tokens", "many", ">"), make_facts(), NOW)


# --- evaluation --------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("kind:decision", True),
        ("kind:fact", False),
        ("tag:project:ctx", True),
        ("tag:project:ct", False),
        ("tag:tier:", True),
        ("tag:tier:*", True),
        ("tag:tier:work*", True),
        ("tag:task:*", False),
        ("tag:*", True),
        ("context:decisions", True),
        ("context:patterns", False),
        ("area:memory", True),
        ("area:pinned", False),
        (f"id:{ME}", True),
        ("id:01arz3", True),
        ("id:01ARZ4", False),
        ("agent:claude", True),
        ("agent:Claude", False),
        (f"to:{OTHER}", True),
        (f"to:{THIRD}", False),
        (f"from:{OTHER}", False),
        ("text:postgres", True),
        ('text:"queue jobs in postgres with"', True),
        ('"skip locked"', True),
        ("postgres queue", True),
        ("postgres mysql", False),
        ("postgres OR mysql", True),
        ('"use postgres we"', True),
        ("title:postgres", True),
        ("title:skip", False),
        ("has:links", True),
        ("has:summary", False),
        ("has:title", True),
        ("has:tags", True),
        ("has:source", False),
        ("NOT has:summary", True),
        ("-kind:decision", False),
        ("(kind:decision OR kind:pattern) AND created:>7d", True),
        ("created:>1d", False),
        ("created:<7d", False),
        ("created:7d", True),
        ("created:2026-02-27", True),
        ("created:2026-02-28", False),
        ("created:>2026-02-26", True),
        ("created:>2026-02-27", False),
        ("created:>=2026-02-27", True),
        ("created:<2026-02-27", False),
        ("created:<=2026-02-27", True),
        ("created:<2026-02-28", True),
        ("created:2026-02-27T09", True),
        ("created:2026-02-27T09:30", True),
        ("created:2026-02-27T09:31", False),
        ("created:2026-02-27T09:30:00Z", True),
        ("created:2026-02-27T11:30+02:00", True),
        ("created:>2026-02-27T09:29", True),
        ("created:>2026-02-27T09:30", False),
        ("updated:>3h", True),
        ("updated:>2h", False),  # exactly 2 hours ago
        ("updated:>=2h", True),
        ("updated:<=120m", True),
        ("updated:<120m", False),
        ("updated:>1h", False),
        ("updated:2026-03-01", True),
        ("updated:>0001-01-01 updated:<9999-12-31", True),
        ("updated:>9999-12-31", False),
        ("updated:<999999w", False),
    ],
)
def test_evaluate_fields(query, expected):
    assert evaluate(parse_query(query), make_facts(), NOW) is expected


def test_evaluate_tokens_links_and_summary():
    facts = make_facts(
        title=None,
        body="x" * 1000,
        tags=(),
        source=Source(file="README.md", section="Intro"),
        links_out=frozenset(),
        links_in=frozenset({OTHER}),
        has_summary=True,
        area="primed",
        context="readme",
    )
    assert facts.tokens == 250

    def check(query: str) -> bool:
        return evaluate(parse_query(query), facts, NOW)

    assert check("tokens:250")
    assert check("tokens:<=250")
    assert check("tokens:>=250")
    assert not check("tokens:<250")
    assert not check("tokens:>250")
    assert check("tokens:<500")
    assert not check("tokens:=500")
    assert check(f"from:{OTHER}")
    assert check("from:01JD")
    assert not check(f"to:{OTHER}")
    assert check("has:links has:summary has:source")
    assert not check("has:title")
    assert not check("has:tags")
    assert not check("title:x")
    assert check("area:primed context:readme")


def test_bare_dates_use_the_zone_of_now():
    facts = make_facts(created_at=datetime(2026, 2, 27, 23, 30, tzinfo=UTC))
    berlin = timezone(timedelta(hours=1))
    assert evaluate(parse_query("created:2026-02-27"), facts, NOW)
    assert evaluate(parse_query("created:2026-02-28"), facts, NOW.astimezone(berlin))
    naive = make_facts(created_at=datetime(2026, 2, 27, 23, 30))
    assert evaluate(parse_query("created:2026-02-27"), naive, NOW.replace(tzinfo=None))


def test_long_runs_do_not_hit_the_recursion_limit():
    query = " ".join(["postgres"] * 5000)
    tree = parse_query(query)
    assert evaluate(tree, make_facts(), NOW)
    assert format_query(tree) == " AND ".join(["postgres"] * 5000)
    assert (
        evaluate(parse_query(" OR ".join(["mysql"] * 5000)), make_facts(), NOW) is False
    )


def test_tokens_use_the_one_estimator():
    assert estimate_tokens is ctx.engine.tokens.estimate_tokens
    assert memory_tokens is ctx.engine.tokens.memory_tokens
    assert [estimate_tokens(s) for s in ("a", "abcd", "abcde")] == [1, 1, 2]
    memory = make_facts(title="abc", body="defg").memory
    assert memory_tokens(memory) == estimate_tokens("abc\ndefg") == 2


def test_public_constants():
    assert "kind" in FIELDS
    assert "tokens" in FIELDS
    assert set(HAS_VALUES) >= {"links", "summary", "title", "tags", "source"}


# --- properties --------------------------------------------------------------

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
FIELD_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]*:")


def is_bare_word(word: str) -> bool:
    return not (
        any(c.isspace() or c in '()"' for c in word)
        or word.startswith("-")
        or word.upper() in ("AND", "OR", "NOT")
        or FIELD_RE.match(word)
    )


values = st.text(max_size=12).filter(str.strip)
words = st.text(min_size=1, max_size=10).filter(is_bare_word)
ids = st.text(alphabet=CROCKFORD + CROCKFORD.lower(), min_size=1, max_size=26)
ops = st.sampled_from(["=", ">", ">=", "<", "<="])
datetimes = st.datetimes(timezones=st.none() | st.just(UTC))
whens = st.one_of(
    st.dates().map(date.isoformat),
    st.builds(
        datetime.isoformat,
        datetimes,
        timespec=st.sampled_from(["hours", "minutes", "seconds", "milliseconds"]),
    ),
    st.builds("{}{}".format, st.integers(0, 10**6), st.sampled_from("mhdw")),
)
tags = st.one_of(
    st.builds("{}:{}".format, st.from_regex(r"[a-z]{1,5}", fullmatch=True), values),
    st.from_regex(r"[a-z]{1,5}:?\*|[a-z]{1,5}:", fullmatch=True),
)


EQUALS = st.just("=")


def terms(field, strategy, op=EQUALS):
    return st.builds(Term, field=st.just(field), op=op, value=strategy)


leaves = st.one_of(
    terms("kind", st.sampled_from(KINDS)),
    terms("tag", tags),
    terms("context", values),
    terms("area", st.sampled_from(MEMORY_AREAS)),
    terms("agent", values),
    terms("text", values),
    terms("title", values),
    terms("has", st.sampled_from(HAS_VALUES)),
    *(terms(field, ids) for field in ("id", "from", "to")),
    *(terms(field, whens, ops) for field in ("created", "updated")),
    terms("tokens", st.integers(0, 10**9).map(str), ops),
    st.builds(Text, value=values, phrase=st.just(True)),
    st.builds(Text, value=words, phrase=st.just(False)),
)
trees = st.recursive(
    leaves,
    lambda kids: st.one_of(
        st.builds(Not, operand=kids),
        st.builds(And, left=kids, right=kids),
        st.builds(Or, left=kids, right=kids),
    ),
    max_leaves=10,
)
FAST = settings(
    max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@FAST
@given(trees)
def test_format_then_parse_gives_the_tree_back(tree: Node):
    validate(tree)
    assert parse_query(format_query(tree)) == tree
    assert isinstance(evaluate(tree, make_facts(), NOW), bool)


QUERYISH = st.lists(
    st.sampled_from(
        [
            " ",
            "(",
            ")",
            '"',
            "\\",
            "-",
            ":",
            "*",
            ">",
            "<",
            "=",
            "AND",
            "or",
            "NOT",
            "kind",
            "tag",
            "created",
            "tokens",
            "id",
            "has",
            "decision",
            "links",
            "x",
            "2026-01-01",
            "T10:00",
            "Z",
            "7d",
            "500",
            "01ARZ",
        ]
    ),
    max_size=12,
).map("".join)


@FAST
@given(st.text() | QUERYISH)
def test_any_text_parses_or_fails_cleanly(text: str):
    try:
        tree = parse_query(text)
    except QuerySyntaxError as exc:
        column = exc.column
        assert 1 <= column <= len(text) + 1
        return
    assert parse_query(format_query(tree)) == tree
    assert isinstance(evaluate(tree, make_facts(), NOW), bool)
