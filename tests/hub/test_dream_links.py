"""Dream's links find more of what is related, never a pair twice (issue 31)."""

from __future__ import annotations

from datetime import timedelta

from dream_support import NOW

from ctx import engine
from ctx.hub import dream
from ctx.hub.dream.rules import entities

LIMITS = dream.Thresholds()


def memory(n, body, days_ago, *tags):
    return engine.Memory(
        version=1,
        id=engine.MemoryId(f"01J{n:023d}"),
        kind="fact",
        body=body,
        created_at=NOW - timedelta(days=days_ago),
        tags=tags,
    )


def test_a_name_in_lower_case_opening_a_sentence_links():
    a = memory(1, "The embedder runs on onnxruntime", 20)
    b = memory(2, "onnxruntime threads fight BLAS threads on 2 cores", 5)
    assert "onnxruntime" in entities(b)
    verdict = dream.judge_pair(a, b, 0.37, LIMITS, rare=lambda name: True)
    assert verdict is not None
    assert (verdict.link, verdict.reason) == (
        "RELATES_TO",
        "names onnxruntime (cosine 0.37)",
    )
    # Only a rare one: a name most memories hold is no evidence.
    assert dream.judge_pair(a, b, 0.37, LIMITS, rare=lambda name: False) is None
    # Words that open a sentence in lower case without naming anything.
    assert entities(memory(3, "yeah, we went camping. also the kids", 1)) == set()


def test_a_rare_word_said_about_one_subject_on_two_days_links():
    a = memory(1, "Nate: I won my second tournament last week", 40, "speaker:nate")
    b = memory(2, "Nate: the tournament prize was a trophy", 3, "speaker:nate")
    held = {"tournament"}
    verdict = dream.judge_pair(a, b, 0.35, LIMITS, rare=lambda w: w in held)
    assert verdict is not None
    assert verdict.link == "RELATES_TO"
    assert "both say tournament" in verdict.reason
    # A word many memories hold, another subject, or one sitting: nothing.
    assert dream.judge_pair(a, b, 0.35, LIMITS, rare=lambda w: False) is None
    other = memory(3, "Joanna: the tournament prize was a trophy", 3, "speaker:jo")
    assert dream.judge_pair(a, other, 0.35, LIMITS, rare=lambda w: w in held) is None
    same_sitting = memory(4, b.body, 40, "speaker:nate")
    rare = lambda w: w in held  # noqa: E731
    assert dream.judge_pair(a, same_sitting, 0.35, LIMITS, rare=rare) is None
    # Nor between memories that are hardly neighbours.
    assert dream.judge_pair(a, b, 0.2, LIMITS, rare=lambda w: w in held) is None


def test_one_subject_on_two_days_links_from_the_link_cosine():
    a = memory(1, "Melanie: we went camping with the kids", 40, "speaker:melanie")
    b = memory(2, "Melanie: the lake was cold", 3, "speaker:melanie")
    below = LIMITS.link_cosine - 0.01
    assert dream.judge_pair(a, b, below, LIMITS, rare=lambda w: False) is None
    verdict = dream.judge_pair(a, b, LIMITS.link_cosine, LIMITS, rare=lambda w: False)
    assert verdict is not None
    assert verdict.link == "RELATES_TO"


def test_a_dependency_is_one_verdict_whichever_side_is_examined():
    app = memory(1, "The billing service uses Kafka for invoices", 5)
    kafka = memory(2, "Kafka retention is set to seven days", 4)
    ways = [
        dream.judge_pair(x, y, 0.3, LIMITS, rare=lambda name: True)
        for x, y in ((app, kafka), (kafka, app))
    ]
    assert all(v is not None for v in ways)
    assert {(v.link, v.source, v.target) for v in ways if v} == {
        ("DEPENDS_ON", app.id, kafka.id)
    }
