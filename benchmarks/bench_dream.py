"""Dream's quality and cost: rules on labelled cases, LoCoMo before and after, speed.

Usage::

    .venv/bin/python benchmarks/bench_dream.py            # ~10 min on 2 cores
    .venv/bin/python benchmarks/bench_dream.py --quick    # 2 conversations, 10k

Writes ``benchmarks/results/dream.md``. Four parts:

1. **Rules.** Precision and recall of each proposal kind on the labelled
   cases of ``dream_cases.py`` (real LoCoMo turns, labels by construction;
   that module says how), with MiniLM cosines, at the default thresholds
   and over a small grid (the defaults of ``hub/dream/rules.py`` come from
   it). This measures the rules on given pairs, not the neighbour search.
2. **LoCoMo recall@10** (categories 1-4, the protocol of
   ``bench_quality.py``) with the default ranking, before and after a Dream
   cycle over every turn of each conversation whose proposals are all
   accepted and merged (no review: the worst case for recall).
3. **Knowledge updates.** For each conversation, turns holding a value (a
   number, or a name) get a newer copy with the value changed, written 30
   days after the conversation's last session; the question is the turn
   with that value taken out. A pair counts when the newer copy is in the
   top 10 and above the older turn (or the older is gone), before and after
   accepting Dream's proposals. Goal: at least 90% after.
4. **Cost.** Memories examined per second by one cycle at 10k and 100k
   memories (LoCoMo turns repeated with a counter; hashing embedder, so that
   building 100k vectors takes seconds: the cycle reads stored vectors
   whatever made them), without and with a judge (a fake OpenAI-compatible
   server on loopback that answers at once), and the cycle's peak memory
   (growth of the process's peak RSS).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
from _bench_common import cpu_name
from bench_quality import (
    CATEGORIES,
    Corpus,
    load_locomo,
    load_reference,
)
from dream_cases import SAME_SPEAKER, PairCase, build_cases, load_turns
from dream_updates import newer_first, newer_row, update_pairs

from ctx import engine
from ctx.engine import Draft, Intent, Store
from ctx.hub.config import DreamSettings, RecallConfig
from ctx.hub.dream import Detector, Judge, Thresholds, judge_pair
from ctx.hub.dream.cycle import run_cycle
from ctx.hub.dream.detect import RARE_MIN, RARE_SHARE
from ctx.hub.dream.rules import entities, recurrence, words
from ctx.hub.retrieval.embedders import Embedder, make_embedder
from ctx.hub.retrieval.feedback import (
    LoggedHit,
    LoggedRecall,
    log_recall,
    new_recall_id,
    record_feedback,
)
from ctx.hub.retrieval.index.projection import Projection
from ctx.hub.retrieval.ranking import rank
from ctx.hub.retrieval.sources import open_sources
from ctx.hub.retrieval.temporal.parse import parse_temporal
from ctx.hub.session_state import editing

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).parent / "results" / "dream.md"
IMPORT = Intent(agent="bench", intent="import")
REVIEW = Intent(agent="bench", intent="review")
PAIR_KINDS = ("duplicate", "update", "contradiction", "link")
GRID = {
    "duplicate_cosine": (0.85, 0.9, 0.93, 0.96),
    "duplicate_words": (0.5, 0.6, 0.7, 0.8),
    "subject_cosine": (0.65, 0.75, 0.85),
    "subject_words": (0.3, 0.4, 0.5),
    "update_cosine": (0.5, 0.6, 0.7),
    "update_words": (0.5, 0.6, 0.7),
    "entity_cosine": (0.15, 0.3, 0.45),
    "link_cosine": (0.3, 0.4, 0.5),
}
LINK_CURVE = (0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7)
"""The link rule's main threshold (one subject tag, written apart), swept."""


def _memory(text: str, when: datetime, n: int, tagged: bool = False) -> engine.Memory:
    """Returns a memory of ``text``; ``tagged``: with its speaker's tag, as
    :func:`bench_quality.load_locomo` stores a LoCoMo turn."""
    speaker = "-".join(text.partition(": ")[0].lower().split())
    return engine.Memory(
        version=1,
        id=engine.MemoryId(f"01J{n:023d}"),
        kind="fact",
        body=text,
        created_at=when,
        tags=(f"speaker:{speaker}",) if tagged else (),
    )


