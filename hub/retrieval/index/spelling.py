"""Names a question spells otherwise than the store: misspelt, or short.

A question may name someone otherwise than the memories do: "Mohammed" for
a speaker the store spells "Muhhamed", "Nikolas" for "Nicolas", "Mel" for
"Melanie". No memory holds that word, so it weighs the most in the share of
the question's words a memory holds (:mod:`ctx.hub.retrieval.index.coverage`), every
memory falls under the relevance floor, and recall answered "nothing
relevant" to a question whose answer it held (issue 29: 9.6% of LoCoMo's
questions with a name misspelt, 11.9% with a short form).

:func:`respell` finds such words and the name the store holds for each:

- A **suspect** is a word of three letters or more, capitalised in the
  middle of a sentence (a sentence's first word is capitalised anyway),
  outside the question's time phrases and no month or weekday, and not
  next to another capitalised word ("Mel Gibson", "New York": a name of
  several words is not one misspelt word). A suspect the memories hold as
  a name (a tag's value, or a word they write as a name, below) is a name
  the store holds, and stays as it is; one they hold only as a word ("car"
  for "Car") may still be a short form.
- A suspect no memory holds is **misspelt** if a held name is within the
  edits Lucene's ``AUTO`` fuzziness allows (one for 3-5 letters, two for
  longer; a swap of two letters is one edit), its first letter the same,
  counting a doubled letter as one ("Mohammed" and "Muhhamed" are two
  edits apart that way); the nearest wins, and a tie respells nothing. A
  word the embedder knows whole (:func:`~ctx.hub.retrieval.embedders.knows_word`) is
  respelt only to a name it does not know: "Jon" and "John", both names
  of their own, are two people, not a typo; "Mohammed" and "Muhhamed" are
  one name spelt two ways. A name of 3-5 letters may also be misspelt by
  two edits when the two **sound alike** (:func:`sound_alike`): the same
  consonants in the same order once the vowels are left out and doubled
  letters counted once ("Notu" and "Ntie" for "Nate", "Jaona" for
  "Joanna"), and the suspect is no word of its own to the embedder ("Net"
  and "Gnu" are). Two edits on so short a word reach too much otherwise:
  "Joana" is two from "John", "Natte" two from "Nike".
- Otherwise it may be a **short form** (:func:`short_for`) of the one held
  name that starts with it ("Mel": "Melanie"), or with it less an English
  pet-name ending, "y" or "ie" after a doubled letter or not ("Johnny":
  "John", "Andy": "Andrew"). Two names that fit respell nothing, unless
  they are one person's: names that all begin with the shortest of them,
  a short form the store holds beside the full name ("Caro" and
  "Caroline"), which go to the one most memories hold (a tie of a
  misspelling likewise: "Evn" for "Ev" and "Evan"). A word that is a
  misspelling of one held name and a short form of another goes to the
  misspelling, unless the two are one person's names: "Evvy" is one edit
  from "Ev" and the short form of "Evan", whom the store also calls "Ev",
  so it is "Evan" (respelt "Ev", the name few memories hold weighed the
  most in the word share, and 11 of LoCoMo's questions with a short form
  went empty).

A question typed in lower case (no word capitalised but its first, "I"
aside) has no capitals to tell a name by: there, each word of three letters
or more that is no function word, month or weekday is a suspect if no
memory holds it, nor its stem ("melnie"; not "say", which "says" stems
to), and respelt by the same rules, but a word of MiniLM's vocabulary is no
short form there ("pet" is not Peter, nor "art" Arthur, where "Pet" inside
a sentence might be) unless it is a whole held name and a pet ending
("johnny", "sammy": a third of the questions so typed that were left
empty named someone so; the cost: "teddy" is Ted in a store that holds
Ted and never says "teddy"); a word the store holds is taken as typed ("car"
stays "car", where "Car" may be Caroline), and one a tag's value holds is a
name it names. Typed so, 12.1% of LoCoMo's questions with a misspelt name
and 13.7% with a short form had answered "nothing relevant" (0.9% and 0.1%
capitalised). What such a question may name without a respelling lowers an
explicit recall's weak floor only: a word of the vocabulary no memory holds
that begins one held name, no month or weekday ("nat": Nate), is named, and
a held word the memories write as a name ("mel" of "Hey Mel!", among the
question's first :data:`HELD_MAX` held words) is told by
:func:`names_among`, which reads memories and is asked only where the weak
floor turns on it (:attr:`Respelling.held`). Whatever the case, no word is
respelt to a month or a weekday, which memories write capitalised too
("say" is no pet form of "Saturday").

A sentence's first word is no suspect, but one the memories hold as a name
is a name the question names (:attr:`Respelling.names`): a paraphrase or a
terse question often puts it first ("John did take what test?"), and
naming someone the store holds lowers an explicit recall's weak floor.

A **held name** is a word of the memories that hold something near the
suspect: a tag value's word, or a word of their text that they write
capitalised every time, at least once in the middle of a sentence (so
"every" is no name, whatever a sentence's first word does).

Recall asks the vector channel, the tag boost and the relevance measure
with the question respelt (:meth:`Respelling.apply`), and the lexical
channels with the question as written: BM25 and the fuzzy channel find what
they find of the original words, and the fuzzy channel already matches a
near spelling.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import tantivy

from ctx.engine import Memory
from ctx.hub.retrieval.index.lexical_errors import reading
from ctx.hub.retrieval.index.schema import content_analyzer

if TYPE_CHECKING:
    from ctx.hub.retrieval.index.lexical import LexicalIndex

__all__ = [
    "HELD_MAX",
    "NAME_READS",
    "NAME_ROUNDS",
    "SOUND_ALIKE_EDITS",
    "UNHELD_MAX",
    "WORD",
    "Respelling",
    "allowed_edits",
    "capitalised",
    "doc_freq",
    "edits",
    "held_as",
    "held_names",
    "may_name",
    "misspelt",
    "names_among",
    "near_a_tag",
    "respell",
    "short_for",
    "sound_alike",
    "starts_sentence",
    "suspects",
]

NAME_READS = 8
"""Memories read per round of the search for held names near a suspect."""

SOUND_ALIKE_EDITS = 2
"""The edits a short suspect may be from a held name that it sounds like
(:func:`sound_alike`), beyond Lucene's ``AUTO`` (one for 3-5 letters)."""

