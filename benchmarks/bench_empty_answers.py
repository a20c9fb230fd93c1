"""How often recall answers "nothing relevant", for each caller, on every set.

An explicit recall (``ctx recall``, ``ctx search``, MCP, HTTP) and the
``prompt-submit`` hook each have a floor (docs/recall.md, "Only what
matters"). A false "nothing" costs an explicit caller its answer; a false
hit costs the hook tokens. This runs every question of each set once
through ``rank()`` and applies each caller's floor to the same ranking:

- LoCoMo turns (``bench_quality.py``: one memory per turn, categories 1-4):
  recall@10, and the share of questions that got no hit ("empty").
- LoCoMo sessions (``bench_sessions.py``: one memory per session): any@5,
  all@5 and the empty share.
- Cranfield: nDCG@10 and the empty share.
- One speaker's sessions, the questions that name the speaker asked in the
  first person ("When did I ...?"): any@5 and the empty share.
- Foreign questions: each LoCoMo question asked of the next conversation's
  turn store (as written, and typed in lower case), and of its session
  store, and each first-person question of
  another conversation's speaker, where nothing is relevant: the share
  that is empty (the higher, the better).

The hook's answer is the hits that pass its floor (``hook_hits`` in
``ctx.porcelain.hooks.events``) among those the recall returns.

Vectors are cached by text under ``benchmarks/.data`` (``_embed_cache.py``).

Run::

    .venv/bin/python benchmarks/bench_empty_answers.py [--quick] [--dump FILE]

It writes ``benchmarks/results/empty_answers.md`` (``--quick``: 3
conversations, print only). ``--dump`` writes each answerable question that
got an empty answer, with its best hit's relevance, as JSON lines.
"""

from __future__ import annotations

import json
import math
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import _robustness_variants as variants
import bench_quality as quality
import bench_sessions as sessions
from _bench_common import cpu_name
from _embed_cache import CachedEmbedder

from ctx.hub.config import RecallConfig
from ctx.hub.retrieval.embedders import make_embedder
from ctx.hub.retrieval.ranking import Ranked, Ranking, rank

try:  # the floors have a module of their own since the ranking was split
    from ctx.hub.retrieval.floors import relevant, weak_floor
except ImportError:  # ctx as committed before, on PYTHONPATH
    from ctx.hub.retrieval.ranking import (  # type: ignore[attr-defined,no-redef]
        relevant,
        weak_floor,
    )

RESULTS = Path(__file__).parent / "results" / "empty_answers.md"
HOOK_COSINE = 0.35  # [hooks] floor
WEAK_FLOORS = (0.36, 0.38, 0.4, 0.41, 0.42, 0.43)
NAMED_WEAK_FLOORS = (0.2, 0.22, 0.25, 0.28, 0.3)
NAMED = SimpleNamespace(named=True)  # what weak_floor reads of a named ranking


def explicit(ranking: Ranking, config: RecallConfig) -> list[Ranked]:
    """The hits an explicit recall returns (weak ones too)."""
    weak = weak_floor(config, ranking)
    return relevant(ranking, config.floor, config.fall_off, weak=weak)[0]


def strict(ranking: Ranking, config: RecallConfig) -> list[Ranked]:
    """The hits of a recall with the floor alone (the hook's recall)."""
    return relevant(ranking, config.floor, config.fall_off)[0]


def hook(ranking: Ranking, config: RecallConfig) -> list[Ranked]:
    """The hits the prompt-submit hook injects."""
    return [
        r
        for r in strict(ranking, config)
        if "vector" in r.channels and r.channels["vector"][1] >= HOOK_COSINE
    ]


def weak_at(floor: float) -> Callable[[Ranking, RecallConfig], list[Ranked]]:
    def answer(ranking: Ranking, config: RecallConfig) -> list[Ranked]:
        return relevant(ranking, config.floor, config.fall_off, weak=floor)[0]

    return answer


