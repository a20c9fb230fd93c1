"""Recall on variants of LoCoMo and Cranfield that ctx's defaults were not fitted to.

Issue 29's robustness suite. Every variant is built from ``shared/eval``
by fixed rules and seeds (no model writes anything; the rules are in
``_robustness_variants.py``), and every system is scored on every set in
one run:

- **LoCoMo turns** (``bench_quality.py``'s stores: one memory per turn,
  tagged with its speaker, the previous turn as reply context): all
  questions of categories 1-4; the questions that name a speaker; the same
  questions with each speaker's name **misspelt** (one or two edits past
  its first letter: a vowel changed, a letter doubled, dropped or two
  swapped; never a word the conversation holds) or replaced by a **short
  form** (:func:`short_form`: "Deborah" -> "Deb", "Andrew" -> "Andy",
  "Tim" -> "Timmy"), and both **typed in lower case** without the question
  mark (:func:`in_lower_case`: "what did deb paint"), as people type in a
  hurry; the same questions asked of stores whose
  speakers have **two-word names** (a surname from a fixed list, so turns
  read "Caroline Walker: ..." and are tagged ``speaker:caroline-walker``);
  and the questions that name one speaker about **what the other said**
  (some evidence turn is the other speaker's: recall@10 of those turns),
  asked of the plain stores.
- **Two conversations in one store** (LoCoMo's ten, paired in order):
  four speakers, each tagged on about a quarter of the turns, and the
  other conversation's turns as distractors; every answerable question of
  both, recall@10.
- **LoCoMo sessions**: one memory per session (``bench_sessions.py``'s
  protocol), **whole**, and holding **one speaker's turns only** (a store
  per speaker of each conversation, a memory per session of that speaker's
  lines; a question is asked of the speaker whose turns hold all its
  evidence, and its gold is the sessions its evidence falls in); and of
  those, the questions that name the speaker **asked in the first person**
  (:func:`first_person`: "When did I go to the support group?"), as a
  person asks of a store of their own turns: no name to match.
- **Cranfield** (``bench_quality.py``'s store), its queries as asked and
  **as claims** (:func:`as_claim`: "what similarity laws must be obeyed
  when ..." -> "Similarity laws must be obeyed when ...."), as a set of
  scientific claims asks of abstracts.
- **Typos** (all LoCoMo questions of categories 1-4 of the turn stores, and
  Cranfield's queries): one word of five letters or more misspelt, two in
  a question that has four such words (:func:`with_typos`: one edit past
  the first letter, no function word nor capitalised name, never a word
  of the store), as a question typed in haste.
- **After a pasted log** (the same questions and queries): each asked after
  thirty lines of a build's output (:func:`with_pasted_log`: "step 3/30:
  building layer sha256:<64 hex digits> ... done in 2.7 s", seeded), as a
  prompt with a pasted log asks.

- **Paraphrased** questions (all questions of categories 1-4, asked of the
  turn stores and of the whole sessions): no model may write the data here,
  so each question is rewritten by one fixed, seeded rule set
  (``_paraphrase.py``: synonyms from a small committed table, then as
  asked, the question word moved to the end, or only its content words).

Metrics: recall@10 of the evidence turns; any@5 / all@5 of the gold
sessions; nDCG@10 on Cranfield; and for ctx with its relevance floor, the
share of the (answerable) questions that got an empty answer.

Systems, each on the same texts:

- **BM25**: ``rank_bm25``'s BM25Okapi (k1 1.5, b 0.75) over lower-cased
  ``[a-z0-9]+`` tokens of the text (the speaker's name included);
- **MiniLM**: brute-force cosine between the question's vector and each
  text's (a long text scored by its best passage, cut as ctx cuts them,
  :func:`ctx.hub.retrieval.index.passages.passages`); no reply context, no tags;
- **RRF**: the two fused by reciprocal ranks (k 60, top 100 of each);
- **Tantivy search**: ctx's lexical index alone (``Searcher.search_bm25``:
  the query's terms in title, body, context and tags);
- **ctx BM25 channel**: ``rank()`` with every other channel, the tag boost
  and gravity off, as a store's config can set it: the lexical channel and
  the time channel (the same search, within the times a question names);
- **ctx**: ``rank()`` with the defaults, without and with the relevance
  floor as an explicit recall applies it (``relevant()`` with the
  configured floor and fall-off, and the weak floor below which a recall
  whose best hit is weak still answers nothing, where ctx has one); the
  share of empty answers is also given for the floor alone (the hook's).

Vectors are cached by text under ``benchmarks/.data`` (``_embed_cache.py``).
``--lexical`` scores only the three BM25 systems, on stores embedded by the
hashing embedder (a minute, not an hour, to compare a change of the lexical
channel); ``--quick`` takes the first 2 conversations and prints only;
``--only KEY...`` builds and scores only those sets (:data:`SETS`: the
turns' variants need only the plain turn stores).

Run::

    .venv/bin/python benchmarks/bench_robustness.py [--quick] [--lexical] [--only KEY...]

It writes ``benchmarks/results/robustness.md`` (``--lexical``:
``robustness_lexical.md``; ``--only misspelt short``:
``robustness_misspelt-short.md``).
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import bench_quality as quality
import bench_sessions as sessions
import numpy as np
from _bench_common import FROZEN_ENV, machine_lines, run_frozen
from _embed_cache import CachedEmbedder
from _robustness_variants import (
    NAME_VARIANTS,
    after_a_log,
    as_claim,
    asked,
    in_first_person,
    name_variants,
    paraphrased,
    sessions_of,
    speakers,
    tokens,
    two_conversations,
    two_word_names,
    typed_in_haste,
    with_questions,
)
from rank_bm25 import BM25Okapi

from ctx.hub.config import RecallConfig
from ctx.hub.retrieval import ranking

try:  # the floors have a module of their own since the ranking was split
    from ctx.hub.retrieval import floors
except ImportError:  # a frozen copy of a commit before (--rev)
    floors = ranking  # type: ignore[assignment]
from ctx.hub.retrieval.embedders import Embedder, embed_queries, make_embedder
from ctx.hub.retrieval.index.passages import passages
from ctx.hub.retrieval.ranking import Ranked, Ranking, rank

RESULTS = Path(__file__).parent / "results"
DEPTH = 100
RRF_K = 60
BM25_CHANNEL = RecallConfig(vector=0, fuzzy=0, tags=0, gravity=0)

Ranker = Callable[[str], list[str]]


def weak_floor(config: RecallConfig, found: Ranking) -> float | None:
    """Returns the floor of an explicit recall's weak hits, if ctx has one."""
    made = getattr(floors, "weak_floor", None)  # not before issue 29
    if made is None:
        return None
    try:
        return float(made(config, found))
    except TypeError:  # before a named question had a floor of its own
        return float(made(config))