UNHELD_MAX = 2
"""Words no memory holds that a question typed in lower case may have at
most for them to be looked at as names spelt otherwise: a name is one or
two words, and each costs the search of :data:`NAME_ROUNDS` rounds."""

HELD_MAX = 6
"""Words a question typed in lower case has that the memories hold, at most,
that :func:`names_among` may read memories for (the first in the question):
each costs a search and up to :data:`NAME_READS` memories read."""

NAME_ROUNDS = 6
"""Rounds of that search at most; each leaves out the words and memories
the rounds before found, so that a common prefix ("ev": "every", "even",
"event") does not hide the name behind it."""

_MIN_CHARS = 3
_TIME_TEXT = """
    january february march april may june july august september october
    november december monday tuesday wednesday thursday friday saturday sunday
"""
_TIME_WORDS = frozenset(_TIME_TEXT.split())
WORD = re.compile(r"[^\W\d_]+")
"""A word of a question or a memory, as these rules read them: letters."""
_SENTENCE_END = '.!?:;\n"“('
_PET_ENDINGS = ("ie", "y")
_TAG_PARTS = re.compile(r"[\s\-_./]+")
_TAG_WEIGHT = 2.0  # a tag's value is a deliberate name: read those first


@dataclass(frozen=True)
class Respelling:
    """What a question names, and how the store spells its names.

    Attributes:
        words: Each word of the question that the store spells otherwise,
            as written, with the held spelling (in the question's case).
        names: The held names the question names: its suspects some memory
            holds (and a sentence's first word that they hold as a name),
            and the held spellings of those respelt.
        held: In a question typed in lower case, its words that the
            memories hold (no function word, month or weekday): one they
            write as a name may be among them ("mel" for "Mel"), which
            :func:`names_among` tells, at the cost of reading memories (the
            first :data:`HELD_MAX` of them).
        near_tags: In a question typed in lower case, its words (held or
            not) that begin a tag's value or are a misspelling from one
            (:func:`near_a_tag`): "car" of ``speaker:caroline``, "jon" of
            ``speaker:john``. Each may name what the tag names.
    """

    words: Mapping[str, str] = field(default_factory=dict)
    names: tuple[str, ...] = ()
    held: tuple[str, ...] = ()
    near_tags: tuple[str, ...] = ()

    def apply(self, text: str) -> str:
        """Returns ``text`` with each respelt word, whole, in its held spelling."""
        if not self.words:
            return text
        pattern = r"\b(" + "|".join(map(re.escape, self.words)) + r")\b"
        return re.sub(pattern, lambda m: self.words[m.group()], text)