# -- 1. rules ---------------------------------------------------------------


def nearest_turns(
    eval_dir: Path, embedder: Embedder
) -> tuple[dict[str, str], dict[str, str]]:
    """Returns each turn's nearest other turn (MiniLM): of its conversation, of another."""
    turns, _ = load_turns(eval_dir)
    keys = [f"{t.conversation}/{t.dia_id}" for t in turns]
    convs = np.array([t.conversation for t in turns])
    vectors = embedder.embed([t.text for t in turns])
    own: dict[str, str] = {}
    foreign: dict[str, str] = {}
    for i, key in enumerate(keys):
        sims = vectors @ vectors[i]
        sims[i] = -1.0
        same = convs == convs[i]
        own[key] = keys[int(np.where(same, sims, -2.0).argmax())]
        foreign[key] = keys[int(np.where(same, -2.0, sims).argmax())]
    return own, foreign


def rarity(eval_dir: Path) -> Callable[[PairCase], Callable[[str], bool]]:
    """Returns, for a case, whether a name is rare in the store of its turns.

    As :meth:`~ctx.hub.dream.detect.Detector.rare` counts it: held by at
    most :data:`RARE_SHARE` of the store's memories (at least :data:`RARE_MIN`),
    the store being every turn of the case's conversations.
    """
    turns, _ = load_turns(eval_dir)
    held: dict[str, Counter[str]] = {}
    for n, t in enumerate(turns):
        # BM25 counts a memory holding the word anywhere, as a name or not.
        memory = _memory(t.text, t.when, n, tagged=True)
        held.setdefault(t.conversation, Counter()).update(
            entities(memory) | words(t.text)
        )
    sizes = Counter(t.conversation for t in turns)

    def of(case: PairCase) -> Callable[[str], bool]:
        most = max(RARE_MIN, int(sum(sizes[c] for c in case.store) * RARE_SHARE))
        return lambda name: sum(held[c][name] for c in case.store) <= most

    return of


def score_rules(
    cases: list[PairCase],
    cosines: list[float],
    limits: Thresholds,
    rare_of: Callable[[PairCase], Callable[[str], bool]] | None = None,
) -> dict[str, tuple[float, float, int]]:
    """Returns (precision, recall, positives) per pair kind.

    A link made on a case whose link label is not known (``link_known``) is
    neither right nor wrong; their number is under the key ``"unknown"``.
    """
    tp: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    fn: Counter[str] = Counter()
    unknown = 0
    for n, (case, cos) in enumerate(zip(cases, cosines, strict=True)):
        a = _memory(case.a, case.a_when, 2 * n, tagged=True)
        b = _memory(case.b, case.b_when, 2 * n + 1, tagged=True)
        rare = rare_of(case) if rare_of else None
        verdict = judge_pair(a, b, cos, limits, rare)
        got = verdict.kind if verdict else None
        if got == case.label and got is not None:
            tp[got] += 1
        elif got == "link" and case.label is None and not case.link_known:
            unknown += 1
        else:
            if got is not None:
                fp[got] += 1
            if case.label is not None:
                fn[case.label] += 1
    out = {}
    for kind in PAIR_KINDS:
        made = tp[kind] + fp[kind]
        wanted = tp[kind] + fn[kind]
        out[kind] = (
            tp[kind] / made if made else float("nan"),
            tp[kind] / wanted if wanted else float("nan"),
            wanted,
        )
    out["unknown"] = (float(unknown), float("nan"), 0)
    return out


def _f1(p: float, r: float) -> float:
    return 0.0 if not p or not r or p != p or r != r else 2 * p * r / (p + r)