def named_weak_at(floor: float) -> Callable[[Ranking, RecallConfig], list[Ranked]]:
    """An explicit recall whose weak floor is ``floor`` for a named question."""

    def answer(ranking: Ranking, config: RecallConfig) -> list[Ranked]:
        # Asked where the floor turns on it, as recall asks it (floors.py).
        may_name = getattr(ranking, "may_name", None)  # since lower-case names
        best = max((r.relevance for r in ranking.hits), default=0.0)
        maybe = may_name is not None and floor <= best < config.floor
        named = ranking.named or (maybe and may_name())
        weak = floor if named else weak_floor(config, ranking)
        return relevant(ranking, config.floor, config.fall_off, weak=weak)[0]

    return answer


CALLERS: dict[str, Callable[[Ranking, RecallConfig], list[Ranked]]] = {
    "no floor": lambda ranking, _: ranking.hits,
    "explicit recall": explicit,
    "floor alone": strict,
    "hook": hook,
    **{f"weak floor {w:g}": weak_at(w) for w in WEAK_FLOORS},
    **{f"named weak floor {w:g}": named_weak_at(w) for w in NAMED_WEAK_FLOORS},
}
SHOWN = ("no floor", "explicit recall", "floor alone", "hook")


@dataclass
class Tally:
    """Per caller: the scores of each question and how many were empty."""

    scores: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    empty: dict[str, int] = field(default_factory=dict)
    asked: int = 0

    def add(self, caller: str, empty: bool, **scores: float) -> None:
        self.empty[caller] = self.empty.get(caller, 0) + empty
        for name, value in scores.items():
            self.scores.setdefault(caller, {}).setdefault(name, []).append(value)

    def mean(self, caller: str, name: str) -> float:
        values = self.scores[caller][name]
        return sum(values) / len(values)

    def share(self, caller: str) -> float:
        return self.empty.get(caller, 0) / self.asked


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def dumped(dump: list[dict], where: str, question: str, ranking: Ranking) -> None:
    best = max(ranking.hits, key=lambda r: r.relevance, default=None)
    dump.append(
        {
            "set": where,
            "question": question,
            "best_relevance": round(best.relevance, 3) if best else None,
            "best_cosine": round(best.channels["vector"][1], 3)
            if best and "vector" in best.channels
            else None,
        }
    )


def both(
    mine: quality.Built,
    other: quality.Built,
    text: str,
    now: datetime,
    own: Tally,
    foreign: Tally,
) -> tuple[Ranking, Ranking]:
    """Ranks a question in its own store and in another; counts it in both."""
    own.asked += 1
    foreign.asked += 1
    config = RecallConfig()
    return (
        rank(mine.searcher, text, config=config, now=now),
        rank(other.searcher, text, config=config, now=now),
    )