def allowed_edits(word: str) -> int:
    """Returns the edits a misspelling of ``word`` may be (Lucene's ``AUTO``)."""
    if len(word) < _MIN_CHARS:
        return 0
    return 1 if len(word) <= 5 else 2


def _searched_edits(word: str) -> int:
    """Returns the edits within which held names near ``word`` are looked for.

    :func:`allowed_edits`, or more for a sound-alike
    (:data:`SOUND_ALIKE_EDITS`); none for a word too short to be a name.
    """
    most = allowed_edits(word)
    return max(most, SOUND_ALIKE_EDITS) if most else 0


def sound_alike(word: str, name: str) -> bool:
    """Returns whether two words (lower-case) have the same consonants.

    The first letter, then the consonants in order, vowels (and "y") left
    out and doubled letters counted once: "notu", "ntie" and "nate" are all
    "nt"; "joana" is "jn" and "john" "jhn".
    """
    return _consonants(word) == _consonants(name)


def _consonants(word: str) -> str:
    return word[:1] + re.sub(r"(.)\1+", r"\1", re.sub(r"[aeiouy]", "", word[1:]))


def edits(first: str, second: str, most: int) -> int:
    """Returns the edits between two words, or ``most + 1`` if more.

    Insertions, deletions, substitutions and swaps of adjacent letters
    count one each (the optimal string alignment distance, as Lucene's
    fuzzy queries count with transpositions).
    """
    if abs(len(first) - len(second)) > most:
        return most + 1
    before: list[int] = []
    row = list(range(len(second) + 1))
    for i in range(1, len(first) + 1):
        current = [i] + [0] * len(second)
        for j in range(1, len(second) + 1):
            cost = first[i - 1] != second[j - 1]
            current[j] = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + cost)
            if (
                before
                and i > 1
                and j > 1
                and first[i - 1] == second[j - 2]
                and first[i - 2] == second[j - 1]
            ):
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > most:
            return most + 1
        before, row = row, current
    return min(row[-1], most + 1)


def _single(word: str) -> str:
    """Returns ``word`` with each doubled letter once ("muhhamed": "muhamed")."""
    return re.sub(r"(.)\1+", r"\1", word)


@functools.lru_cache(maxsize=1 << 16)
def _near(word: str, name: str) -> int | None:
    """Returns the edits from ``word`` to ``name`` if a misspelling may be that.

    Within :func:`allowed_edits`, or two for a short word and a name that
    :func:`sound_alike` (:func:`misspelt` asks more of those).
    """
    most = _searched_edits(word)
    if not most or word == name or word[0] != name[0]:
        return None
    found = min(edits(word, name, most), edits(_single(word), _single(name), most))
    if found <= allowed_edits(word) or (found <= most and sound_alike(word, name)):
        return found
    return None


def _stems(word: str) -> list[str]:
    """Returns what a short form may begin a name with: itself, less a pet ending."""
    stems = [word]
    for ending in _PET_ENDINGS:
        stem = word.removesuffix(ending)
        if stem != word and len(stem) >= 2:
            stems.append(stem)
            if len(stem) >= 3 and stem[-1] == stem[-2]:
                stems.append(stem[:-1])  # "johnny": "john"
    return stems


def misspelt(
    word: str,
    names: Iterable[str],
    knows: Callable[[str], bool],
    held: Callable[[str], int] | None = None,
) -> str | None:
    """Returns the one held name nearest ``word`` (lower-case), if any (module doc).

    ``held``: how many memories hold a name; with it, nearest names that are
    one person's short form and full name are one (:func:`_one_person`).
    """
    known = knows(word)
    near: dict[int, set[str]] = {}
    for name in names:
        found = _near(word, name)
        if found is None or (known and knows(name)):
            continue
        if known and found > allowed_edits(word):
            continue  # a sound-alike that is a word of its own ("Net")
        near.setdefault(found, set()).add(name)
    if not near:
        return None
    nearest = _one_person(near[min(near)], (), held)
    return next(iter(nearest)) if len(nearest) == 1 else None


