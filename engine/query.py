r"""A small query language that selects memories (``ctx ls --where``, ``ctx query``).

Terms are joined by ``AND``, ``OR`` and ``NOT`` (in any case). ``NOT`` binds
tighter than ``AND``, and ``AND`` tighter than ``OR``; parentheses group.
Terms side by side mean ``AND``, and ``-term`` means ``NOT term``::

    (kind:decision OR kind:pattern) AND created:>7d
    tag:tier:working -has:summary       # same as ... AND NOT has:summary
    postgres queue                      # both words, in the title or body
    "exact phrase"  tag:"project:my app"  text:"a \"b\""

Grammar (EBNF). Tokens are ``(``, ``)``, ``-``, strings in double quotes
(``\`` escapes the next character) and words: runs of characters up to
whitespace, a parenthesis or a quote. A ``-`` that starts a token is always
``NOT``. A word ``name:...``, where ``name`` is a letter followed by letters,
digits or ``_``, is always a field term: an unknown name is an error, so
quote such a word to search for it (``"http://x"``), and likewise the words
``and``, ``or`` and ``not``::

    query    = or_expr ;
    or_expr  = and_expr , { "OR" , and_expr } ;
    and_expr = not_expr , { [ "AND" ] , not_expr } ;
    not_expr = ( "NOT" | "-" ) , not_expr | atom ;
    atom     = "(" , or_expr , ")" | term | word | string ;
    term     = field , ":" , [ op ] , ( word | string ) ;   (* no spaces *)
    op       = ">=" | "<=" | ">" | "<" | "=" ;

Fields (only created, updated and tokens take an operator other than ``=``):

- ``kind:K``: the kind is K, one of :data:`~ctx.engine.model.KINDS`.
- ``tag:NS:V``: the memory has that tag. A value ending in ``:`` or ``*``
  (``tag:tier:``, ``tag:task:*``) matches any tag starting with it.
- ``context:C``: the context folder, or the source name of pinned and primed
  memories. ``area:A``: memory, pinned, primed or sessions.
- ``id:X``: the id is X, starts with X, or ends with X of 6 or more
  characters (a short id as listings print it). ``agent:A``: A wrote a version.
- ``from:X``: the memories X links to (targets of X's outgoing links).
  ``to:X``: the memories that link to X. X may be part of an id too.
- ``text:T``, a bare word, or a quoted phrase: T appears in the title or
  body. ``title:T``: T appears in the title. Case is ignored, and any run of
  whitespace counts as one space.
- ``has:H``: links (in or out), summary (a summary is DERIVED_FROM it),
  title, tags or source.
- ``created:W``, ``updated:W``: W is a date (``2026-01-01``), a date and time
  (``2026-01-01T10:00``, then optionally ``Z`` or ``+02:00``; without a zone,
  the zone of ``now``) or an age (``30m``, ``12h``, ``7d``, ``2w``: now minus
  that). A date or time stands for all of its span: ``updated:2026-01-01`` is
  any time that day and ``updated:>2026-01-01`` from the next day on. With an
  age, ``created:>7d`` is newer than 7 days, ``created:<7d`` older, and a
  bare ``created:7d`` means ``created:>=7d``.
- ``tokens:N``: the :func:`~ctx.engine.tokens.memory_tokens` estimate of
  title and body (characters / 4), compared with N. That estimator and
  ``estimate_tokens`` are re-exported here for convenience.
"""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import NamedTuple, NoReturn, TypeAlias

import msgspec

from ctx.engine.abbreviation import MIN_SHORT
from ctx.engine.errors import InvalidInputError
from ctx.engine.layout import MEMORY_AREAS
from ctx.engine.model import KINDS, Memory
from ctx.engine.tokens import estimate_tokens, memory_tokens

__all__ = [
    "FIELDS",
    "HAS_VALUES",
    "And",
    "Facts",
    "Node",
    "Not",
    "Or",
    "QuerySyntaxError",
    "Term",
    "Text",
    "estimate_tokens",
    "evaluate",
    "format_query",
    "memory_tokens",
    "parse_query",
    "validate",
]

