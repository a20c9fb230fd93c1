"""Which words of a question weigh in recall's word share (issue 29)."""

from datetime import UTC, datetime

import pytest

from ctx.hub.index.lexical import LexicalDoc, LexicalIndex
from ctx.hub.index.schema import content_analyzer

T0 = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)


def make_index(**bodies: str) -> LexicalIndex:
    """An index of one document per keyword argument: its blob id and body."""
    index = LexicalIndex.in_memory()
    with index.writer() as writer:
        writer.add(
            [
                LexicalDoc(
                    blob=blob,
                    memory_id=f"m-{blob}",
                    kind="fact",
                    context="",
                    title=None,
                    body=body,
                    tags=(),
                    created_at=T0,
                )
                for blob, body in bodies.items()
            ]
        )
        writer.commit()
    return index


def blobs(hits):
    return [blob for blob, _ in hits]


def test_many_much_might_and_must_are_function_words():
    assert content_analyzer().analyze("how many dogs, how much food, might, must") == [
        "dog",
        "food",
    ]
    index = make_index(
        dogs="Bo has two dogs",
        asks="Many might come, much must change",
        other="Lunch is at noon",
    )
    question = "How many dogs must Bo have?"
    shares = index.matches(question).coverage({"dogs", "asks"})
    assert shares == {"dogs": pytest.approx(1.0), "asks": 0.0}
    assert blobs(index.search(question, limit=3))[0] == "dogs"