def relevant_hits(
    found: Ranking, config: RecallConfig, weak: float | None
) -> list[Ranked]:
    """Returns the hits ``relevant()`` keeps, with a weak floor if given."""
    if weak is None:
        return floors.relevant(found, config.floor, config.fall_off)[0]
    return floors.relevant(found, config.floor, config.fall_off, weak=weak)[0]


# -- the systems ----------------------------------------------------------------


@dataclass
class Documents:
    """One store's texts as the baselines see them, and ctx's store of them."""

    keys: list[str]
    texts: list[str]
    built: quality.Built
    now: datetime
    bm25: BM25Okapi = field(init=False)
    owners: np.ndarray = field(init=False)
    vectors: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.bm25 = BM25Okapi([tokens(t) for t in self.texts])

    def embed(self, embedder: Embedder) -> None:
        owners, pieces = [], []
        for row, text in enumerate(self.texts):
            for piece in passages(text):
                owners.append(row)
                pieces.append(piece)
        self.owners = np.array(owners)
        self.vectors = embedder.embed(pieces)


class Systems:
    """Ranks a question of one store by each system (ctx's rankings kept)."""

    def __init__(self, embedder: Embedder, lexical: bool) -> None:
        self.embedder = embedder
        self.lexical = lexical
        self._ranked: dict[tuple[int, str, str], list[str]] = {}

    def names(self) -> list[str]:
        if self.lexical:
            return ["BM25", "Tantivy search", "ctx BM25 channel"]
        return [
            "BM25",
            "MiniLM",
            "RRF",
            "Tantivy search",
            "ctx BM25 channel",
            "ctx",
            "ctx + floor",
        ]

    def ranker(self, name: str, docs: Documents) -> Ranker:
        return {
            "BM25": lambda q: self.bm25(docs, q),
            "MiniLM": lambda q: self.minilm(docs, q),
            "RRF": lambda q: self.rrf(docs, q),
            "ctx BM25 channel": lambda q: self.ctx(docs, q, "bm25"),
            "Tantivy search": lambda q: self.tantivy(docs, q),
            "ctx": lambda q: self.ctx(docs, q, "defaults"),
            "ctx + floor": lambda q: self.ctx(docs, q, "floor"),
        }[name]

    def bm25(self, docs: Documents, question: str) -> list[str]:
        scores = docs.bm25.get_scores(tokens(question))
        order = np.argsort(-scores, kind="stable")[:DEPTH]
        return [docs.keys[i] for i in order]

    def minilm(self, docs: Documents, question: str) -> list[str]:
        assert docs.vectors is not None
        query = embed_queries(self.embedder, [question])[0]
        best = np.full(len(docs.keys), -2.0, dtype=np.float32)
        np.maximum.at(best, docs.owners, docs.vectors @ query)
        order = np.argsort(-best, kind="stable")[:DEPTH]
        return [docs.keys[i] for i in order]

    def rrf(self, docs: Documents, question: str) -> list[str]:
        fused: dict[str, float] = {}
        for ranked in (self.bm25(docs, question), self.minilm(docs, question)):
            for position, key in enumerate(ranked, start=1):
                fused[key] = fused.get(key, 0.0) + 1 / (RRF_K + position)
        return sorted(fused, key=lambda k: (-fused[k], k))[:DEPTH]

    def tantivy(self, docs: Documents, question: str) -> list[str]:
        """Returns the lexical index's own ranking (no time channel, no fusion)."""
        built = docs.built
        by_blob = built.view.by_blob
        hits = built.searcher.search_bm25(question, DEPTH)
        return [built.key_of[by_blob[blob]] for blob, _ in hits]

    def ctx(self, docs: Documents, question: str, how: str) -> list[str]:
        """Returns ctx's ranking: its BM25 channel, defaults, or with a floor.

        ``floor``: as an explicit recall keeps its hits (weak ones when none
        is strong, where the revision measured has them); ``hook``: as the
        floor alone keeps them.
        """
        memo = (id(docs), question, how)
        if memo not in self._ranked:
            built = docs.built
            config = BM25_CHANNEL if how == "bm25" else RecallConfig()
            found = rank(built.searcher, question, config=config, now=docs.now)
            keys = [built.key_of[r.id] for r in found.hits[:DEPTH]]
            if how == "bm25":
                self._ranked[memo] = keys
            else:
                self._ranked[(id(docs), question, "defaults")] = keys
                for kind, weak in (
                    ("floor", weak_floor(config, found)),
                    ("hook", None),
                ):
                    kept = relevant_hits(found, config, weak)
                    self._ranked[(id(docs), question, kind)] = [
                        built.key_of[r.id] for r in kept[:DEPTH]
                    ]
        return self._ranked[memo]


