"""Counts agree with their nouns (issue 16, "Words and numbers")."""

import pytest

from ctx.engine import article, plural


@pytest.mark.parametrize(
    ("count", "noun", "said"),
    [
        (0, "memory", "0 memories"),
        (1, "memory", "1 memory"),
        (2, "memory", "2 memories"),
        (1, "conflict", "1 conflict"),
        (3, "branch", "3 branches"),
        (2, "clash", "2 clashes"),
        (2, "day", "2 days"),
        (1, "link change", "1 link change"),
        (2, "link change", "2 link changes"),
        (12_000, "token", "12,000 tokens"),
    ],
)
def test_plural_makes_the_noun_agree_with_the_count(count, noun, said):
    assert plural(count, noun) == said


def test_plural_takes_an_irregular_plural():
    assert plural(1, "line was", "lines were") == "1 line was"
    assert plural(4, "line was", "lines were") == "4 lines were"


@pytest.mark.parametrize(
    ("count", "word"),
    [
        (1, "a"),
        (8, "an"),
        (11, "an"),
        (18, "an"),
        (80, "an"),
        (100, "a"),
        (180, "a"),
        (800, "an"),
        (1_500, "a"),
        (8_000, "an"),
        (11_000, "an"),
        (18_500, "an"),
        (110_000, "a"),
    ],
)
def test_article_follows_how_the_number_is_read(count, word):
    assert article(count) == word