def part_rules(eval_dir: Path, embedder: Embedder, lines: list[str]) -> None:
    began = time.perf_counter()
    pairs, singles = build_cases(eval_dir, *nearest_turns(eval_dir, embedder))
    texts = sorted({c.a for c in pairs} | {c.b for c in pairs})
    vectors = dict(zip(texts, embedder.embed(texts), strict=True))
    cosines = [float(vectors[c.a] @ vectors[c.b]) for c in pairs]
    rare_of = rarity(eval_dir)
    default = score_rules(pairs, cosines, Thresholds(), rare_of)
    unknown = sum(1 for c in pairs if not c.link_known)
    linked_unknown = int(default.pop("unknown")[0])
    labels = Counter(c.label or f"none ({c.how})" for c in pairs)
    lines += [
        "## 1. The rules on labelled LoCoMo cases",
        "",
        f"{len(pairs):,} pair cases ("
        + ", ".join(f"{n} {k}" for k, n in sorted(labels.items()))
        + f") and {len(singles)} single-memory cases; labels by construction "
        "(`benchmarks/dream_cases.py` says how). MiniLM cosines. A name is rare "
        "as the detector counts it, in a store of every turn of the case's "
        "conversations; each memory carries its speaker's tag, as part 2 stores "
        "LoCoMo's turns. The nearest turn of the same conversation is not a known "
        f"link negative: the rule links {linked_unknown} of those {unknown}, "
        "counted neither right nor wrong.",
        "",
        "| kind | positives | precision | recall | F1 |",
        "|---|---:|---:|---:|---:|",
    ]
    for kind, (p, r, n) in default.items():
        lines.append(f"| {kind} | {n} | {p:.3f} | {r:.3f} | {_f1(p, r):.3f} |")
    rec_tp = rec_fp = rec_fn = right_period = 0
    for s in singles:
        memory = _memory(s.text, s.when, 0)
        parsed = parse_temporal(s.text, s.when)
        tag = recurrence(memory, [(c.dimension, c.label) for c in parsed.cycles])
        if tag and s.period:
            rec_tp += 1
            right_period += tag == f"recurs:{s.period}"
        elif tag:
            rec_fp += 1
        elif s.period:
            rec_fn += 1
    p = rec_tp / (rec_tp + rec_fp) if rec_tp + rec_fp else float("nan")
    r = rec_tp / (rec_tp + rec_fn)
    positives = sum(1 for s in singles if s.period)
    lines.append(f"| recurrence | {positives} | {p:.3f} | {r:.3f} | {_f1(p, r):.3f} |")
    lines += [
        "",
        f"Recurrences found with the right period: {right_period} of {rec_tp}.",
        "",
        "Each threshold alone over its grid, the others at their defaults "
        "(F1 of the kinds it moves):",
        "",
        "| threshold | value | duplicate F1 | update F1 | contradiction F1 | link F1 |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    base = Thresholds()
    for name, values in GRID.items():
        for value in values:
            limits = Thresholds(**{**base.__dict__, name: value})
            got = score_rules(pairs, cosines, limits, rare_of)
            mark = " (default)" if getattr(base, name) == value else ""
            lines.append(
                f"| {name} | {value}{mark} | "
                + " | ".join(f"{_f1(*got[k][:2]):.3f}" for k in PAIR_KINDS)
                + " |"
            )
    lines += _link_curve(pairs, cosines, rare_of)
    lines += ["", f"({time.perf_counter() - began:.0f} s)", ""]


def _link_curve(
    pairs: list[PairCase],
    cosines: list[float],
    rare_of: Callable[[PairCase], Callable[[str], bool]],
) -> list[str]:
    """Returns the table of link precision and recall over ``link_cosine``.

    Twice: on the cases made before one speaker's pairs of two days were
    known negatives, and on all of them.
    """
    before = [i for i, c in enumerate(pairs) if c.how != SAME_SPEAKER]
    out = [
        "",
        "Links over `link_cosine` (a shared subject tag, written apart), the "
        "other thresholds at their defaults; precision / recall on the cases "
        f"without the {SAME_SPEAKER!r} negatives (the labels of the runs "
        "before), and with them:",
        "",
        "| link_cosine | labels before | F1 | with one speaker's other days | F1 |",
        "|---:|---:|---:|---:|---:|",
    ]
    base = Thresholds()
    for value in LINK_CURVE:
        limits = Thresholds(**{**base.__dict__, "link_cosine": value})
        old = score_rules(
            [pairs[i] for i in before], [cosines[i] for i in before], limits, rare_of
        )["link"]
        new = score_rules(pairs, cosines, limits, rare_of)["link"]
        mark = " (default)" if value == base.link_cosine else ""
        out.append(
            f"| {value}{mark} | {old[0]:.3f} / {old[1]:.3f} | {_f1(*old[:2]):.3f} "
            f"| {new[0]:.3f} / {new[1]:.3f} | {_f1(*new[:2]):.3f} |"
        )
    return out


# -- 2 and 3. LoCoMo before and after ----------------------------------------


@contextlib.contextmanager
def disk_store(root: Path, name: str, now: datetime) -> Iterator[Store]:
    path = root / name / ".ctx"
    store = Store.init(path, clock=lambda: now)
    try:
        yield store
    finally:
        store.close()


@contextlib.contextmanager
def conversation_store(
    root: Path, corpus: Corpus, embedder: Embedder
) -> Iterator[tuple[Store, dict[Any, str], Projection]]:
    """Yields a store of one conversation's turns, each memory id's turn key,
    and the store's projection."""
    with disk_store(root, corpus.name, corpus.now) as store:
        written = engine.remember_many(store, corpus.drafts, IMPORT)
        key_of = dict(zip(written.ids, corpus.keys, strict=True))
        yield store, key_of, Projection(store, embedder)


def accept_and_merge(store: Store, embedder: Embedder, now: datetime) -> Counter[str]:
    """Accepts every proposal for main and merges them; returns the kinds."""
    from ctx.hub.dream.detect import recheck

    kinds = Counter(p.kind for p in engine.list_proposals(store, "main"))
    engine.review_proposals(store, "main", [], "accepted", REVIEW)
    engine.merge_accepted(
        store, "main", REVIEW, lambda p, m: recheck(p, m, embedder, now)
    )
    return kinds


def recall_at_10(
    projection: Projection, corpus: Corpus, key_of: dict, given: bool = False
) -> list[float]:
    """Returns each question's recall@10; with ``given``, each question is also
    a hook session that was given its top 10 (as the prompt hook records it)
    and a logged recall whose feedback names the evidence among them (what an
    agent answering it would say it used, through ``ctx feedback``)."""
    [source] = open_sources(projection)
    searcher = projection.searcher(source.view)
    # As recall ranks: over the branch's link graph (expansion, superseded out).
    graph = [engine.link_graph(projection.store, source.commit)]
    out = []
    for q in corpus.questions:
        if q.category not in CATEGORIES:
            continue
        found = rank(
            searcher, q.text, config=RecallConfig(), now=corpus.now, links=graph
        )
        hits = found.hits
        top = {key_of.get(h.id) for h in hits[:10]}
        if given and projection.store.path is not None:
            with editing(projection.store.path, f"question-{len(out)}") as state:
                state.note_shown([h.id for h in hits[:10]])
            _log_use(projection.store.path, corpus, q.evidence, hits[:10], key_of)
        out.append(sum(e in top for e in q.evidence) / len(q.evidence))
    return out


def _log_use(
    path: Path, corpus: Corpus, evidence: list[str], hits: list, key_of: dict
) -> None:
    """Logs a recall of ``hits`` and, as feedback, those that are evidence."""
    when = datetime.now(UTC)
    rid = new_recall_id(when)
    log_recall(
        path,
        LoggedRecall(
            id=rid,
            agent="bench",
            branch="main",
            query="",
            now=when,
            budget=None,
            hits=tuple(LoggedHit(h.id, 1) for h in hits),
        ),
    )
    used = [h.id for h in hits if key_of.get(h.id) in evidence]
    if used:
        record_feedback(path, rid, used, when)


TIER_CITED = 3
"""A turn cited by this many questions is needed often (wants reference)."""


def score_tiers(
    proposed: dict[str, str], corpus: Corpus, ids: list[str], key_of: dict
) -> Counter[str]:
    """Returns tier proposals (memory -> tier) scored against LoCoMo's evidence.

    A turn *is* needed often when at least :data:`TIER_CITED` questions cite
    it as evidence; it *is* dead weight when it is old (``stale_days``
    before the cycle) and no question cites it. Keys: ``<tier> tp|fp|fn``.
    """
    limits = Thresholds()
    cited: Counter[str] = Counter()
    for q in corpus.questions:
        if q.category in CATEGORIES:
            cited.update(set(q.evidence))
    # By turn key: two equal turns may be one memory (one id for both).
    by_key = {k: d.when for k, d in zip(corpus.keys, corpus.drafts, strict=True)}
    when = {mid: by_key[key_of[mid]] for mid in ids}
    out: Counter[str] = Counter()
    for mid in ids:
        key = key_of[mid]
        made = proposed.get(mid)
        written = when[mid]
        old = written is not None and (corpus.now - written).days >= limits.stale_days
        truth = {
            "reference": cited[key] >= TIER_CITED,
            "off-context": old and not cited[key],
        }
        for tier, wanted in truth.items():
            got = made == tier
            if got and wanted:
                out[f"{tier} tp"] += 1
            elif got:
                out[f"{tier} fp"] += 1
            elif wanted:
                out[f"{tier} fn"] += 1
    return out


def part_locomo(
    eval_dir: Path, embedder: Embedder, lines: list[str], conversations: int
) -> None:
    began = time.perf_counter()
    corpora = load_locomo(eval_dir, load_reference(eval_dir))[:conversations]
    before: list[float] = []
    after: list[float] = []
    kinds: Counter[str] = Counter()
    ku_before: list[bool] = []
    ku_after: list[bool] = []
    ku_dated: list[bool] = []
    examined = 0
    cycle_s = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for corpus in corpora:
            with conversation_store(root, corpus, embedder) as (
                store,
                key_of,
                projection,
            ):
                before += recall_at_10(projection, corpus, key_of)
                t0 = time.perf_counter()
                # Every proposal at once (no cap): accepting all unreviewed
                # is the worst case for recall.
                report = run_cycle(
                    store, projection, "main", budget=10**6, now=corpus.now, most=10**6
                )
                cycle_s += time.perf_counter() - t0
                examined += report.examined
                kinds += accept_and_merge(store, embedder, corpus.now)
                after += recall_at_10(projection, corpus, key_of)
                print(
                    corpus.name,
                    report.proposed,
                    f"{sum(before) / len(before):.3f}",
                    f"{sum(after) / len(after):.3f}",
                    flush=True,
                )
            # Knowledge updates: a store of the turns and newer copies.
            with disk_store(root, corpus.name + "-ku", corpus.now) as store:
                written = engine.remember_many(store, corpus.drafts, IMPORT)
                chosen = update_pairs(corpus)
                later = corpus.now + timedelta(days=30)
                news = engine.remember_many(
                    store,
                    [Draft(text=new, when=later) for _, new, _, _ in chosen],
                    IMPORT,
                )
                pairs = [
                    (written.ids[i], new_id, question)
                    for (i, _, question, _), new_id in zip(
                        chosen, news.ids, strict=True
                    )
                ]
                ku_dated += [dated for *_, dated in chosen]
                projection = Projection(store, embedder)
                ku_before += newer_first(projection, corpus, pairs)
                run_cycle(
                    store, projection, "main", budget=10**6, now=later, most=10**6
                )
                accept_and_merge(store, embedder, later)
                ku_after += newer_first(projection, corpus, pairs)
    mean_b = sum(before) / len(before)
    mean_a = sum(after) / len(after)
    lines += [
        "## 2. LoCoMo recall@10 before and after accepting every proposal",
        "",
        f"{len(corpora)} conversations, {len(before):,} questions (categories 1-4), "
        "default ranking (MiniLM), one Dream cycle over every turn, every proposal "
        "accepted and merged without review.",
        "",
        "| | recall@10 |",
        "|---|---:|",
        f"| before | {mean_b:.3f} |",
        f"| after | {mean_a:.3f} |",
        f"| ratio after / before | {mean_a / mean_b:.3f} |",
        "",
        "Proposals merged: "
        + ", ".join(f"{n:,} {k}" for k, n in sorted(kinds.items()))
        + f". The cycles examined {examined:,} memories in {cycle_s:.0f} s "
        f"({examined / cycle_s:.0f} memories/s with MiniLM vectors, stores of "
        "about 600 turns).",
        "",
        "## 3. Knowledge updates: the newer fact first",
        "",
        f"{len(ku_dated)} pairs (an older turn holding a value, a newer copy with "
        "the value changed, 30 days after the last session); question: the turn "
        f"without the value. In {sum(ku_dated)} of them the value is a weekday or "
        'a month ("last Friday" made "last Zanzibar"): the newer copy '
        "records another event, which Dream's rules never take for an update "
        "(docs/dream.md); the last column leaves them out.",
        "",
        "| | newer first in the top 10 | the value not a date |",
        "|---|---:|---:|",
        newer_row("before Dream", ku_before, ku_dated),
        newer_row("after accepting Dream's proposals", ku_after, ku_dated),
        "",
        f"({time.perf_counter() - began:.0f} s)",
        "",
    ]


def _tier_rows(tiers: Counter[str], sessions: str) -> list[str]:
    rows = []
    for tier in ("reference", "off-context"):
        tp, fp, fn = (tiers[f"{tier} {k}"] for k in ("tp", "fp", "fn"))
        p = tp / (tp + fp) if tp + fp else float("nan")
        r = tp / (tp + fn) if tp + fn else float("nan")
        rows.append(
            f"| {tier} | {sessions} | {tp + fn:,} | {tp + fp:,} | {p:.3f} | {r:.3f} |"
        )
    return rows


# -- 5. tiers -------------------------------------------------------------------

TIER_GRID = (1, 2, 3, 5)


def part_tiers(eval_dir: Path, embedder: Embedder, lines: list[str]) -> None:
    """Scores the tier rule on every LoCoMo conversation with simulated access.

    Each question (categories 1-4) is one hook session given its top 10 by
    the default ranking, recorded as the prompt hook records it; the
    detector's tier rule then reads the sessions as a cycle would. Labels
    come from LoCoMo's evidence, not from recall (see :func:`score_tiers`).
    """
    from ctx.hub.dream.cycle import recall_counts, use_counts

    began = time.perf_counter()
    corpora = load_locomo(eval_dir, load_reference(eval_dir))
    limits = Thresholds()
    found: dict[int, Counter[str]] = {n: Counter() for n in TIER_GRID}
    sessions = 0
    with tempfile.TemporaryDirectory() as tmp:
        for corpus in corpora:
            with conversation_store(Path(tmp), corpus, embedder) as (
                store,
                key_of,
                projection,
            ):
                sessions += len(recall_at_10(projection, corpus, key_of, given=True))
                assert store.path is not None
                given = recall_counts(store.path)
                used = use_counts(store.path)
                [source] = open_sources(projection)
                searcher = projection.searcher(source.view)
                graph = engine.link_graph(store, source.commit)
                for n in TIER_GRID:
                    rule = Thresholds(**{**limits.__dict__, "reference_uses": n})
                    detector = Detector(
                        searcher, graph, "main", corpus.now, rule, given, used
                    )
                    proposed = {}
                    for mid in key_of:
                        memory = searcher.read(mid)
                        tier = detector.tier(memory) if memory else None
                        if tier is not None:
                            proposed[mid] = tier[0].removeprefix("tier:")
                    found[n] += score_tiers(proposed, corpus, list(key_of), key_of)
                print(corpus.name, dict(found[limits.reference_uses]), flush=True)
    lines += [
        "## 5. Tiers on LoCoMo with simulated access",
        "",
        f"All {len(corpora)} conversations. Each of the {sessions:,} questions "
        "(categories 1-4) was a hook session given its top 10 by recall, "
        "recorded as the prompt hook records what it gives, and a logged recall "
        "whose feedback (`ctx feedback`) names the evidence among those 10, as an "
        "agent that answered would; the detector's tier rule then read them "
        "(reference: used in N recalls). Labels from LoCoMo's evidence, not from "
        "recall: a turn needed often is the evidence of at least "
        f"{TIER_CITED} questions (`tier:reference` wanted); dead weight is a "
        f"turn {limits.stale_days} days old or more at the cycle (the day after "
        "the last session) that no question cites (`tier:off-context` wanted); "
        "every other turn wants neither.",
        "",
        "| tier | recalls used in, for reference | positives | proposed | precision | recall |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for n in TIER_GRID:
        mark = " (default)" if n == limits.reference_uses else ""
        lines += _tier_rows(found[n], f"{n}{mark}")
    lines += ["", f"({time.perf_counter() - began:.0f} s)", ""]


# -- 4. cost -----------------------------------------------------------------


class _FastJudge(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        raw = json.dumps({"choices": [{"message": {"content": "YES"}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args: object) -> None:
        pass


BUDGET = 500


def _detection_rate(store: Store, projection: Projection, now: datetime) -> float:
    """Returns memories per second the detector alone examines (no commits)."""
    [source] = open_sources(projection)
    detector = Detector(
        projection.searcher(source.view),
        engine.link_graph(store, source.commit),
        "main",
        now,
    )
    ids = sorted(source.view.catalog.entries)[:BUDGET]
    t0 = time.perf_counter()
    for mid in ids:
        detector.examine(mid)
    return len(ids) / (time.perf_counter() - t0)


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def part_cost(eval_dir: Path, lines: list[str], sizes: tuple[int, ...]) -> None:
    turns, _ = load_turns(eval_dir)
    embedder = make_embedder({"kind": "hashing"})
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FastJudge)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    now = datetime(2024, 1, 1, tzinfo=UTC)
    lines += [
        "## 4. Cost of a cycle",
        "",
        "LoCoMo turns repeated with a counter; hashing embedder; one cycle of "
        f"{BUDGET:,} memories (the first of a fresh store: every memory is new). "
        "found/s: the detector alone over the same number of memories (neighbours "
        "and rules, no commits); examined/s: the whole cycle, whose time goes "
        "mostly to writing one commit per proposal. With "
        "the judge: a fake OpenAI-compatible server on loopback answering YES at "
        "once. Peak RSS: growth of the process's peak during the cycle.",
        "",
        "| memories | judge | found/s (no commits) | examined/s (cycle) | proposals "
        "| cycle s | peak RSS growth |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            drafts = [
                Draft(
                    text=f"{turns[i % len(turns)].text} (#{i // len(turns)})",
                    when=turns[i % len(turns)].when,
                )
                for i in range(size)
            ]
            base = Path(tmp) / f"s{size}" / ".ctx"
            store = Store.init(base, clock=lambda: now)
            t0 = time.perf_counter()
            engine.remember_many(store, drafts, IMPORT)
            projection = Projection(store, embedder)
            open_sources(projection)
            built = time.perf_counter() - t0
            store.close()
            for judged in (False, True):
                copy = Path(tmp) / f"s{size}-{judged}" / ".ctx"
                shutil.copytree(base, copy)
                store = Store.open(copy, clock=lambda: now)
                projection = Projection(store, embedder)
                open_sources(projection)
                judge = None
                if judged:
                    judge = Judge(DreamSettings(judge_url=url, judge_model="fake"))
                if not judged:
                    detect_rate = _detection_rate(store, projection, now)
                rss = _peak_rss_mb()
                t0 = time.perf_counter()
                report = run_cycle(
                    store, projection, "main", budget=BUDGET, now=now, judge=judge
                )
                seconds = time.perf_counter() - t0
                grown = _peak_rss_mb() - rss
                lines.append(
                    f"| {size:,} | {'yes' if judged else 'no'} | "
                    f"{detect_rate:,.0f} | {report.examined / seconds:,.0f} | "
                    f"{sum(report.proposed.values()):,} | {seconds:.1f} | "
                    f"{grown:.0f} MB |"
                )
                store.close()
            lines.append(
                f"| | (store of {size:,} built and indexed in {built:.0f} s) | | | | |"
            )
    server.shutdown()
    lines.append("")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--eval-dir", type=Path, default=ROOT.parent / "shared" / "eval"
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--skip", action="append", default=[], help="1, 2, 4 or 5")
    parser.add_argument("--conversations", type=int, default=10)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    embedder = make_embedder({})
    started = datetime.now(UTC)
    load = os.getloadavg()[0]
    lines = [
        "# Dream: quality and cost",
        "",
        "`benchmarks/bench_dream.py`"
        + (" --quick" if args.quick else "")
        + f"; {started:%Y-%m-%d %H:%M} UTC; {cpu_name()}, "
        f"{len(os.sched_getaffinity(0))} usable cores; load average {load:.2f} "
        "at start (other work shares this machine).",
        "",
    ]
    if "1" not in args.skip:
        part_rules(args.eval_dir, embedder, lines)
    if "2" not in args.skip:
        part_locomo(
            args.eval_dir, embedder, lines, 2 if args.quick else args.conversations
        )
    if "5" not in args.skip:
        part_tiers(args.eval_dir, embedder, lines)
    if "4" not in args.skip:
        part_cost(args.eval_dir, lines, (10_000,) if args.quick else (10_000, 100_000))
    lines.append(f"Load average at the end: {os.getloadavg()[0]:.2f}.")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.quick:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