# -- the sets -------------------------------------------------------------------


@dataclass
class Set:
    """One set of the suite: its stores and questions, and how it is scored."""

    name: str
    kind: str  # "turns", "sessions" or "cranfield"
    parts: list[tuple[Documents, object]]  # (documents, quality.Corpus | Sessions)

    @property
    def questions(self) -> int:
        return sum(len(corpus.questions) for _, corpus in self.parts)  # type: ignore[attr-defined]


def score(found: Set, ranker_of: Callable[[Documents], Ranker]) -> list[float]:
    """Returns the set's metrics for one system: recall@10, any/all@5 or nDCG@10."""
    rankers = [ranker_of(docs) for docs, _ in found.parts]
    corpora = [corpus for _, corpus in found.parts]
    if found.kind == "turns":
        return [quality.score_locomo(rankers, corpora).mean("all", 10)]  # type: ignore[arg-type]
    if found.kind == "sessions":
        measured = sessions.scores(rankers, corpora)  # type: ignore[arg-type]
        return [measured["any@5"], measured["all@5"]]
    [ranker], [corpus] = rankers, corpora
    return [quality.score_cranfield(ranker, corpus)["ndcg10"]]  # type: ignore[arg-type]


def empty_share(found: Set, systems: Systems, how: str) -> float:
    """Returns the share of the set's questions that ctx answered with nothing.

    ``how``: ``floor`` (an explicit recall) or ``hook`` (the floor alone).
    """
    empty = 0
    for docs, corpus in found.parts:
        for question in corpus.questions:  # type: ignore[attr-defined]
            empty += not systems.ctx(docs, question.text, how)
    return empty / max(found.questions, 1)


# -- running --------------------------------------------------------------------


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def documents(
    corpus: quality.Corpus, embedder: Embedder, systems: Systems
) -> Documents:
    built = quality.build(corpus, embedder)
    docs = Documents(corpus.keys, corpus.texts, built, corpus.now)
    if not systems.lexical:
        docs.embed(embedder)
    return docs


def as_corpus(made: sessions.Sessions) -> quality.Corpus:
    return quality.Corpus(made.name, made.texts, made.drafts, made.keys, made.now)