FIELDS = (
    *("kind", "tag", "context", "area", "id", "agent", "from", "to"),
    *("text", "title", "has", "created", "updated", "tokens"),
)
"""The field names a term may use."""
HAS_VALUES = ("links", "summary", "title", "tags", "source")
"""What ``has:`` can ask about."""

_ORDERED = ("created", "updated", "tokens")
_OPS = (">=", "<=", ">", "<", "=")
_CHOICES = {"kind": KINDS, "area": MEMORY_AREAS, "has": HAS_VALUES}
_MAX_DEPTH = 64
_FIELD_RE = re.compile(r"([A-Za-z][A-Za-z0-9_]*):", re.ASCII)
_ID_RE = re.compile(r"[0-9A-HJKMNP-TV-Z]{1,26}", re.ASCII | re.IGNORECASE)
_AGE_RE = re.compile(r"([0-9]{1,9})([mhdw])", re.ASCII)
_AGE_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_WHEN_RE = re.compile(  # only the groups that set the precision capture
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
    r"(?:([Tt][0-9]{2})(:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,6})?)?)?"
    r"(?:[Zz]|[+-][0-9]{2}:[0-9]{2})?)?",
    re.ASCII,
)
_WHEN_ADVICE = (
    "Use a date (2026-01-01), a date and time (2026-01-01T10:00) "
    "or an age such as 30m, 12h, 7d or 2w."
)
_TICK = timedelta(microseconds=1)


class QuerySyntaxError(InvalidInputError):
    """A query cannot be read, or names a field or value that does not exist.

    The hint gives advice, then the query with a caret under ``column``.

    Attributes:
        query: The query text.
        column: Where the problem is, counting characters from 1.
    """

    def __init__(
        self, message: str, *, query: str, column: int, advice: str | None = None
    ) -> None:
        lines = [advice] if advice else []
        if query.strip():  # the query, and a caret under the column
            shown = "".join(c if c.isprintable() else " " for c in query)
            lines += [f"  {shown}", f"  {' ' * (column - 1)}^"]
        super().__init__(message, hint="\n".join(lines) or None)
        self.query = query
        self.column = column


