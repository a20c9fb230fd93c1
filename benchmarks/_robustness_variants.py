"""The variants of LoCoMo and Cranfield that ``bench_robustness.py`` asks.

Each is made from ``shared/eval`` by fixed rules and seeds (no model writes
anything): names misspelt or shortened, questions typed in lower case or
with typos,
asked in the first person, paraphrased (``_paraphrase.py``) or said as
claims; speakers given two-word names; two conversations in one store; and
a memory per session, whole or of one speaker's turns.
"""

from __future__ import annotations

import dataclasses
import random
import re
from collections.abc import Sequence
from datetime import datetime

import bench_quality as quality
import bench_sessions as sessions
from _paraphrase import paraphrase

from ctx.engine import Draft
from ctx.hub.retrieval.index.projection import REPLY_TO

SEED = 29
_SURNAMES = """Walker Bennett Hughes Foster Reyes Palmer Sullivan Hayes Porter Ellis
    Novak Lindqvist Okafor Tanaka Moreau Kowalski Brennan Castillo Haddad Weber"""
SURNAMES = tuple(_SURNAMES.split())
_FUNCTION_WORDS = """a an and are as at be but by can did do for from had has he
    her him his how i if in is it me my no not of on or our she so the to up us was
    we what who why will with you"""
FUNCTION_WORDS = frozenset(_FUNCTION_WORDS.split())
_TOKEN = re.compile(r"[a-z0-9]+")
_VOWELS = "aeiou"
_SYLLABLE = re.compile(r"^[^aeiouy]*[aeiouy]+h?[^aeiouy]?")


def tokens(text: str) -> list[str]:
    """Returns the BM25 baseline's tokens: lower-cased ``[a-z0-9]+`` runs."""
    return _TOKEN.findall(text.lower())


def speakers(corpus: quality.Corpus) -> list[str]:
    """Returns a conversation's speakers, as its turns name them, in order."""
    return list(dict.fromkeys(text.split(": ", 1)[0] for text in corpus.texts))


def misspelt(
    name: str, rng: random.Random, known: set[str], edits: Sequence[int] = (1, 2)
) -> str:
    """Returns ``name`` one or two edits away (``edits``), its first letter kept.

    The result is no word of ``known`` (lower-cased): a misspelling that
    makes another word of the conversation would test something else.
    """
    for _ in range(100):
        letters = list(name)
        for _ in range(rng.choice(edits)):
            at = rng.randrange(1, len(letters))
            edit = rng.choice(("vowel", "double", "drop", "swap"))
            if edit == "vowel" and letters[at].lower() in _VOWELS:
                letters[at] = rng.choice([v for v in _VOWELS if v != letters[at]])
            elif edit == "double":
                letters.insert(at, letters[at].lower())
            elif edit == "drop" and len(letters) > 3:
                del letters[at]
            elif edit == "swap" and at + 1 < len(letters):
                letters[at], letters[at + 1] = letters[at + 1], letters[at]
        word = "".join(letters)
        if word.lower() != name.lower() and word.lower() not in known:
            return word
    raise AssertionError(f"no misspelling of {name}")


def short_form(name: str) -> str:
    """Returns a short form of a first name (module doc).

    Its first syllable, closed by one consonant ("Deborah" -> "Deb"). A
    syllable that is a function word takes the next letter and "y"
    ("Andrew" -> "Andy"); one that is the whole name or under three letters
    takes "y" after its last consonant doubled ("Tim" -> "Timmy").
    """
    lower = name.lower()
    match = _SYLLABLE.match(lower)
    syllable = match.group() if match else lower
    if syllable in FUNCTION_WORDS:
        syllable = lower[: len(syllable) + 1] + "y"
    elif syllable == lower or len(syllable) < 3:
        if syllable[-1] not in _VOWELS + "y":
            syllable += syllable[-1]
        syllable += "y"
    return syllable.capitalize()


def renamed(text: str, names: dict[str, str]) -> str:
    """Returns ``text`` with each whole word that is a key replaced by its value."""
    pattern = r"\b(" + "|".join(map(re.escape, names)) + r")\b"
    return re.sub(pattern, lambda m: names[m.group()], text)


def naming(question: str, names: Sequence[str]) -> list[str]:
    """Returns the ``names`` a question names (whole words)."""
    return [n for n in names if re.search(rf"\b{re.escape(n)}\b", question)]


def asked(corpus: quality.Corpus) -> list[quality.Question]:
    """Returns the questions that have an answer (categories 1-4)."""
    return [q for q in corpus.questions if q.category in quality.CATEGORIES]


def with_questions(
    corpus: quality.Corpus, questions: list[quality.Question]
) -> quality.Corpus:
    return quality.Corpus(
        corpus.name, corpus.texts, corpus.drafts, corpus.keys, corpus.now, questions
    )


def paraphrased(corpus: quality.Corpus, text: str) -> str:
    """Returns a question of ``corpus`` said otherwise (``_paraphrase.py``)."""
    return paraphrase(text, random.Random(f"{SEED}:{corpus.name}:{text}"))


