"""A memory's language, and the Tantivy analyser of each language stemmed.

The lexical index stems English for every memory (``title``, ``body``,
``context``). A memory in another language that Tantivy has a Snowball
stemmer for is also indexed in a field of its own language (``text_de``,
``text_fr``, ...; :data:`LANGUAGES`), analysed with that language's stemmer,
so "Häuser" finds "Haus" and "déploiements" finds "déploiement". A query is
analysed with each language's analyser for that language's field (only the
languages the index holds): no guess about the query's language is needed.

The language is told by ``py3langid`` (langid.py's model, shipped in the
package: offline, about 60 µs a memory), limited to the languages here, and
taken only when it is sure (:data:`MIN_PROBABILITY`) of a text of at least
:data:`MIN_WORDS` words. Its model costs 0.3-1 s to load, so a text whose
words are mostly ASCII with English's common words among them is taken as
English without asking it (:func:`plainly_english`): a store of English
memories never loads it.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

import tantivy

if TYPE_CHECKING:
    from py3langid.langid import LanguageIdentifier

__all__ = [
    "LANGUAGES",
    "MIN_PROBABILITY",
    "MIN_WORDS",
    "analyzer",
    "detect",
    "field_of",
    "plainly_english",
]

LANGUAGES = {
    "ar": "arabic",
    "da": "danish",
    "de": "german",
    "el": "greek",
    "es": "spanish",
    "fi": "finnish",
    "fr": "french",
    "hu": "hungarian",
    "it": "italian",
    "nl": "dutch",
    "no": "norwegian",
    "pt": "portuguese",
    "ro": "romanian",
    "ru": "russian",
    "sv": "swedish",
    "ta": "tamil",
    "tr": "turkish",
}
"""The languages besides English that Tantivy stems, by ISO 639-1 code."""

MIN_PROBABILITY = 0.9
"""How sure the detector must be: on one-word texts it guesses (0.38 for
"Häuser"); on a sentence it is above 0.99 for German, French and Spanish."""

MIN_WORDS = 3
"""Texts shorter than this are English (the detector cannot tell them)."""

_WORD = re.compile(r"\w+")
# English's commonest words: a text of English has many of them.
_ENGLISH = frozenset(
    (
        "the", "a", "an", "and", "or", "of", "to", "in", "on", "at", "for",
        "with", "is", "are", "was", "were", "be", "been", "it", "this", "that",
        "we", "you", "they", "he", "she", "i", "our", "their", "its", "not",
        "no", "by", "from", "as", "have", "has", "had", "do", "does", "did",
        "will", "would", "can", "should", "what", "which", "who", "when", "how",
    )
)  # fmt: skip


def field_of(code: str) -> str:
    """Returns the name of the field of language ``code`` (``text_de``)."""
    return f"text_{code}"


@functools.cache
def analyzer(code: str) -> tantivy.TextAnalyzer:
    """Returns the analyser of language ``code``: ``en_stem``'s, its stemmer."""
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(40))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.stemmer(LANGUAGES.get(code, "english")))
        .build()
    )


def plainly_english(words: list[str]) -> bool:
    """Returns whether words are ASCII with English's common words among them.

    At least one word in six is one of English's commonest (a sentence of
    English has far more), and no word has a letter outside ASCII.
    """
    common = sum(word in _ENGLISH for word in words)
    return common * 6 >= len(words) and all(word.isascii() for word in words)


@functools.cache
def _identifier() -> LanguageIdentifier:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    identifier.set_languages(["en", *LANGUAGES])
    return identifier


def detect(text: str) -> str | None:
    """Returns the code of the language of ``text`` if not English, else None.

    None too when the text is short or the detector is not sure.
    """
    words = _WORD.findall(text.lower())
    if len(words) < MIN_WORDS or plainly_english(words):
        return None
    code, probability = _identifier().classify(text)
    if code not in LANGUAGES or probability < MIN_PROBABILITY:
        return None
    return str(code)
