"""Knowledge updates on LoCoMo: an older turn and a newer copy with a value changed.

``bench_dream.py``'s part 3. :func:`update_pairs` picks turns holding a
value (a number, or a capitalised name that is not a speaker's) and makes
each a newer copy with that value changed; :func:`newer_first` asks, with
the turn less its value as the question, whether recall puts the newer copy
in the top 10 above the older.
"""

from __future__ import annotations

import calendar
import re

from bench_quality import Corpus

from ctx import engine
from ctx.hub.config import RecallConfig
from ctx.hub.retrieval.index.projection import Projection
from ctx.hub.retrieval.ranking import rank
from ctx.hub.retrieval.sources import open_sources

__all__ = ["DATES", "newer_first", "newer_row", "update_pairs"]

_VALUE = re.compile(r"\b\d+\b|(?<=[a-z,] )[A-Z][a-z]{2,}\b")

DATES = frozenset(calendar.day_name[i].casefold() for i in range(7)) | frozenset(
    calendar.month_name[i].casefold() for i in range(1, 13)
)
"""Weekday and month names (English, as LoCoMo is written)."""


def update_pairs(corpus: Corpus) -> list[tuple[int, str, str, bool]]:
    """Returns (turn index, newer text, question, dated) for turns holding a value.

    The value is a number, or a capitalised name that is not one of the two
    speakers' (nor a short form of one: "Mel" for Melanie). ``dated``: the
    value is a weekday or a month ("last Friday"), so the newer copy records
    another event rather than a changed fact (Dream's rules count a changed
    date as a separate event, docs/dream.md).
    """
    speakers = {t.partition(": ")[0].casefold() for t in corpus.texts}
    out = []
    for i, text in enumerate(corpus.texts):
        said = text.partition(": ")[2]
        m = next(
            (
                m
                for m in _VALUE.finditer(said)
                if not any(s.startswith(m.group().casefold()) for s in speakers)
            ),
            None,
        )
        if m is None or len(said.split()) < 8:
            continue
        value = m.group()
        new = str(int(value) + 3) if value.isdigit() else "Zanzibar"
        offset = len(text) - len(said)
        newer = text[: offset + m.start()] + new + text[offset + m.end() :]
        question = text[: offset + m.start()] + text[offset + m.end() :]
        out.append((i, newer, question, value.casefold() in DATES))
    return out[:: max(1, len(out) // 25)][:25]


def newer_first(
    projection: Projection, corpus: Corpus, pairs: list[tuple[str, str, str]]
) -> list[bool]:
    """Returns per pair whether the newer copy is in the top 10, above the older."""
    [source] = open_sources(projection)
    searcher = projection.searcher(source.view)
    graph = [engine.link_graph(projection.store, source.commit)]
    good = []
    for old_id, new_id, question in pairs:
        found = rank(
            searcher, question, config=RecallConfig(), now=corpus.now, links=graph
        )
        hits = [h.id for h in found.hits[:10]]
        good.append(
            new_id in hits
            and (old_id not in hits or hits.index(new_id) < hits.index(old_id))
        )
    return good


def newer_row(name: str, good: list[bool], dated: list[bool]) -> str:
    """Returns the report's row: the share newer first, of all pairs and of
    the pairs whose value is not a date."""
    undated = [g for g, d in zip(good, dated, strict=True) if not d]
    return (
        f"| {name} | {sum(good) / len(good):.3f} | "
        f"{sum(undated) / max(len(undated), 1):.3f} |"
    )