SETS = {
    "all": ("LoCoMo turns, all questions", "turns"),
    "named": ("LoCoMo turns, questions naming a speaker", "turns"),
    "misspelt": ("... that name misspelt", "turns"),
    "short": ("... that name as a short form", "turns"),
    "misspelt-lower": ("... that name misspelt, typed in lower case", "turns"),
    "short-lower": ("... that name as a short form, typed in lower case", "turns"),
    "two-word": ("... speakers with two-word names in the store", "turns"),
    "other": ("... about what the other speaker said", "turns"),
    "paraphrase": ("LoCoMo turns, questions paraphrased", "turns"),
    "typos": ("LoCoMo turns, questions with typos", "turns"),
    "pasted": ("LoCoMo turns, questions after a pasted log", "turns"),
    "pairs": ("LoCoMo turns, two conversations in one store", "turns"),
    "sessions": ("LoCoMo sessions, whole", "sessions"),
    "sessions-paraphrase": (
        "LoCoMo sessions, whole, questions paraphrased",
        "sessions",
    ),
    "one-speaker": ("LoCoMo sessions, one speaker's turns", "sessions"),
    "first-person": (
        "... the questions that name the speaker, asked in the first person",
        "sessions",
    ),
    "cranfield": ("Cranfield", "cranfield"),
    "claims": ("Cranfield, queries as claims", "cranfield"),
    "cranfield-typos": ("Cranfield, queries with typos", "cranfield"),
    "cranfield-pasted": ("Cranfield, queries after a pasted log", "cranfield"),
}
"""The sets in the report's order, by the key ``--only`` names them with."""


def build_sets(
    eval_dir: Path,
    quick: bool,
    embedder: Embedder,
    systems: Systems,
    only: Collection[str] = tuple(SETS),
) -> list[Set]:
    """Returns the sets of ``only`` (keys of :data:`SETS`), their stores built."""
    ref = quality.load_reference(eval_dir)
    turns = quality.load_locomo(eval_dir, ref)[: 2 if quick else None]
    sets = {key: Set(*SETS[key], []) for key in SETS if key in only}
    for corpus in turns:
        if sets.keys() & {*NAME_VARIANTS, "all", "paraphrase", "typos", "pasted"}:
            plain = documents(corpus, embedder, systems)
            variants = name_variants(corpus)
            variants["all"] = with_questions(corpus, asked(corpus))
            variants["typos"] = typed_in_haste(corpus, asked(corpus))
            variants["pasted"] = after_a_log(corpus, asked(corpus))
            for key in sets.keys() & variants.keys():
                sets[key].parts.append((plain, variants[key]))
        if "two-word" in sets:
            two = two_word_names(corpus)
            sets["two-word"].parts.append((documents(two, embedder, systems), two))
        if sets.keys() & {"sessions", "sessions-paraphrase"}:
            whole = sessions_of(corpus)
            docs = documents(as_corpus(whole), embedder, systems)
            if "sessions" in sets:
                sets["sessions"].parts.append((docs, whole))
            if "sessions-paraphrase" in sets:
                said = dataclasses.replace(
                    whole,
                    questions=[
                        dataclasses.replace(q, text=paraphrased(corpus, q.text))
                        for q in whole.questions
                    ],
                )
                sets["sessions-paraphrase"].parts.append((docs, said))
        if sets.keys() & {"one-speaker", "first-person"}:
            for speaker in speakers(corpus):
                one = sessions_of(corpus, speaker)
                docs = documents(as_corpus(one), embedder, systems)
                if "one-speaker" in sets:
                    sets["one-speaker"].parts.append((docs, one))
                if "first-person" in sets:
                    sets["first-person"].parts.append(
                        (docs, in_first_person(one, speaker))
                    )
        if isinstance(embedder, CachedEmbedder):
            embedder.save()
        progress(f"{corpus.name}: stores built")
    if "pairs" in sets:
        for first, second in zip(turns[::2], turns[1::2], strict=False):
            both = two_conversations(first, second)
            sets["pairs"].parts.append((documents(both, embedder, systems), both))
        progress("pairs of conversations: stores built")
    if sets.keys() & {"cranfield", "claims", "cranfield-typos", "cranfield-pasted"}:
        cranfield = quality.load_cranfield(eval_dir)
        docs = documents(cranfield, embedder, systems)
        if "cranfield" in sets:
            sets["cranfield"].parts.append((docs, cranfield))
        if "claims" in sets:
            claims = [
                dataclasses.replace(q, text=as_claim(q.text))
                for q in cranfield.questions
            ]
            sets["claims"].parts.append((docs, with_questions(cranfield, claims)))
        if "cranfield-typos" in sets:
            typed = typed_in_haste(cranfield, cranfield.questions)
            sets["cranfield-typos"].parts.append((docs, typed))
        if "cranfield-pasted" in sets:
            pasted = after_a_log(cranfield, cranfield.questions)
            sets["cranfield-pasted"].parts.append((docs, pasted))
    if isinstance(embedder, CachedEmbedder):
        embedder.save()
    return list(sets.values())


