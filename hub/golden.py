"""Golden questions: tests for memory, run by ``ctx test FILE``.

A file of questions, each with what a search must find in its first ``k``
hits: memory ids, words, or both. Run against a branch, it says which
questions still find what they should, so a memory pull request that
buries, loses or rewrites what the team relies on fails in CI like code
does. The file is TOML (docs/remotes.md, "Memory has tests")::

    k = 5                    # hits looked at per question (default 5)
    branch = "main"          # optional; ctx test --branch wins, CTX_BRANCH not

    [[question]]
    ask = "Which database do we use?"
    ids = ["M0M9EYH"]        # each among the first k hits (as ctx show takes it)
    words = ["postgres"]     # each in the title or body of one of them
    k = 3                    # this question's own k

A question passes when every id it names is among its first ``k`` hits and
every word it names is in one of them (case and accents as written are
compared case-insensitively). The questions run as ``ctx search`` runs
them: the same ranking, no pinned memories first, no token budget.

An id is resolved as every command resolves one (:func:`~ctx.engine.show_memory`),
on the branch tested, before any question runs: whole, or 6 characters or
more from its start or its end, in any case. Matching hits by a bare prefix
would let ``"01M8"`` pass for whichever memory made that second came first,
a test that tests nothing; so an id that names several memories, or is no id
at all, is an error in the file, and one that names no memory on the branch
fails the run, whatever share must pass: a memory the file relies on is gone,
or the file names one that never was.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from ctx.engine import (
    InvalidInputError,
    MemoryNotFoundError,
    Outcome,
    Store,
    resolve_revision,
    show_memory,
)

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
_QUESTION_KEYS = {"ask", "ids", "words", "k"}
_TOP_KEYS = {"k", "branch", "question"}


class GoldenQuestion(msgspec.Struct, frozen=True, kw_only=True):
    """One golden question.

    Attributes:
        ask: The question, as an agent would ask it.
        ids: Memories that must be among the first ``k`` hits, as the file
            writes them (whole ids, or their start or end: see
            :func:`~ctx.engine.resolve_memory_id`).
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
        absent_ids: The ids (also in ``missing_ids``) that name no memory on
            the branch: each fails the whole run.
    """

    ask: str
    passed: bool
    k: int
    hits: tuple[str, ...]
    ranks: dict[str, int]
    missing_ids: tuple[str, ...]
    missing_words: tuple[str, ...]
    absent_ids: tuple[str, ...] = ()


class GoldenReport(Outcome, frozen=True, kw_only=True):
    """A run of a golden file against a branch.

    Attributes:
        path: The file.
        branch: The branch searched.
        results: One per question, in the file's order.
        passed: How many questions passed.
        total: How many there are.
        min_pass: The share of questions that must pass (0 to 1).
        ok: ``passed / total`` reaches ``min_pass``, and every id the file
            names is a memory on ``branch``.
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
    if isinstance(raw, dict):
        # `[question]` (one table) where `[[question]]` was meant: saying
        # "no questions" of a file that holds one would send the user looking
        # in the wrong place.
        raise _bad(
            path,
            "the file",
            "has one [question] table: questions are an array of tables, "
            "each headed [[question]]",
        )
    if not isinstance(raw, list):
        raise _bad(path, "the file", "question is not an array of tables, [[question]]")
    if not raw:
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
    seen: set[str] = set()
    for given in ids:  # counted twice, one lost memory would fail twice
        if given.casefold() in seen:
            raise _bad(path, where, f"names the id {given!r} twice")
        seen.add(given.casefold())
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
        InvalidInputError: ``min_pass`` is not between 0 and 1, or an id of
            the file is not an id, or names several memories on the branch
            (the message names the file and the question).
        NotFoundError: the branch does not exist.
    """
    from ctx.hub.api import search

    if not 0.0 <= min_pass <= 1.0:
        raise InvalidInputError(
            f"{min_pass:g} is not a share of questions between 0 and 1."
        )
    named_branch = branch if branch is not None else suite.branch
    target = named_branch or ws.branch or ws.store().head_branch()
    with ws.lock.reading():
        store = ws.store()
        # A branch the command or the file names must be one ("No branch
        # named", an empty or invalid name refused), as ``ctx search`` says;
        # the workspace's own may be a code branch's, not made yet.
        if named_branch is not None:
            tip = store.branch_tip(named_branch)
        else:
            tip = resolve_revision(store, target)
        named = [
            _resolve_ids(store, tip, suite.path, n, question)
            for n, question in enumerate(suite.questions, 1)
        ]
    results = []
    for question, ids in zip(suite.questions, named, strict=True):
        found = search(ws, question.ask, limit=question.k, branch=target)
        hits = [(h.id, h.title, h.body) for h in found.hits]
        results.append(_judge(question, ids, hits))
    passed = sum(r.passed for r in results)
    total = len(results)
    return GoldenReport(
        path=suite.path,
        branch=target,
        results=tuple(results),
        passed=passed,
        total=total,
        min_pass=min_pass,
        ok=passed >= min_pass * total and not any(r.absent_ids for r in results),
    )


def _resolve_ids(
    store: Store, tip: str, path: str, n: int, question: GoldenQuestion
) -> dict[str, str | None]:
    """Returns each id of ``question`` as written, with the memory it names.

    None stands for an id that names no memory at ``tip``. An id that is not
    one, or is ambiguous there, is an error of the file, reported with its
    question as :func:`load_golden` reports a bad key.
    """
    resolved: dict[str, str | None] = {}
    for given in question.ids:
        try:
            memory_id = show_memory(store, given, tip).memory.id
        except MemoryNotFoundError:
            memory_id = None
        except InvalidInputError as exc:
            raise InvalidInputError(
                f"{path}: question {n}: {exc.message}", hint=exc.hint
            ) from None
        same = [g for g, m in resolved.items() if memory_id and m == memory_id]
        if same:  # its start and its end, say
            raise InvalidInputError(
                f"{path}: question {n}: {given!r} names the same memory as "
                f"{same[0]!r}.",
                hint="Name each memory once.",
            )
        resolved[given] = memory_id
    return resolved


def _judge(
    question: GoldenQuestion,
    ids: dict[str, str | None],
    hits: list[tuple[str, str | None, str]],
) -> QuestionResult:
    ranks: dict[str, int] = {}
    for given, memory_id in ids.items():
        for rank, (hit_id, _, _) in enumerate(hits, 1):
            if hit_id == memory_id:
                ranks[given] = rank
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
        absent_ids=tuple(i for i in question.ids if ids[i] is None),
    )
