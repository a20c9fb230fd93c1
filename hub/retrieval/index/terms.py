"""How text becomes the lexical index's terms, for documents and for queries.

:mod:`ctx.hub.retrieval.index.lexical` indexes what these functions make of a memory
(tag
terms, tag values, the fuzzy channel's words) and looks up what they make of
a query, so both sides are cut the same way here. Queries are user text of
any size and content: each function bounds its work and never raises.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

__all__ = [
    "MAX_QUERY_CHARS",
    "MAX_QUERY_TERMS",
    "cjk_terms",
    "has_cjk",
    "query_tag_values",
    "query_tags",
    "query_text",
    "query_words",
    "tag_terms",
    "tag_values",
    "words",
]

# Bounds on work per query: a pasted page is cut to its first 10,000
# characters and its first 64 distinct terms (32 words for the fuzzy channel).
MAX_QUERY_CHARS = 10_000
MAX_QUERY_TERMS = 64
_MAX_FUZZY_WORDS = 32

# The fuzzy channel looks for words of at least this many characters: one
# typo in a 3-letter word makes another word.
_FUZZY_MIN_CHARS = 4

# Words longer than this are not indexed for the fuzzy channel (hashes, base64).
_MAX_WORD_CHARS = 64

# Words of four letters or more that name no topic: they would fuzzily match
# half the index ("what" ~ "that", "whatever").
_FUZZY_STOPWORD_TEXT = """
    about above after again against also been before being below between both cannot
    could does doing down during each from further have having here hers herself himself
    into itself just many might more most much must myself once only other ought ours
    ourselves over same should some such than that their theirs them themselves then
    there these they this those through under until very were what when where which
    while whom whose will with would your yours yourself yourselves
"""
_FUZZY_STOPWORDS = frozenset(_FUZZY_STOPWORD_TEXT.split())

# Chinese, Japanese and Korean: Han, kana (with the long-vowel mark), Hangul.
_CJK_RUN_RE = re.compile(
    "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7a3]+"
)
_WORD_RE = re.compile(r"\w+(?:[.\-/:]\w+)*")
_PART_SPLIT_RE = re.compile(r"[\W_]+")
_CAMEL_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_EDGE_PUNCTUATION = "\"'`()[]{}<>,;!?.*"


def query_text(query: str) -> str:
    """Returns a query cut to :data:`MAX_QUERY_CHARS`, safe to hand to Rust."""
    # Lone surrogates cannot cross into Rust; replace them.
    return query[:MAX_QUERY_CHARS].encode("utf-8", "replace").decode("utf-8")


def tag_terms(tags: Iterable[str]) -> list[str]:
    """Returns the indexed terms of tags: each whole tag, its namespace and value."""
    terms: set[str] = set()
    for tag in tags:
        tag = tag.lower()
        terms.add(tag)
        namespace, sep, value = tag.partition(":")
        if sep:
            terms.update(part for part in (namespace, value) if part)
    return sorted(terms)


def tag_values(tags: Iterable[str]) -> list[str]:
    """Returns each whole tag and its value (the terms a query may name)."""
    terms: set[str] = set()
    for tag in tags:
        tag = tag.lower()
        terms.add(tag)
        value = tag.partition(":")[2]
        if value:
            terms.add(value)
    return sorted(terms)


def query_tag_values(text: str) -> list[str]:
    """Returns the words of a query that may name a tag or a tag's value.

    Each whitespace-separated word, lowercased, without edge punctuation or
    a possessive ``'s`` (``Caroline's`` -> ``caroline``); the value of a word
    written as a whole tag (``project:ctx`` -> also ``ctx``); and each pair
    of adjacent words joined by a hyphen (``job queue`` -> ``job-queue``).
    """
    words: list[str] = []
    for chunk in text.split():
        word = chunk.strip(_EDGE_PUNCTUATION).lower()
        for ending in ("'s", "\u2019s"):
            word = word.removesuffix(ending)
        if word:
            words.append(word)
    terms: dict[str, None] = {}
    for word in words:
        terms.update(dict.fromkeys(tag_values([word])))
    for first, second in itertools.pairwise(words):
        terms[f"{first}-{second}"] = None
    return list(terms)[:MAX_QUERY_TERMS]


def words(text: str) -> str:
    """Returns the fuzzy channel's terms of a text: words and their parts.

    The terms are lowercased, unique and joined by spaces (in no set
    order), for the field's whitespace tokeniser.
    """
    found: set[str] = set()
    add = found.add
    # A word never holds a space: the text's whitespace-separated tokens
    # are looked into, most of them plain words told by C string methods
    # (a third less time than finding every word with the pattern).
    for token in set(text.split()):
        if token.isalpha():
            lower = token.lower()
            if token[1:] == lower[1:]:  # a plain word ("the", "Postgres")
                if len(token) <= _MAX_WORD_CHARS:
                    add(lower)
                continue
        for word in _WORD_RE.findall(token):
            if len(word) > _MAX_WORD_CHARS:
                continue  # a hash, base64: not a word, nor are its parts
            lower = word.lower()
            add(lower)
            if lower.isalnum() and word[1:] == lower[1:]:
                continue  # a plain word: no separators, no inner capitals
            for part in _PART_SPLIT_RE.split(word):
                for piece in (part, *_CAMEL_RE.findall(part)):
                    if len(piece) > 1:
                        add(piece.lower())
    return " ".join(found)


def query_words(text: str) -> list[str]:
    """Returns the whole words of a query that the fuzzy channel looks for."""
    seen: dict[str, None] = {}
    for match in _WORD_RE.finditer(text):
        word = match.group().lower()
        if (
            _FUZZY_MIN_CHARS <= len(word) <= _MAX_WORD_CHARS
            and word not in _FUZZY_STOPWORDS
        ):
            seen[word] = None
            if len(seen) == _MAX_FUZZY_WORDS:
                break
    return list(seen)


def query_tags(text: str) -> list[str]:
    """Returns the raw words of a query that could name a tag or its parts."""
    terms: dict[str, None] = {}
    for chunk in text.split():
        chunk = chunk.strip(_EDGE_PUNCTUATION).lower()
        if chunk:
            terms.update(dict.fromkeys(tag_terms([chunk])))
        if len(terms) >= MAX_QUERY_TERMS:
            break
    return list(terms)[:MAX_QUERY_TERMS]


def cjk_terms(text: str, *, single: bool) -> list[str]:
    """Returns the terms of the Chinese, Japanese and Korean in ``text``.

    These are written without spaces between words, so the simple
    tokeniser makes a whole sentence one term, which no question of one
    word matches. Each run of their characters gives its overlapping
    pairs ("数据库" -> "数据", "据库"), which a word of two characters or
    more shares wherever it stands, as Lucene's CJK bigrams do; a run of
    one character is itself. With ``single`` (a document's terms), every
    character is a term too, so that a question of one character ("猫")
    finds it inside a sentence.

    Args:
        text: Any text; one of ASCII only has none (cheaply told).
        single: Whether to add each character alone.

    Returns:
        The terms in order, repeated as often as they occur.
    """
    if text.isascii():
        return []
    terms: list[str] = []
    for run in _CJK_RUN_RE.findall(text):
        pairs = [run[i : i + 2] for i in range(len(run) - 1)] or [run]
        terms += pairs
        if single and len(run) > 1:
            terms += run
    return terms


def has_cjk(text: str) -> bool:
    """Returns whether ``text`` holds Chinese, Japanese or Korean characters."""
    return not text.isascii() and _CJK_RUN_RE.search(text) is not None