def turns(
    eval_dir: Path, embedder: CachedEmbedder, quick: bool, dump: list[dict]
) -> tuple[Tally, Tally, Tally, list[str]]:
    """Returns the tallies of LoCoMo turns (own questions, foreign ones, the
    foreign ones typed in lower case), and the lines on questions that name a
    speaker."""
    ref = quality.load_reference(eval_dir)
    corpora = quality.load_locomo(eval_dir, ref)[: 3 if quick else None]
    built = [quality.build(c, embedder) for c in corpora]
    embedder.save()
    progress("turn stores built")
    config = RecallConfig()
    own, foreign, lower = Tally(), Tally(), Tally()
    named = Tally()  # questions naming one speaker: the other's evidence turns
    for number, corpus in enumerate(corpora):
        mine, other = built[number], built[(number + 1) % len(built)]
        plain = quality.reference_ranker(ref, corpus)
        others = quality.other_speakers_turns(corpus)
        for question, theirs in zip(corpus.questions, others, strict=True):
            if theirs:
                named.asked += 1
                for label, config_ in (
                    ("ctx, defaults", config),
                    ("ctx, tags 0", RecallConfig(tags=0)),
                ):
                    found = rank(
                        mine.searcher, question.text, config=config_, now=corpus.now
                    )
                    top = {mine.key_of[r.id] for r in found.hits[:10]}
                    named.add(
                        label, False, r10=sum(e in top for e in theirs) / len(theirs)
                    )
                top = set(plain(question.text)[:10])
                named.add(
                    "plain BM25", False, r10=sum(e in top for e in theirs) / len(theirs)
                )
            if question.category not in quality.CATEGORIES:
                found = rank(
                    mine.searcher, question.text, config=config, now=corpus.now
                )
                top = {mine.key_of[r.id] for r in found.hits[:10]}
                share = sum(e in top for e in question.evidence) / len(
                    question.evidence
                )
                named.add("adversarial", False, r10=share)
                continue
            ranking, asked = both(mine, other, question.text, corpus.now, own, foreign)
            # Typed in lower case, a question has no capitals to tell a name by.
            lower.asked += 1
            asked_lower = rank(
                other.searcher, question.text.lower(), config=config, now=corpus.now
            )
            for caller, answer in CALLERS.items():
                lower.add(caller, not answer(asked_lower, config))
                hits = answer(ranking, config)
                found_keys = {mine.key_of[r.id] for r in hits[:10]}
                share = sum(e in found_keys for e in question.evidence)
                own.add(caller, not hits, r10=share / len(question.evidence))
                foreign.add(caller, not answer(asked, config))
                if caller == "explicit recall" and not hits:
                    dumped(dump, "turns", question.text, ranking)
    lines = [
        "## Questions that name one speaker, answered in the other's turn",
        "",
        f"LoCoMo questions (all categories) that name exactly one of the two speakers"
        f" and whose evidence holds a turn of the other ({named.asked}): recall@10 of"
        " those turns. Adversarial questions (category 5, which ask about one speaker"
        f" what the other did): recall@10 of their evidence with the defaults,"
        f" {named.mean('adversarial', 'r10'):.4f}.",
        "",
        "| ranking | recall@10 of the other speaker's evidence turns |",
        "|---|---|",
        *[
            f"| {label} | {named.mean(label, 'r10'):.4f} |"
            for label in ("ctx, defaults", "ctx, tags 0", "plain BM25")
        ],
        "",
    ]
    return own, foreign, lower, lines


def session_sets(
    eval_dir: Path, embedder: CachedEmbedder, quick: bool, dump: list[dict]
) -> tuple[Tally, Tally]:
    """Returns the tallies of LoCoMo sessions: own questions, foreign ones."""
    corpora = sessions.load(eval_dir)[: 3 if quick else None]
    built = [
        quality.build(
            quality.Corpus(c.name, c.texts, c.drafts, c.keys, c.now), embedder
        )
        for c in corpora
    ]
    embedder.save()
    progress("session stores built")
    own, foreign = Tally(), Tally()
    for number, corpus in enumerate(corpora):
        mine, other = built[number], built[(number + 1) % len(built)]
        ask_sessions(corpus, mine, other, (own, foreign), dump, "sessions")
    return own, foreign


def ask_sessions(
    made: sessions.Sessions,
    mine: quality.Built,
    other: quality.Built,
    tallies: tuple[Tally, Tally],
    dump: list[dict],
    where: str,
) -> None:
    """Asks a session store its questions, and ``other`` them as foreign ones."""
    own, foreign = tallies
    config = RecallConfig()
    for question in made.questions:
        ranking, asked = both(mine, other, question.text, made.now, own, foreign)
        for caller, answer in CALLERS.items():
            hits = answer(ranking, config)
            top = {mine.key_of[r.id] for r in hits[:5]}
            own.add(
                caller,
                not hits,
                any5=bool(question.gold & top),
                all5=question.gold <= top,
            )
            foreign.add(caller, not answer(asked, config))
            if caller == "explicit recall" and not hits:
                dumped(dump, where, question.text, ranking)