class Term(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """A ``field:value`` test; ``op`` is one of ``>= <= > < =``."""

    field: str
    op: str
    value: str


class Text(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Words to find in the title or body; ``phrase`` when they were quoted."""

    value: str
    phrase: bool


class Not(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Selects what ``operand`` does not."""

    operand: Node


class And(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Selects what both sides select."""

    left: Node
    right: Node


class Or(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Selects what either side selects."""

    left: Node
    right: Node


Node: TypeAlias = Term | Text | Not | And | Or
"""A parsed query: runs of AND or OR lean left (``a b c`` is ``(a b) c``)."""


class Facts(msgspec.Struct, frozen=True, kw_only=True):
    """What evaluating a query needs to know about one memory.

    Attributes:
        memory: The memory itself.
        path: Its path in the tree.
        area: Its top folder: memory, pinned, primed or sessions.
        context: Its context folder, or source name when pinned or primed.
        tokens: Its size, as :func:`~ctx.engine.tokens.memory_tokens` gives it.
        updated_at: When it was last written.
        agents: Every agent that wrote a version of it.
        written_by: The agent of its last write (None where history lacks it).
        written_in: The commit of its last write (None where history lacks it).
        links_out: Ids of the memories it links to.
        links_in: Ids of the memories that link to it.
        has_summary: Whether a summary memory is DERIVED_FROM it.
    """

    memory: Memory
    path: str
    area: str
    context: str
    tokens: int
    updated_at: datetime
    agents: frozenset[str] = frozenset()
    written_by: str | None = None
    written_in: str | None = None
    links_out: frozenset[str] = frozenset()
    links_in: frozenset[str] = frozenset()
    has_summary: bool = False


# --- checking terms ----------------------------------------------------------


class _TermError(Exception):
    """A leaf is invalid; ``part`` (field, op or value) says where."""

    def __init__(self, part: str, message: str, advice: str | None = None) -> None:
        super().__init__(message)
        self.part, self.message, self.advice = part, message, advice


class _Span(NamedTuple):
    start: datetime  # naive: in the zone of ``now``
    width: timedelta


@functools.lru_cache(maxsize=256)
def _parse_when(value: str) -> timedelta | _Span:
    """Returns an age as a timedelta, or a date or time as the span it covers."""
    if age := _AGE_RE.fullmatch(value):
        try:
            return timedelta(**{_AGE_UNITS[age[2]]: int(age[1])})
        except OverflowError:
            raise _TermError("value", f"The age {value!r} is too large") from None
    when = _WHEN_RE.fullmatch(value)
    if when is None:
        raise _TermError("value", f"Invalid date or age {value!r}", _WHEN_ADVICE)
    given = sum(unit is not None for unit in when.groups())  # T, :MM, :SS, .f
    fraction = when[4] or "."
    width = (
        timedelta(days=1),
        timedelta(hours=1),
        timedelta(minutes=1),
        timedelta(seconds=1),
        timedelta(microseconds=10 ** (7 - len(fraction))),
    )[given]
    try:
        start = datetime.fromisoformat(value.upper())
    except ValueError:
        raise _TermError("value", f"Invalid date {value!r}", _WHEN_ADVICE) from None
    return _Span(start, width)


def _parse_count(value: str) -> int:
    if value.isascii() and value.isdigit() and len(value) <= 18:
        return int(value)
    raise _TermError(
        "value", f"Invalid token count {value!r}", "Use a whole number: tokens:<500."
    )


def _check_leaf(leaf: Term | Text) -> None:
    """Raises :class:`_TermError` unless ``leaf`` can be evaluated."""
    if isinstance(leaf, Text):
        if not leaf.value.strip():
            raise _TermError("value", "Empty quotes", "Put the words to find inside.")
        return
    field, op, value = leaf.field, leaf.op, leaf.value
    if field not in FIELDS:
        raise _TermError(
            "field",
            f"Unknown field {field!r}",
            f"Fields: {', '.join(FIELDS)}. To find a word with a colon, quote it.",
        )
    if op not in _OPS or (op != "=" and field not in _ORDERED):
        raise _TermError(
            "op",
            f"Operator {op!r} does not apply to '{field}:'",
            "Only created:, updated: and tokens: take >, >=, < or <=.",
        )
    if not value.strip():
        raise _TermError("value", f"Empty value for '{field}:'")
    if field in _CHOICES and value not in _CHOICES[field]:
        what = "has: value" if field == "has" else field
        choices = ", ".join(_CHOICES[field])
        raise _TermError("value", f"Unknown {what} {value!r}", f"Use one of {choices}.")
    if field in ("id", "from", "to") and not _ID_RE.fullmatch(value):
        raise _TermError(
            "value",
            f"{value!r} is not a memory id or id prefix",
            "Ids look like 01JD2X9K7M3Q4R5S6T7V8W9XYZ.",
        )
    namespace, _, rest = value.partition(":")
    if field == "tag" and not value.endswith(("*", ":")) and not (namespace and rest):
        raise _TermError(
            "value",
            f"Tag {value!r} is not of the form namespace:value",
            f"Write tag:{namespace or 'tier'}: for any tag in a namespace.",
        )
    if field == "tokens":
        _parse_count(value)
    elif field in _ORDERED:
        _parse_when(value)


# --- parsing -----------------------------------------------------------------


class _Token(NamedTuple):
    kind: str  # ( ) - word string and or not end
    text: str  # the word, or the unescaped string
    start: int  # offset of the first character
    end: int  # offset after the last character


def _is_keyword(word: str) -> bool:
    return word.isascii() and word.upper() in ("AND", "OR", "NOT")


class _Parser:
    """Recursive descent over the tokens of one query, one method a rule."""

    def __init__(self, query: str) -> None:
        self.query = query
        self.tokens = self.lex()
        self.at = 0
        self.depth = 0

    def fail(self, message: str, offset: int, advice: str | None = None) -> NoReturn:
        raise QuerySyntaxError(
            f"{message} at column {offset + 1}.",
            query=self.query,
            column=offset + 1,
            advice=advice,
        )

    def lex(self) -> list[_Token]:
        query, tokens, i = self.query, [], 0
        while i < len(query):
            if query[i].isspace():
                i += 1
                continue
            j = i + 1
            if query[i] == '"':
                chars = []
                while j < len(query) and query[j] != '"':
                    if query[j] == "\\" and j + 1 < len(query):
                        j += 1
                    chars.append(query[j])
                    j += 1
                if j == len(query):
                    self.fail("Unterminated quote", i, 'Write \\" for a quote inside.')
                tokens.append(_Token("string", "".join(chars), i, j + 1))
                j += 1
            elif query[i] in "()-":
                tokens.append(_Token(query[i], query[i], i, j))
            else:
                while j < len(query) and not (query[j].isspace() or query[j] in '()"'):
                    j += 1
                word = query[i:j]
                kind = word.lower() if _is_keyword(word) else "word"
                tokens.append(_Token(kind, word, i, j))
            i = j
        tokens.append(_Token("end", "", len(query), len(query)))
        return tokens

    def peek(self) -> _Token:
        return self.tokens[self.at]

    def take(self) -> _Token:
        self.at += 1
        return self.tokens[self.at - 1]

    def parse(self) -> Node:
        if self.peek().kind == "end":
            raise QuerySyntaxError(
                "The query is empty.",
                query=self.query,
                column=1,
                advice="For example: kind:decision postgres",
            )
        node = self.or_expr()
        if self.peek().kind == ")":
            self.fail("Unmatched ')'", self.peek().start, "Remove it or add a '('.")
        return node

    def or_expr(self) -> Node:
        node = self.and_expr()
        while self.peek().kind == "or":
            self.take()
            node = Or(left=node, right=self.and_expr())
        return node

    def and_expr(self) -> Node:
        node = self.not_expr()
        while self.peek().kind in ("and", "not", "-", "(", "word", "string"):
            if self.peek().kind == "and":
                self.take()
            node = And(left=node, right=self.not_expr())
        return node

    def not_expr(self) -> Node:
        token = self.peek()
        if token.kind not in ("not", "-"):
            return self.atom()
        self.take()
        if token.kind == "-" and self.peek().start != token.end:
            self.fail("Expected a term right after '-'", token.end)
        return Not(operand=self.nested(token, self.not_expr))

    def nested(self, token: _Token, rule: Callable[[], Node]) -> Node:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            self.fail(f"The query nests deeper than {_MAX_DEPTH} levels", token.start)
        node = rule()
        self.depth -= 1
        return node

    def atom(self) -> Node:
        token = self.take()
        if token.kind == "(":
            node = self.nested(token, self.or_expr)
            if self.take().kind != ")":
                self.fail("Missing ')' for the '('", token.start, "Close it with ')'.")
            return node
        if token.kind == "word":
            return self.word(token)
        if token.kind == "string":
            return self.checked(
                Text(value=token.text, phrase=True), {"value": token.start}
            )
        if token.kind == "end":
            previous = self.tokens[self.at - 2].text
            self.fail(f"Expected a term after {previous!r}", token.start)
        advice = None
        if token.kind in ("and", "or"):
            advice = f'Put a term on each side, or search for the word: "{token.text}".'
        self.fail(f"Expected a term, found {token.text!r}", token.start, advice)

    def word(self, token: _Token) -> Node:
        field = _FIELD_RE.match(token.text)
        if field is None:
            return Text(value=token.text, phrase=False)
        name, rest = field[1].lower(), token.text[field.end() :]
        op = next((op for op in _OPS if rest.startswith(op)), "")
        value, op_at = rest[len(op) :], token.start + field.end()
        value_at = op_at + len(op)
        if name in FIELDS and not value:
            glued = self.peek()
            if glued.kind != "string" or glued.start != token.end:
                self.fail(
                    f"Expected a value after {token.text!r}",
                    token.end,
                    "Put the value right after the colon, with no space.",
                )
            value, value_at = self.take().text, glued.start
        term = Term(field=name, op=op or "=", value=value)
        return self.checked(
            term, {"field": token.start, "op": op_at, "value": value_at}
        )

    def checked(self, leaf: Term | Text, offsets: dict[str, int]) -> Node:
        try:
            _check_leaf(leaf)
        except _TermError as problem:
            self.fail(problem.message, offsets[problem.part], problem.advice)
        return leaf


def parse_query(text: str) -> Node:
    """Returns the tree of a query, each term checked as :func:`validate` does.

    Raises:
        QuerySyntaxError: the query is empty or malformed, or names an unknown
            field or an invalid value; ``column`` points at the problem.
    """
    return _Parser(text).parse()


# --- formatting --------------------------------------------------------------


def _chain(node: Node) -> list[Node]:
    """Returns the operands of a run of AND or OR nodes, left to right.

    Runs lean left; walking them in a loop keeps long ones off the stack.
    """
    kind, operands = type(node), []
    while isinstance(node, (And, Or)) and type(node) is kind:
        operands.append(node.right)
        node = node.left
    return [node, *reversed(operands)]


def _leaf_text(leaf: Term | Text) -> str:
    """Returns a term or words as the parser reads them back."""
    value = leaf.value
    bare = bool(value) and not any(c.isspace() or c in '()"' for c in value)
    if isinstance(leaf, Text):
        bare = bare and not (
            leaf.phrase
            or value.startswith("-")
            or _is_keyword(value)
            or _FIELD_RE.match(value)
        )
    else:
        bare = bare and not value.startswith(("<", ">", "="))
    if not bare:
        value = '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(leaf, Text):
        return value
    return f"{leaf.field}:{'' if leaf.op == '=' else leaf.op}{value}"


def _layout(
    node: Node, weakest: int, out: list[tuple[str, Term | Text | None]]
) -> None:
    """Appends the canonical text of ``node`` to ``out``, piece by piece.

    OR binds with strength 1, AND 2, NOT 3; a node weaker than ``weakest``
    goes in parentheses. A right operand is bracketed when it is a run of
    the same operator, because runs lean left.
    """
    if isinstance(node, (Term, Text)):
        out.append((_leaf_text(node), node))
        return
    strength = 1 if isinstance(node, Or) else 2 if isinstance(node, And) else 3
    if strength < weakest:
        out.append(("(", None))
    if isinstance(node, Not):
        out.append(("NOT ", None))
        _layout(node.operand, 3, out)
    else:
        for index, operand in enumerate(_chain(node)):
            if index:
                out.append((" OR " if strength == 1 else " AND ", None))
            _layout(operand, strength + 1, out)
    if strength < weakest:
        out.append((")", None))


def format_query(node: Node) -> str:
    """Returns the canonical text of a query tree.

    Operators are upper case, ``AND`` is written out, and parentheses and
    quotes appear only where needed: ``parse_query(format_query(tree))``
    gives back every tree that :func:`parse_query` returns.
    """
    out: list[tuple[str, Term | Text | None]] = []
    _layout(node, 1, out)
    return "".join(piece for piece, _ in out)


def validate(node: Node) -> None:
    """Checks the field, operator and value of every term of a tree.

    :func:`parse_query` runs the same checks as it reads; this is for trees
    built in code.

    Raises:
        QuerySyntaxError: a term is invalid; ``column`` counts in
            ``format_query(node)``.
    """
    out: list[tuple[str, Term | Text | None]] = []
    _layout(node, 1, out)
    offset = 0
    for piece, leaf in out:
        try:
            if leaf is not None:
                _check_leaf(leaf)
        except _TermError as problem:
            if isinstance(leaf, Term) and problem.part != "field":
                offset += len(leaf.field) + 1
                if problem.part == "value" and leaf.op != "=":
                    offset += len(leaf.op)
            raise QuerySyntaxError(
                f"{problem.message} at column {offset + 1}.",
                query="".join(piece for piece, _ in out),
                column=offset + 1,
                advice=problem.advice,
            ) from None
        offset += len(piece)


# --- evaluating --------------------------------------------------------------


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def _haystack(memory: Memory) -> str:
    return memory.body if memory.title is None else f"{memory.title}\n{memory.body}"


def _compare_time(moment: datetime, op: str, value: str, now: datetime) -> bool:
    """Compares ``moment`` with the span that a date, time or age covers."""
    now = now if now.tzinfo else now.replace(tzinfo=UTC)
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    when = _parse_when(value)
    if isinstance(when, timedelta):
        op = ">=" if op == "=" else op  # created:7d: within the last 7 days
        try:
            when = _Span(now - when, _TICK)
        except OverflowError:
            when = _Span(datetime.min.replace(tzinfo=UTC), _TICK)
    start = when.start if when.start.tzinfo else when.start.replace(tzinfo=now.tzinfo)
    try:
        end = start + when.width
    except OverflowError:
        end = datetime.max.replace(tzinfo=UTC)
    if op == "=":
        return start <= moment < end
    if op in (">", ">="):
        return moment >= (end if op == ">" else start)
    return moment < (start if op == "<" else end)


_COUNT_OPS: dict[str, Callable[[int, int], bool]] = {
    "=": operator.eq,
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
}
_HAS: dict[str, Callable[[Facts], bool]] = {
    "links": lambda f: bool(f.links_in or f.links_out),
    "summary": lambda f: f.has_summary,
    "title": lambda f: bool(f.memory.title and f.memory.title.strip()),
    "tags": lambda f: bool(f.memory.tags),
    "source": lambda f: f.memory.source is not None,
}


def _match(term: Term, facts: Facts, now: datetime) -> bool:
    field, value, memory = term.field, term.value, facts.memory
    if field in ("created", "updated"):
        moment = memory.created_at if field == "created" else facts.updated_at
        return _compare_time(moment, term.op, value, now)
    if field == "tokens":
        return _COUNT_OPS[term.op](facts.tokens, _parse_count(value))
    if field in ("id", "from", "to"):
        ids = {"id": {memory.id}, "from": facts.links_in, "to": facts.links_out}
        part = value.upper()
        # An end as listings print it (--abbrev): as long as a short id.
        end = part if len(part) >= MIN_SHORT else None
        return any(i.startswith(part) or (end and i.endswith(end)) for i in ids[field])
    if field == "tag":
        if value.endswith(("*", ":")):
            return any(tag.startswith(value.removesuffix("*")) for tag in memory.tags)
        return value in memory.tags
    if field in ("text", "title"):
        text = (memory.title or "") if field == "title" else _haystack(memory)
        return _fold(value) in _fold(text)
    if field == "has":
        return _HAS[value](facts)
    if field == "agent":
        return value in facts.agents
    own = {"kind": memory.kind, "context": facts.context, "area": facts.area}
    return own[field] == value


def _evaluate(node: Node, facts: Facts, now: datetime) -> bool:
    if isinstance(node, Term):
        return _match(node, facts, now)
    if isinstance(node, Text):
        return _fold(node.value) in _fold(_haystack(facts.memory))
    if isinstance(node, Not):
        return not _evaluate(node.operand, facts, now)
    results = (_evaluate(operand, facts, now) for operand in _chain(node))
    return all(results) if isinstance(node, And) else any(results)


def evaluate(node: Node, facts: Facts, now: datetime) -> bool:
    """Returns whether the memory that ``facts`` describe matches ``node``.

    Args:
        node: A tree from :func:`parse_query`, or one that :func:`validate`
            accepts.
        facts: What is known about the memory.
        now: The time that ages (``created:>7d``) count back from; dates
            without a zone are read in its zone (UTC when it has none).

    Raises:
        QuerySyntaxError: ``node`` is not valid.
    """
    try:
        return _evaluate(node, facts, now)
    except (_TermError, KeyError):  # KeyError: unknown field, operator or has:
        validate(node)
        raise