def name_variants(corpus: quality.Corpus) -> dict[str, quality.Corpus]:
    """Returns the question variants of one conversation's turns, by set name."""
    names = speakers(corpus)
    known = {t for text in corpus.texts for t in tokens(text)}
    speaker_of = {
        k: t.split(": ", 1)[0] for k, t in zip(corpus.keys, corpus.texts, strict=True)
    }
    named = named_only(corpus)
    typos, shorts, other = [], [], []
    for number, question in enumerate(named):
        rng = random.Random(f"{SEED}:{corpus.name}:{number}")
        found = naming(question.text, names)
        typo = {n: misspelt(n, rng, known) for n in found}
        short = {n: short_form(n) for n in found}
        typos.append(dataclasses.replace(question, text=renamed(question.text, typo)))
        shorts.append(dataclasses.replace(question, text=renamed(question.text, short)))
        theirs = [e for e in question.evidence if speaker_of[e] not in found]
        if len(found) == 1 and theirs:
            other.append(dataclasses.replace(question, evidence=theirs))
    said = [
        dataclasses.replace(q, text=paraphrased(corpus, q.text)) for q in asked(corpus)
    ]
    return {
        "paraphrase": with_questions(corpus, said),
        "named": with_questions(corpus, named),
        "misspelt": with_questions(corpus, typos),
        "short": with_questions(corpus, shorts),
        "misspelt-lower": with_questions(corpus, [in_lower_case(q) for q in typos]),
        "short-lower": with_questions(corpus, [in_lower_case(q) for q in shorts]),
        "other": with_questions(corpus, other),
    }


NAME_VARIANTS = ("named", "misspelt", "short", "misspelt-lower", "short-lower", "other")
"""The sets of :func:`name_variants` made from the questions that name someone."""


TYPO_MIN_CHARS = 5
"""The shortest word :func:`with_typos` misspells: a typo in "cat" is
another word as often as not."""


def with_typos(text: str, rng: random.Random, known: set[str]) -> str:
    """Returns a question with one of its words misspelt, two if it has four.

    Words of :data:`TYPO_MIN_CHARS` letters or more, no function word nor a
    capitalised one (names have their own sets), each one edit away, first
    letter kept, never a word of ``known`` (:func:`misspelt`): the typos
    of a question typed in haste.
    """
    found = [
        m
        for m in re.finditer(r"[A-Za-z]+", text)
        if len(m.group()) >= TYPO_MIN_CHARS
        and m.group().islower()
        and m.group() not in FUNCTION_WORDS
    ]
    chosen = sorted(
        rng.sample(found, min(len(found), 2 if len(found) >= 4 else 1)),
        key=lambda m: m.start(),
        reverse=True,
    )
    for match in chosen:
        typo = misspelt(match.group(), rng, known, edits=(1,))
        text = text[: match.start()] + typo + text[match.end() :]
    return text


def typed_in_haste(
    corpus: quality.Corpus, questions: Sequence[quality.Question]
) -> quality.Corpus:
    """Returns ``corpus`` asking ``questions`` with typos (:func:`with_typos`)."""
    known = {t for text in corpus.texts for t in tokens(text)}
    return with_questions(
        corpus,
        [
            dataclasses.replace(
                q,
                text=with_typos(
                    q.text, random.Random(f"{SEED}:{corpus.name}:typo:{q.text}"), known
                ),
            )
            for q in questions
        ],
    )


LOG_LINES = 30


def with_pasted_log(question: str, rng: random.Random) -> str:
    """Returns ``question`` asked after a pasted log of :data:`LOG_LINES` lines.

    A build's output, as a prompt holds one: "step 3/30: building layer
    sha256:<64 hex digits> ... done in 2.7 s", its ids and times seeded.
    """
    lines = [
        f"step {n}/{LOG_LINES}: building layer sha256:{rng.getrandbits(256):064x}"
        f" ... done in {rng.uniform(0.1, 9.9):.1f} s"
        for n in range(1, LOG_LINES + 1)
    ]
    return "\n".join([*lines, question])


def after_a_log(
    corpus: quality.Corpus, questions: Sequence[quality.Question]
) -> quality.Corpus:
    """Returns ``corpus`` asking ``questions`` after a log (:func:`with_pasted_log`)."""
    return with_questions(
        corpus,
        [
            dataclasses.replace(
                q,
                text=with_pasted_log(
                    q.text, random.Random(f"{SEED}:{corpus.name}:log:{q.text}")
                ),
            )
            for q in questions
        ],
    )


def in_lower_case(question: quality.Question) -> quality.Question:
    """Returns ``question`` typed in lower case, its closing mark left out."""
    return dataclasses.replace(
        question, text=re.sub(r"[?.!]+\s*$", "", question.text.lower())
    )


def first_person(question: str, name: str) -> str:
    """Returns ``question`` as its speaker would ask it ("What did I ...?").

    "Caroline's" becomes "my" and "Caroline" "I" (grammar aside: "What has
    I done?"), as a person asks of a store of their own turns.
    """
    said = re.sub(rf"\b{re.escape(name)}'s\b", "my", question)
    return re.sub(rf"\b{re.escape(name)}\b", "I", said)