def first_person_sets(
    eval_dir: Path, embedder: CachedEmbedder, quick: bool, dump: list[dict]
) -> tuple[Tally, Tally]:
    """Returns the tallies of one speaker's sessions asked in the first person.

    Each speaker's own turns, one memory per session, asked the questions
    that name that speaker in the first person ("When did I go to the
    support group?": ``_robustness_variants.in_first_person``); the foreign
    questions are another conversation's speaker's, asked alike, where
    "I" is someone else.
    """
    ref = quality.load_reference(eval_dir)
    conversations = []  # per conversation, per speaker: (sessions, store)
    for corpus in quality.load_locomo(eval_dir, ref)[: 3 if quick else None]:
        stores = []
        for speaker in variants.speakers(corpus):
            made = variants.in_first_person(
                variants.sessions_of(corpus, speaker), speaker
            )
            built = quality.build(
                quality.Corpus(made.name, made.texts, made.drafts, made.keys, made.now),
                embedder,
            )
            stores.append((made, built))
        conversations.append(stores)
    embedder.save()
    progress("one speaker's session stores built")
    own, foreign = Tally(), Tally()
    for number, stores in enumerate(conversations):
        theirs = conversations[(number + 1) % len(conversations)]
        for speaker, (made, mine) in enumerate(stores):
            # The speaker in the same place of the next conversation.
            other = theirs[min(speaker, len(theirs) - 1)][1]
            ask_sessions(made, mine, other, (own, foreign), dump, "first person")
    return own, foreign


def cranfield(eval_dir: Path, embedder: CachedEmbedder, dump: list[dict]) -> Tally:
    corpus = quality.load_cranfield(eval_dir)
    built = quality.build(corpus, embedder)
    embedder.save()
    progress("Cranfield store built")
    config = RecallConfig()
    tally = Tally()
    for question in corpus.questions:
        ranking = rank(built.searcher, question.text, config=config, now=corpus.now)
        tally.asked += 1
        gains = question.gains
        ideal = sorted(gains.values(), reverse=True)[:10]
        best = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
        for caller, answer in CALLERS.items():
            hits = answer(ranking, config)
            top = [built.key_of[r.id] for r in hits[:10]]
            dcg = sum(gains.get(d, 0) / math.log2(i + 2) for i, d in enumerate(top))
            tally.add(caller, not hits, ndcg=dcg / best)
            if caller == "explicit recall" and not hits:
                dumped(dump, "cranfield", question.text, ranking)
    return tally


def rows(name: str, tally: Tally, metrics: Sequence[str]) -> list[str]:
    out = []
    for caller in SHOWN:
        cells = [name, caller, f"{tally.share(caller):.1%}"]
        cells += [f"{tally.mean(caller, m):.4f}" for m in metrics]
        out.append("| " + " | ".join(cells) + " |")
    return out