def _one_person(
    found: set[str], names: Iterable[str], held: Callable[[str], int] | None
) -> set[str]:
    """Returns ``found``, as one name if its names are one person's.

    A store may hold someone under a short form of their own beside the full
    name ("Caro" and "Caroline", "Ev" and "Evan"): names that all begin with
    the shortest of them, counting those of ``names`` that begin with it
    too. They are then the one most memories hold (``held``), the full name
    that every turn of a speaker starts with; a short form that few turns
    hold would weigh the most in the word share. Without ``held``, or when
    the names are not so, ``found`` as it is.
    """
    if held is None or not found:
        return found
    shortest = min(found, key=lambda name: (len(name), name))
    family = found | {name for name in names if name.startswith(shortest)}
    if len(family) < 2 or not all(name.startswith(shortest) for name in family):
        return found
    return {max(sorted(family), key=held)}


def short_for(
    word: str,
    names: Iterable[str],
    held: Callable[[str], int] | None = None,
    *,
    pet_only: bool = False,
) -> str | None:
    """Returns the one held name that ``word`` (lower-case) is a short form of.

    A name equal to the word less a pet ending ("johnny": "john") is that
    name; otherwise the one name that starts with the word or with it less
    its ending ("mel": "melanie", "andy": "andrew"); ``None`` for none or
    several, and for a word under three letters. ``held``: how many memories
    hold a name; with it, names that are one person's short form and full
    name are one (:func:`_one_person`). ``pet_only``: only the first kind, a
    whole name and a pet ending.
    """
    if len(word) < _MIN_CHARS:
        return None
    stems = _stems(word)
    names = set(names) - {word}
    exact = {name for name in names if name in stems[1:]}
    if exact:
        exact = _one_person(exact, names, held)
        return next(iter(exact)) if len(exact) == 1 else None
    if pet_only:
        return None
    starting = {name for name in names if any(map(name.startswith, stems))}
    starting = _one_person(starting, (), held)
    return next(iter(starting)) if len(starting) == 1 else None


def suspects(question: str, spans: Sequence[tuple[int, int]] = ()) -> list[str]:
    """Returns the words of ``question`` that may name someone (module doc).

    ``spans``: the question's time phrases, as (start, end) offsets
    (:attr:`~ctx.hub.retrieval.temporal.parse.TemporalQuery.spans`).
    """
    words = list(WORD.finditer(question))
    capital = [capitalised(m.group()) for m in words]
    starts = [starts_sentence(question, m.start()) for m in words]
    found: dict[str, None] = {}
    for at, match in enumerate(words):
        word = match.group()
        if not capital[at] or starts[at] or not may_name(match, spans):
            continue
        beside = [
            n
            for n in (at - 1, at + 1)
            if 0 <= n < len(words)
            and _joined(question, words[min(at, n)], words[max(at, n)])
        ]
        if any(capital[n] and not starts[n] for n in beside):
            continue  # one word of a name of several
        found[word] = None
    return list(found)


def _text(memory: Memory) -> str:
    return f"{memory.title}\n{memory.body}" if memory.title else memory.body


def capitalised(word: str) -> bool:
    """Returns whether ``word`` begins with a capital and is not all capitals."""
    return word[0].isupper() and not (len(word) > 1 and word.isupper())


def starts_sentence(text: str, at: int) -> bool:
    """Returns whether the word at offset ``at`` of ``text`` begins a sentence."""
    before = text[:at].rstrip()
    return not before or before[-1] in _SENTENCE_END


def _joined(text: str, first: re.Match[str], second: re.Match[str]) -> bool:
    """Returns whether only spaces stand between two words."""
    between = text[first.end() : second.start()]
    return not between.strip() and "\n" not in between


def held_names(
    memories: Iterable[Memory], wanted: Callable[[str], bool] = bool
) -> set[str]:
    """Returns the names ``memories`` hold, lower-case (module doc).

    ``wanted``: whether a word (lower-case) is worth judging; others are
    passed over.
    """
    names: set[str] = set()
    cased: dict[str, bool] = {}  # word -> capitalised every time
    inside: set[str] = set()  # words capitalised in the middle of a sentence
    for memory in memories:
        for tag in memory.tags:
            value = tag.partition(":")[2] or tag
            names.update(p for p in _TAG_PARTS.split(value.lower()) if wanted(p))
        text = _text(memory)
        for match in WORD.finditer(text):
            word = match.group()
            lower = word.lower()
            if not wanted(lower):
                continue
            upper = capitalised(word)
            cased[lower] = cased.get(lower, True) and upper
            if upper and not starts_sentence(text, match.start()):
                inside.add(lower)
    names.update(word for word, upper in cased.items() if upper and word in inside)
    return names


