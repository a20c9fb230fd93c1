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
:data:`MIN_WORDS` words. It reads a text's first 400 characters (its
pure-Python scoring costs about 1.5 µs a character), and only texts that
could be another language's (:func:`plainly_english`): one word outside
ASCII, or the commonest words of a language in Latin script that English
lacks ("und", "les", "los", "het", ...) making at least
:data:`FOREIGN_SHARE` of its words. A store of English memories never loads
its model (0.3-1 s) and pays a set lookup a word.
"""

from __future__ import annotations

import functools
import re
import threading
from typing import TYPE_CHECKING

import tantivy

if TYPE_CHECKING:
    from py3langid.langid import LanguageIdentifier

__all__ = [
    "FOREIGN_SHARE",
    "LANGUAGES",
    "MIN_PROBABILITY",
    "MIN_WORDS",
    "analyzer",
    "asks",
    "detect",
    "field_of",
    "plainly_english",
    "preload",
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

FOREIGN_SHARE = 0.1
"""The share of a text's words that must be another language's commonest
words for the detector to be asked about a text of ASCII words. In a
sentence of German, French, Spanish, Italian, Dutch or Norwegian they are
11-33% of the words (tests/hub/test_languages.py); in English text one of
them is a stray word ("la", "die", "von" in a name): one in 2,000 of
benchmarks/bench_recall.py's generated memories reaches 10%, and one in two
holds one of them, which asked the detector about every other memory of a
big import (about 0.4 ms each)."""

_SAMPLE = 400  # characters the detector reads: it costs about 1.5 us each

_ASKED = 4 * _SAMPLE  # characters asks reads: the detector's, and a margin
_WORD = re.compile(r"\w+")
# Common words of the languages in Latin script that are not English words:
# a text of ASCII words without one of them is not asked about (a text in
# another script has a word outside ASCII).
_FOREIGN = frozenset(
    (
        "der", "die", "das", "und", "ist", "nicht", "ein", "eine", "mit",
        "wir", "ich", "auf", "zu", "den", "von", "dem", "sich", "auch",
        "le", "la", "les", "des", "et", "est", "une", "du", "pour", "que",
        "qui", "dans", "sur", "pas", "nous", "vous", "sont", "avec",
        "el", "los", "las", "y", "por", "una", "con", "para", "es", "del",
        "se", "lo", "como", "pero", "muy", "il", "di", "che", "della",
        "per", "non", "sono", "gli", "questo", "os", "da", "em", "com",
        "uma", "mais", "het", "een", "van", "niet", "dat", "zijn", "ook",
        "och", "att", "det", "som", "ett", "og", "ikke", "jeg", "til",
        "av", "ja", "ei", "oli", "este", "nu", "care", "pentru", "cu",
        "pe", "az", "hogy", "nem", "egy", "van", "ve", "bir", "bu", "ile",
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
    """Returns whether a text's words cannot be another language's.

    They are all ASCII, and fewer than :data:`FOREIGN_SHARE` of them are
    among the commonest words of a language in Latin script that is not also
    English: every text of one of those languages but the shortest has more.
    Only other texts are asked about.
    """
    return all(map(str.isascii, words)) and _mostly_english(words)


def _mostly_english(words: list[str]) -> bool:
    """Returns whether few of ``words`` are another language's commonest."""
    return sum(map(_FOREIGN.__contains__, words)) < FOREIGN_SHARE * len(words)


_MODEL: list[LanguageIdentifier] = []  # loaded once, under _LOADING
_LOADING = threading.Lock()


def _identifier() -> LanguageIdentifier:
    with _LOADING:
        if not _MODEL:
            from py3langid.langid import MODEL_FILE, LanguageIdentifier

            model = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
            model.set_languages(["en", *LANGUAGES])
            _MODEL.append(model)
        return _MODEL[0]


def preload() -> None:
    """Starts loading the detector's model on a thread of its own, if not loaded.

    Loading takes 0.3-1 s, mostly decompressing (which lets other threads
    run): a caller with more texts to read loads it meanwhile, and asks
    :func:`detect` about the texts that need it (:func:`asks`) last.
    """
    if not _MODEL and not _LOADING.locked():
        threading.Thread(target=_identifier, name="ctx-language", daemon=True).start()


def asks(text: str) -> bool:
    """Returns whether :func:`detect` needs the detector to tell ``text``.

    Only the start of a long text is read (the detector reads no more).
    """
    lower = text[:_ASKED].lower()
    if not lower.isascii():
        words = _WORD.findall(lower)
        return len(words) >= MIN_WORDS and not plainly_english(words)
    # Words of ASCII text are told apart by spaces: a few times cheaper than
    # the pattern, which a text in another script needs.
    words = lower.split()
    return len(words) >= MIN_WORDS and not _mostly_english(words)


def detect(text: str) -> str | None:
    """Returns the code of the language of ``text`` if not English, else None.

    None too when the text is short or the detector is not sure.
    """
    if not asks(text):
        return None
    code, probability = _identifier().classify(text[:_SAMPLE])
    if code not in LANGUAGES or probability < MIN_PROBABILITY:
        return None
    return str(code)