def measure(sets: list[Set], systems: Systems) -> dict[str, dict[str, list[float]]]:
    table: dict[str, dict[str, list[float]]] = {}
    for found in sets:
        row: dict[str, list[float]] = {}
        for name in systems.names():
            row[name] = score(found, lambda docs, n=name: systems.ranker(n, docs))
        if not systems.lexical:
            row["empty"] = [empty_share(found, systems, "floor")]
            row["hook"] = [empty_share(found, systems, "hook")]
        table[found.name] = row
        progress(f"{found.name}: {row}")
    return table


METRIC = {"turns": "recall@10", "sessions": "any@5 / all@5", "cranfield": "nDCG@10"}


def render(
    sets: list[Set],
    table: dict[str, dict[str, list[float]]],
    systems: Systems,
    header: list[str],
) -> str:
    names = systems.names()
    lines = [
        *header,
        "| set | questions | metric | "
        + " | ".join(names)
        + (" | empty answers: recall | floor alone |" if not systems.lexical else " |"),
        "|---|---|---|" + "---|" * (len(names) + 2 * (not systems.lexical)),
    ]
    for found in sets:
        row = table[found.name]
        cells = [" / ".join(f"{v:.3f}" for v in row[n]) for n in names]
        if not systems.lexical:
            cells += [f"{row['empty'][0]:.1%}", f"{row['hook'][0]:.1%}"]
        lines.append(
            f"| {found.name} | {found.questions:,} | {METRIC[found.kind]} | "
            + " | ".join(cells)
            + " |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    """Writes (or with --quick prints) the report."""
    parser = quality.eval_parser(__doc__, "2 conversations, print only")
    parser.add_argument(
        "--lexical", action="store_true", help="only the BM25 systems, hashing vectors"
    )
    parser.add_argument(
        "--rev", help="measure ctx as committed at this revision (a frozen copy)"
    )
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument(
        "--only",
        nargs="+",
        choices=list(SETS),
        help="measure these sets alone, written to robustness_<sets>.md",
    )
    args = parser.parse_args()
    if args.rev and not os.environ.get(FROZEN_ENV):
        run_frozen(args.rev)  # does not return
    os.environ["CTX_NO_HUB"] = "1"
    started = datetime.now(UTC)
    began = time.perf_counter()
    loads = [os.getloadavg()[0]]
    if args.lexical:
        embedder: Embedder = make_embedder({"kind": "hashing"})
    else:
        embedder = CachedEmbedder(make_embedder({"kind": "minilm"}))
    systems = Systems(embedder, args.lexical)
    only = args.only or list(SETS)
    sets = build_sets(args.eval_dir.resolve(), args.quick, embedder, systems, only)
    loads.append(os.getloadavg()[0])
    table = measure(sets, systems)
    if isinstance(embedder, CachedEmbedder):
        embedder.save()  # the questions' vectors
    loads.append(os.getloadavg()[0])
    embedded = getattr(embedder, "embedded", 0)
    run = f"{time.perf_counter() - began:.0f} s, {embedded:,} texts embedded"
    frozen = os.environ.get(FROZEN_ENV)
    source = f"commit {frozen} (frozen copy)" if frozen else "working tree"
    header = [
        "# Recall on variants nobody tuned it to (issue 29's robustness suite)",
        "",
        "Generated by `benchmarks/bench_robustness.py`"
        + (" `--lexical`" if args.lexical else "")
        + "; do not edit by hand. The sets and systems are in its docstring.",
        "",
        *machine_lines(started, loads, [("ctx", source), ("Run", run)]),
        "",
        *([f"Conditions: {args.note}", ""] if args.note else []),
        "Defaults: " + repr(RecallConfig()).replace("\n", " "),
        "",
    ]
    text = render(sets, table, systems, header)
    print(text)
    if not args.quick and not args.no_write:
        name = "robustness_lexical.md" if args.lexical else "robustness.md"
        if args.only:
            name = name.replace(
                ".md", "_" + "-".join(k for k in SETS if k in only) + ".md"
            )
        (RESULTS / name).write_text(text)


if __name__ == "__main__":
    main()