def respell(
    question: str,
    spans: Sequence[tuple[int, int]],
    *,
    indexes: Sequence[LexicalIndex],
    read: Callable[[str], Memory | None],
    knows: Callable[[str], bool],
) -> Respelling:
    """Returns how the store spells the names ``question`` names (module doc).

    Args:
        question: The question as asked.
        spans: Its time phrases' offsets, whose words name no one.
        indexes: The lexical indexes to look the words up in.
        read: Returns the memory of a blob in the view asked about, or
            ``None`` for a blob outside it.
        knows: Whether the embedder knows a word whole.
    """
    words: dict[str, str] = {}
    names: dict[str, None] = {}

    count = functools.partial(doc_freq, indexes)
    found: Mapping[str, Literal["name", "word"] | None]
    lower_case = not _capitals(question)
    held_words: list[str] = []
    if lower_case:
        tagged, unheld, held_words = _in_lower_case(question, spans, indexes, knows)
        names.update(dict.fromkeys(tagged))
        found = dict.fromkeys(unheld)
    else:
        found = {
            word: held_as(word.lower(), indexes, read)
            for word in suspects(question, spans)
        }
    for word, how in found.items():
        lower = word.lower()
        if how == "name":
            names[lower] = None
            continue
        held = _names_near(lower, indexes, read)
        # Typed in lower case, a word of the language is no short form but
        # a whole held name and a pet ending ("johnny": "John", "sammy":
        # "Sam"): "pet" is not Peter, nor "art" Arthur, as "Pet" inside a
        # sentence may be.
        name = short_for(lower, held, count, pet_only=lower_case and knows(lower))
        if how is None:
            typo = misspelt(lower, held, knows, count)
            if typo is not None and name is not None:
                # "Evvy": one edit from "Ev", a short form of "Evan" the
                # store holds beside it; both are one person's names.
                one = _one_person({typo, name}, (), count)
                name = next(iter(one)) if len(one) == 1 else typo
            else:
                name = typo or name
        if name is not None and name not in _TIME_WORDS:
            words[word] = name.capitalize() if word[1:].islower() else name
            names[name] = None
        elif lower_case and knows(lower):
            # A word of the language that begins one held name may name it
            # ("nat": Nate): no respelling, but the lower weak floor.
            near = short_for(lower, held, count)
            if near is not None and near not in _TIME_WORDS:
                names[near] = None
    for word in _first_words(question, spans):
        if held_as(word.lower(), indexes, read) == "name":
            names[word.lower()] = None
    near_tags: tuple[str, ...] = ()
    if lower_case and not names:
        # A word the memories hold is spelt as they write it ("name", not
        # "nate"): only a beginning of a tag's value may be its short form.
        near_tags = tuple(
            w
            for w, misspelt in (
                *((w.lower(), True) for w in found),
                *((w, False) for w in held_words),
            )
            if near_a_tag(w, indexes, misspelt=misspelt)
        )
    return Respelling(words, tuple(names), tuple(held_words), near_tags)


def near_a_tag(
    word: str, indexes: Sequence[LexicalIndex], *, misspelt: bool = True
) -> bool:
    """Returns whether a tag's value begins with ``word`` or is a misspelling of it.

    ``word``: lower-case, of a question typed in lower case, three letters
    at least. A beginning: "car" of ``speaker:caroline``, "joan" of
    ``speaker:joanna``, whether or not the word is one of the language or
    of the memories (typed in lower case, a short form often is: "car",
    "jam"). A misspelling, only if ``misspelt`` (a word no memory holds):
    within :func:`allowed_edits` ("jon" of ``speaker:john``, "nato" of
    ``speaker:nate``). One query of the tags' values, whose terms are few.
    """
    most = allowed_edits(word)
    if not most:
        return False
    for index in indexes:
        schema = index.schema
        searcher = index.current_searcher()
        near = []
        # A value's beginning, not a whole tag's ("spe" begins the term
        # "speaker:caroline", not a value); a word is letters: no escaping.
        # The regex costs 0.5 ms to build (a Unicode class), a prefix
        # automaton (distance 0: a phrase prefix stops at 50 terms, maybe
        # all deleted) next to nothing, and most words begin no term.
        prefix = tantivy.Query.fuzzy_term_query(
            schema, "tag_values", word, distance=0, prefix=True
        )
        if index.run(searcher, prefix, 1, 0):
            near.append(tantivy.Query.regex_query(schema, "tag_values", word + "[^:]*"))
        if misspelt:
            near.append(
                tantivy.Query.fuzzy_term_query(
                    schema, "tag_values", word, distance=most
                )
            )
        if not near:
            continue
        query = tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in near])
        if index.run(searcher, query, 1, 0):
            return True
    return False