def in_first_person(made: sessions.Sessions, speaker: str) -> sessions.Sessions:
    """Returns one speaker's sessions with the questions that name the speaker,
    asked in the first person (:func:`first_person`)."""
    return dataclasses.replace(
        made,
        questions=[
            dataclasses.replace(q, text=first_person(q.text, speaker))
            for q in made.questions
            if naming(q.text, [speaker])
        ],
    )


_ASKING = re.compile(
    r"^\s*(?:(?:in|to|at|on|for|under|by) )?(?:what|how|why|which|when|where|who"
    r"|whom|whose|is|are|was|were|does|do|did|can|could|should|would|will|has"
    r"|have|had)\b(?:\s+(?:is|are|was|were|does|do|the|a|an|there|been|be)\b)*\s*",
    re.IGNORECASE,
)


def as_claim(question: str) -> str:
    """Returns ``question`` said as a claim: its asking words and mark left out.

    "what similarity laws must be obeyed when constructing ... ?" ->
    "Similarity laws must be obeyed when constructing ....": word order
    aside ("Theoretical ... guides do we have"), what a claim says.
    """
    said = _ASKING.sub("", question.strip()).rstrip(" ?.")
    return said[:1].upper() + said[1:] + "."


def two_word_names(corpus: quality.Corpus) -> quality.Corpus:
    """Returns the conversation with a surname after each speaker's name."""
    rng = random.Random(f"{SEED}:{corpus.name}:surnames")
    names = speakers(corpus)
    full = dict(zip(names, rng.sample(SURNAMES, len(names)), strict=True))

    def text_of(text: str) -> str:
        speaker, _, rest = text.partition(": ")
        return f"{speaker} {full[speaker]}: {rest}"

    drafts = []
    for draft in corpus.drafts:
        speaker = draft.text.partition(": ")[0]
        meta = dict(draft.meta)
        if REPLY_TO in meta:
            meta[REPLY_TO] = text_of(meta[REPLY_TO])
        tag = "-".join(f"{speaker} {full[speaker]}".lower().split())
        drafts.append(
            Draft(
                text=text_of(draft.text),
                when=draft.when,
                tags=(f"speaker:{tag}",),
                meta=meta,
            )
        )
    return quality.Corpus(
        corpus.name,
        [text_of(t) for t in corpus.texts],
        drafts,
        corpus.keys,
        corpus.now,
        named_only(corpus),
    )


def two_conversations(first: quality.Corpus, second: quality.Corpus) -> quality.Corpus:
    """Returns one store of both conversations' turns, asked both's questions.

    Four speakers, each a tag on about a quarter of the turns, and the other
    conversation's turns as distractors; keys (and evidence) are prefixed by
    the conversation's name, as dia_ids repeat across conversations.
    """
    keys, questions = [], []
    for corpus in (first, second):
        keys += [f"{corpus.name}/{key}" for key in corpus.keys]
        questions += [
            dataclasses.replace(q, evidence=[f"{corpus.name}/{e}" for e in q.evidence])
            for q in asked(corpus)
        ]
    return quality.Corpus(
        f"{first.name}+{second.name}",
        first.texts + second.texts,
        first.drafts + second.drafts,
        keys,
        max(first.now, second.now),
        questions,
    )


def named_only(corpus: quality.Corpus) -> list[quality.Question]:
    """Returns the answerable questions that name a speaker."""
    names = speakers(corpus)
    return [q for q in asked(corpus) if naming(q.text, names)]


def session_of(key: str) -> str:
    """Returns the session number of a LoCoMo dia_id (``D3:7`` -> ``3``)."""
    return key[1:].split(":")[0]


def sessions_of(
    corpus: quality.Corpus, speaker: str | None = None
) -> sessions.Sessions:
    """Returns one memory per session of a conversation's turns.

    As ``bench_sessions.load`` makes them (``Speaker: text`` lines, the
    session's date); with ``speaker``, only that speaker's lines, and only
    the questions whose every evidence turn is that speaker's.
    """
    lines: dict[str, list[str]] = {}
    when: dict[str, datetime] = {}
    speaker_of = {}
    for key, text, draft in zip(corpus.keys, corpus.texts, corpus.drafts, strict=True):
        speaker_of[key] = text.split(": ", 1)[0]
        number = session_of(key)
        when.setdefault(number, draft.when or corpus.now)
        if speaker is None or speaker_of[key] == speaker:
            lines.setdefault(number, []).append(text)
    made = sessions.Sessions(corpus.name, [], [], [], corpus.now)
    for number, texts in lines.items():
        made.keys.append(number)
        made.texts.append("\n".join(texts))
        made.drafts.append(Draft(text=made.texts[-1], when=when[number]))
    for question in asked(corpus):
        if speaker is None or {speaker_of[e] for e in question.evidence} == {speaker}:
            gold = {session_of(e) for e in question.evidence}
            made.questions.append(
                sessions.Question(question.text, question.category, gold)
            )
    return made