def main() -> None:
    """Writes (or with --quick prints) the report."""
    parser = quality.eval_parser(__doc__, "3 conversations, print")
    parser.add_argument("--dump", type=Path, help="write the empty answers here")
    args = parser.parse_args()
    os.environ["CTX_NO_HUB"] = "1"
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    began = time.perf_counter()
    load = os.getloadavg()[0]
    eval_dir = args.eval_dir.resolve()
    embedder = CachedEmbedder(make_embedder({"kind": "minilm"}))
    dump: list[dict] = []
    own_turns, foreign_turns, foreign_lower, speakers = turns(
        eval_dir, embedder, args.quick, dump
    )
    progress("turns done")
    own_sessions, foreign_sessions = session_sets(eval_dir, embedder, args.quick, dump)
    progress("sessions done")
    own_first, foreign_first = first_person_sets(eval_dir, embedder, args.quick, dump)
    progress("first person done")
    cran = cranfield(eval_dir, embedder, dump)
    config = RecallConfig()
    lines = [
        '# Empty answers ("nothing relevant") by caller',
        "",
        "Generated by `benchmarks/bench_empty_answers.py`; do not edit by hand.",
        "",
        f"Date {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {cpu_name()},"
        f" {os.cpu_count()} cores; Python {platform.python_version()};"
        f" {time.perf_counter() - began:.0f} s; {embedder.embedded} texts embedded"
        f" this run. Load average at start {load:.1f}. Embedder: MiniLM.",
        "",
        *([f"Conditions: {args.note}", ""] if args.note else []),
        f"Defaults: floor {config.floor:g}, fall-off {config.fall_off:g}; the"
        f" hook's cosine floor {HOOK_COSINE:g}.",
        "",
        "## Answerable questions: the share with an empty answer, and the score",
        "",
        "| set | caller | empty | score |",
        "|---|---|---|---|",
        *rows(f"LoCoMo turns ({own_turns.asked}), recall@10", own_turns, ["r10"]),
        *rows(
            f"LoCoMo sessions ({own_sessions.asked}), any@5",
            own_sessions,
            ["any5"],
        ),
        *rows(
            f"LoCoMo sessions ({own_sessions.asked}), all@5",
            own_sessions,
            ["all5"],
        ),
        *rows(
            f"One speaker's sessions, first person ({own_first.asked}), any@5",
            own_first,
            ["any5"],
        ),
        *rows(f"Cranfield ({cran.asked}), nDCG@10", cran, ["ndcg"]),
        "",
        "## Foreign questions (nothing is relevant): the share with an empty answer",
        "",
        "| store | " + " | ".join(SHOWN) + " |",
        "|---|" + "---|" * len(SHOWN),
        *[
            f"| {name} ({t.asked}) | "
            + " | ".join(f"{t.share(c):.1%}" for c in SHOWN)
            + " |"
            for name, t in (
                ("LoCoMo turns", foreign_turns),
                ("LoCoMo turns, typed in lower case", foreign_lower),
                ("LoCoMo sessions", foreign_sessions),
                ("One speaker's sessions, first person", foreign_first),
            )
        ],
        "",
        "The first-person questions asked of another conversation's speaker are"
        " about someone else's life, but \"I\" there is the store's writer too:"
        " an explicit recall gives them its lower weak floor, as a question"
        " that names someone the store holds (docs/recall.md).",
        "",
        "## Where the explicit recall's weak floor could go",
        "",
        "The share of questions with an empty answer when a recall whose best hit"
        " is under the floor still answers with the hits that reach the weak floor.",
        "",
        "| weak floor | LoCoMo turns | sessions | Cranfield | foreign turns |"
        " foreign sessions |",
        "|---|---|---|---|---|---|",
        *[
            f"| {w:g} | {own_turns.share(c):.1%} | {own_sessions.share(c):.1%} |"
            f" {cran.share(c):.1%} | {foreign_turns.share(c):.1%} |"
            f" {foreign_sessions.share(c):.1%} |"
            for w in (*WEAK_FLOORS, config.floor)
            for c in [f"weak floor {w:g}" if w != config.floor else "floor alone"]
        ],
        "",
        "## Where the weak floor of a named question could go",
        "",
        "The same, with the weak floor of a question that names someone the"
        " store holds (`Ranking.named`: a name, a tag, or a question in the"
        " first person asked of a store of its writer's own words) set apart;"
        " the last row is the default.",
        "",
        "| named weak floor | LoCoMo turns | sessions | first person |"
        " foreign turns | foreign sessions | foreign first person |",
        "|---|---|---|---|---|---|---|",
        *[
            f"| {w:g} | {own_turns.share(c):.1%} | {own_sessions.share(c):.1%} |"
            f" {own_first.share(c):.1%} | {foreign_turns.share(c):.1%} |"
            f" {foreign_sessions.share(c):.1%} | {foreign_first.share(c):.1%} |"
            for w, c in [
                *((w, f"named weak floor {w:g}") for w in NAMED_WEAK_FLOORS),
                (weak_floor(config, NAMED), "explicit recall"),  # type: ignore[arg-type],
            ]
        ],
        "",
        *speakers,
    ]
    text = "\n".join(lines)
    print(text)
    if args.dump:
        args.dump.write_text("".join(json.dumps(d) + "\n" for d in dump))
    if not args.quick:
        RESULTS.write_text(text)


if __name__ == "__main__":
    main()