def names_among(
    words: Iterable[str],
    indexes: Sequence[LexicalIndex],
    read: Callable[[str], Memory | None],
) -> bool:
    """Returns whether the memories write one of ``words`` (lower-case) as a name.

    A question typed in lower case has no capitals to tell "mel" from a
    word: the memories' own writing does (:func:`held_as`, :func:`held_names`).
    """
    return any(held_as(word, indexes, read) == "name" for word in words)


def doc_freq(indexes: Sequence[LexicalIndex], word: str) -> int:
    """Returns how many memories of ``indexes`` hold ``word`` as a word."""
    total = 0
    for index in indexes:
        with reading(f"search {index.where}"):
            total += index.current_searcher().doc_freq("words", word)
    return total


def _in_lower_case(
    question: str,
    spans: Sequence[tuple[int, int]],
    indexes: Sequence[LexicalIndex],
    knows: Callable[[str], bool],
) -> tuple[list[str], list[str], list[str]]:
    """Returns what a question typed in lower case names, its suspects, the rest.

    Its words of three letters or more, outside the time phrases, no month,
    weekday or English function word: those a tag's value holds (names it
    names), those no memory holds (:func:`held_as`), the suspects, and
    those the memories hold otherwise (:attr:`Respelling.held`).
    Past :data:`UNHELD_MAX` suspects, only those the embedder does not know
    whole ("carolien", not "received"), and none if they are still more:
    such a question asks about what the store does not hold, not about
    someone it spells otherwise; but a pet form of a tag's value among them
    names that tag ("sammy": ``speaker:sam``).
    """
    tagged: list[str] = []
    unheld: list[str] = []
    held: list[str] = []
    for match in WORD.finditer(question):
        word = match.group()
        stems = content_analyzer().analyze(word)
        if not (stems and may_name(match, spans)):
            continue
        how = held_as(word.lower(), indexes, None, stems)
        if how == "name":
            tagged.append(word.lower())
        elif how is None and word not in unheld:
            unheld.append(word)
        elif how == "word" and word.lower() not in held and len(held) < HELD_MAX:
            held.append(word.lower())
    if len(unheld) > UNHELD_MAX:
        # Past them, a pet form of a tag's value ("sammy": speaker:sam) still
        # names it, as a tag's value does: it costs no search.
        for word in unheld:
            pets = _stems(word.lower())[1:]  # the word less a pet ending
            tagged.extend(p for p in pets if held_as(p, indexes, None) == "name")
        unheld = [word for word in unheld if not knows(word.lower())]
    return tagged, unheld if len(unheld) <= UNHELD_MAX else [], held


def _capitals(question: str) -> bool:
    """Returns whether a word of ``question`` but its first is capitalised.

    "I" aside: a question typed in lower case may still say it.
    """
    return any(
        m.start() > 0 and len(m.group()) > 1 and capitalised(m.group())
        for m in WORD.finditer(question)
    )


def _first_words(question: str, spans: Sequence[tuple[int, int]]) -> list[str]:
    """Returns the first words of the question's sentences that may be names.

    Capitalised, of three letters or more, no English function word, month
    or weekday, outside the time phrases. A sentence's first word is no
    suspect (it is capitalised anyway), but a paraphrase or a terse question
    puts the name first ("John did take what test?"), and one the memories
    hold as a name says that the question is about someone the store holds.
    """
    found: dict[str, None] = {}
    for match in WORD.finditer(question):
        word = match.group()
        if (
            capitalised(word)
            and starts_sentence(question, match.start())
            and may_name(match, spans)
            and content_analyzer().analyze(word)
        ):
            found[word] = None
    return list(found)


