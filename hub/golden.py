"""Golden questions: tests for memory, run by ``ctx test FILE``.

A file of questions, each with what a search must find in its first ``k``
hits: memory ids, words, or both. Run against a branch, it says which
questions still find what they should, so a memory pull request that
buries, loses or rewrites what the team relies on fails in CI like code
does. The file is TOML (docs/remotes.md, "Memory has tests")::

    k = 5                    # hits looked at per question (default 5)
    branch = "main"          # optional; ctx test --branch wins

    [[question]]
    ask = "Which database do we use?"
    ids = ["01JF3K8ZQ4"]     # each among the first k hits (an id or its start)
    words = ["postgres"]     # each in the title or body of one of them
    k = 3                    # this question's own k

A question passes when every id it names is among its first ``k`` hits and
every word it names is in one of them (case and accents as written are
compared case-insensitively). The questions run as ``ctx search`` runs
them: the same ranking, no pinned memories first, no token budget.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from ctx.engine import InvalidInputError, Outcome

if TYPE_CHECKING:
    from ctx.hub.workspace import Workspace

__all__ = [
    "GoldenQuestion",
    "GoldenReport",
    "GoldenSuite",
    "QuestionResult",
    "load_golden",
    "run_golden",
]

DEFAULT_K = 5
_MAX_K = 100
_MIN_ID = 4
_QUESTION_KEYS = {"ask", "ids", "words", "k"}
_TOP_KEYS = {"k", "branch", "question"}


class GoldenQuestion(msgspec.Struct, frozen=True, kw_only=True):
    """One golden question.

    Attributes:
        ask: The question, as an agent would ask it.
        ids: Memories that must be among the first ``k`` hits (ids or their
            first characters).
        words: Words that must each be in one of the first ``k`` hits.
        k: How many hits count.
    """

    ask: str
    ids: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    k: int = DEFAULT_K


class GoldenSuite(msgspec.Struct, frozen=True, kw_only=True):
    """A file of golden questions.

    Attributes:
        path: Where it was read from.
        questions: The questions, in the file's order.
        branch: The branch the file names, if any.
    """

    path: str
    questions: tuple[GoldenQuestion, ...]
    branch: str | None = None


class QuestionResult(msgspec.Struct, frozen=True, kw_only=True):
    """How one question fared.

    Attributes:
        ask: The question.
        passed: Every id and word it names was found.
        k: The hits looked at.
        hits: The ids of those hits, best first.
        ranks: For each id it names that was found, its rank (1 = first).
        missing_ids: The ids not among the hits.
        missing_words: The words in none of the hits.
    """

    ask: str
    passed: bool
    k: int
    hits: tuple[str, ...]
    ranks: dict[str, int]
    missing_ids: tuple[str, ...]
    missing_words: tuple[str, ...]


class GoldenReport(Outcome, frozen=True, kw_only=True):
    """A run of a golden file against a branch.

    Attributes:
        path: The file.
        branch: The branch searched.
        results: One per question, in the file's order.
        passed: How many questions passed.
        total: How many there are.
        min_pass: The share of questions that must pass (0 to 1).
        ok: ``passed / total`` reaches ``min_pass``.
    """

    path: str
    branch: str
    results: tuple[QuestionResult, ...]
    passed: int
    total: int
    min_pass: float
    ok: bool


def load_golden(path: Path) -> GoldenSuite:
    """Reads a golden file.

    Raises:
        InvalidInputError: the file cannot be read, is not TOML, or is not
            a golden file (the message names the question and the key).
    """
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InvalidInputError(f"Cannot read {path}: {exc.strerror}.") from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InvalidInputError(f"{path} is not valid TOML: {exc}.") from None
    _no_other_keys(path, "the file", data, _TOP_KEYS)
    default_k = _k(path, "the file", data.get("k", DEFAULT_K))
    branch = data.get("branch")
    if branch is not None and not isinstance(branch, str):
        raise _bad(path, "the file", "branch is not a string")
    raw = data.get("question", [])
    if not isinstance(raw, list) or not raw:
        raise InvalidInputError(
            f"{path} has no questions.",
            hint='Add one: [[question]] with ask = "..." and ids or words.',
        )
    questions = [_question(path, n, item, default_k) for n, item in enumerate(raw, 1)]
    return GoldenSuite(path=str(path), questions=tuple(questions), branch=branch)


def _question(path: Path, n: int, item: Any, default_k: int) -> GoldenQuestion:
    where = f"question {n}"
    if not isinstance(item, dict):
        raise _bad(path, where, "is not a table")
    _no_other_keys(path, where, item, _QUESTION_KEYS)
    ask = item.get("ask")
    if not isinstance(ask, str) or not ask.strip():
        raise _bad(path, where, "has no ask (the question's text)")
    ids = _strings(path, where, "ids", item.get("ids", []))
    words = _strings(path, where, "words", item.get("words", []))
    if not ids and not words:
        raise _bad(path, where, "names no ids and no words to find")
    for memory_id in ids:
        if len(memory_id) < _MIN_ID:
            raise _bad(path, where, f"id {memory_id!r} is shorter than {_MIN_ID}")
    return GoldenQuestion(
        ask=ask.strip(),
        ids=ids,
        words=words,
        k=_k(path, where, item.get("k", default_k)),
    )


def _strings(path: Path, where: str, key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(
        isinstance(v, str) and v.strip() for v in value
    ):
        raise _bad(path, where, f"{key} is not a list of non-empty strings")
    return tuple(v.strip() for v in value)


def _k(path: Path, where: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _bad(path, where, "k is not a whole number of hits, 1 or more")
    if value > _MAX_K:
        raise _bad(path, where, f"k is over {_MAX_K}")
    return value


def _no_other_keys(
    path: Path, where: str, table: dict[str, Any], known: set[str]
) -> None:
    unknown = sorted(set(table) - known)
    if unknown:
        raise _bad(path, where, f"has an unknown key {unknown[0]!r}")


def _bad(path: Path, where: str, what: str) -> InvalidInputError:
    return InvalidInputError(
        f"{path}: {where} {what}.",
        hint='docs/remotes.md, "Memory has tests", shows the format.',
    )


def run_golden(
    ws: Workspace,
    suite: GoldenSuite,
    *,
    branch: str | None = None,
    min_pass: float = 1.0,
) -> GoldenReport:
    """Runs every question of ``suite`` against ``branch``.

    Args:
        ws: The workspace.
        suite: The questions.
        branch: The branch to search (default: the file's, then the
            workspace's).
        min_pass: The share of questions that must pass for ``ok``.

    Raises:
        InvalidInputError: ``min_pass`` is not between 0 and 1.
        NotFoundError: the branch does not exist.
    """
    from ctx.hub.api import search

    if not 0.0 <= min_pass <= 1.0:
        raise InvalidInputError(
            f"{min_pass:g} is not a share of questions between 0 and 1."
        )
    target = branch or suite.branch or ws.branch or ws.store().head_branch()
    results = []
    for question in suite.questions:
        found = search(ws, question.ask, limit=question.k, branch=target)
        results.append(_judge(question, [(h.id, h.title, h.body) for h in found.hits]))
    passed = sum(r.passed for r in results)
    total = len(results)
    return GoldenReport(
        path=suite.path,
        branch=target,
        results=tuple(results),
        passed=passed,
        total=total,
        min_pass=min_pass,
        ok=passed >= min_pass * total,
    )


def _judge(
    question: GoldenQuestion, hits: list[tuple[str, str | None, str]]
) -> QuestionResult:
    ranks: dict[str, int] = {}
    for wanted in question.ids:
        for rank, (hit_id, _, _) in enumerate(hits, 1):
            if hit_id.startswith(wanted):
                ranks[wanted] = rank
                break
    texts = [f"{title or ''}\n{body}".casefold() for _, title, body in hits]
    missing_words = tuple(
        w for w in question.words if not any(w.casefold() in t for t in texts)
    )
    missing_ids = tuple(i for i in question.ids if i not in ranks)
    return QuestionResult(
        ask=question.ask,
        passed=not missing_ids and not missing_words,
        k=question.k,
        hits=tuple(hit_id for hit_id, _, _ in hits),
        ranks=ranks,
        missing_ids=missing_ids,
        missing_words=missing_words,
    )