def may_name(match: re.Match[str], spans: Sequence[tuple[int, int]]) -> bool:
    """Returns whether a word may name someone, wherever it stands.

    Three letters or more, no month or weekday, outside the time phrases
    (``spans``).
    """
    word = match.group()
    return (
        len(word) >= _MIN_CHARS
        and word.lower() not in _TIME_WORDS
        and not any(start <= match.start() < end for start, end in spans)
    )


def held_as(
    word: str,
    indexes: Sequence[LexicalIndex],
    read: Callable[[str], Memory | None] | None,
    stems: Sequence[str] = (),
) -> Literal["name", "word"] | None:
    """Returns how the memories hold ``word`` (lower-case): as a name, a word, not.

    A tag's value is a name; a word of their text is one if
    :data:`NAME_READS` of the memories that hold it write it as a name
    (:func:`held_names`). A word they hold only otherwise ("car" for a
    question's "Car") may still be the short form of a name they hold
    ("Caroline"). ``read`` ``None``: a word of a question typed in lower
    case, every one of which is asked about: no memory is read. A word
    whose ``stems`` (as the index analyses it) a title or body holds is
    held too ("say", which "says" stems to; the word share counts it so).
    """
    held: Literal["word"] | None = None
    for index in indexes:
        searcher = index.current_searcher()
        with reading(f"search {index.where}"):
            if searcher.doc_freq("tag_values", word):
                return "name"
            if not searcher.doc_freq("words", word):
                if any(
                    searcher.doc_freq(f, t) for f in ("title", "body") for t in stems
                ):
                    held = "word"
                continue
        held = "word"
        if read is None:
            continue
        query = tantivy.Query.term_query(index.schema, "words", word)
        found = index.blobs_of(searcher, index.run(searcher, query, NAME_READS, 0))
        memories = [m for m in map(read, found) if m is not None]
        if held_names(memories, lambda w: w == word):
            return "name"
    return held


def _names_near(
    word: str, indexes: Sequence[LexicalIndex], read: Callable[[str], Memory | None]
) -> set[str]:
    """Returns the held names of the memories holding words near ``word``.

    Near: within the edits a misspelling may be, or starting with a stem
    of a short form. Each round reads :data:`NAME_READS` memories, those
    with such a tag first, and leaves out the next round the words that
    fit and the memories read, at most :data:`NAME_ROUNDS` rounds.
    """
    names: set[str] = set()
    stems = _stems(word)
    for index in indexes:
        searcher = index.current_searcher()
        fitting: set[str] = set()
        blobs: set[str] = set()
        for _ in range(NAME_ROUNDS):
            query = _near_query(index, word, stems, fitting, blobs)
            found = index.blobs_of(searcher, index.run(searcher, query, NAME_READS, 0))
            if not found:
                break
            blobs.update(found)
            memories = [m for m in map(read, found) if m is not None]
            words = {w.lower() for m in memories for w in WORD.findall(_text(m))}
            fitting |= {w for w in words if _fits(word, stems, w)}
            held = held_names(memories, lambda w: _fits(word, stems, w))
            names |= held
            fitting |= held
            if len(found) < NAME_READS:
                break  # every memory that matched was read
    return names


def _fits(word: str, stems: Sequence[str], other: str) -> bool:
    return _near(word, other) is not None or any(map(other.startswith, stems))


def _near_query(
    index: LexicalIndex,
    word: str,
    stems: Sequence[str],
    fitting: Collection[str],
    blobs: Collection[str],
) -> tantivy.Query:
    """Returns the query of one round of :func:`_names_near`."""
    schema = index.schema
    most = _searched_edits(word)
    clauses: list[tuple[tantivy.Occur, tantivy.Query]] = []
    for name, weight in (("words", 1.0), ("tag_values", _TAG_WEIGHT)):
        near = [
            tantivy.Query.fuzzy_term_query(schema, name, form, distance=most)
            for form in dict.fromkeys((word, _single(word)))
        ]
        near += [
            tantivy.Query.fuzzy_term_query(schema, name, stem, distance=0, prefix=True)
            for stem in stems
        ]
        clauses += [
            (tantivy.Occur.Should, tantivy.Query.const_score_query(q, weight))
            for q in near
        ]
        clauses += [
            (tantivy.Occur.MustNot, tantivy.Query.term_query(schema, name, w))
            for w in fitting
        ]
    clauses += [
        (tantivy.Occur.MustNot, tantivy.Query.term_query(schema, "blob", blob))
        for blob in blobs
    ]
    return tantivy.Query.boolean_query(clauses)
