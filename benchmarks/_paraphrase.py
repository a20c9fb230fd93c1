"""Paraphrased questions by fixed rules: no model writes them.

Issue 29 asks for questions that say what they ask in other words. A model
may not write benchmark data here, and rewriting questions by hand would fit
them to one data set, so every question is rewritten by the same small rule
set, seeded by the question (:func:`paraphrase`):

1. **Synonyms.** Each word that :data:`SYNONYMS` lists is replaced by one of
   its alternatives (chosen by the seed), its capital kept: "When did
   Melanie buy the car?" -> "When did Melanie purchase the vehicle?". The
   table holds common English verbs (each inflected form on its own line),
   nouns and adjectives of everyday life, written as a thesaurus would give
   them, without looking at any one question; a word of two senses ("like",
   "work", "play", "game") is left out rather than replaced by the wrong one,
   and a past form after "has", "was", "get" and the like is kept (it is a
   participle there: "has started" is not "has began").
2. **Form**, one of three, by the seed:
   - *as asked*: the question with its synonyms;
   - *echo*: the question word moved to the end, as someone who states what
     they know and asks for the rest ("What kind of music does John like?"
     -> "John does like what kind of music?"; "What is Caroline's
     identity?" -> "Caroline's identity is what?"). Only a question that
     opens with a question word, has its auxiliary within six words, and
     whose subject after it is a name (a capitalised word, names joined by
     "and", a possessive and the word it owns; after a form of "be", every
     word it owns up to a function word or a preposition) is moved; any
     other keeps its form;
   - *keywords*: the question words, auxiliaries and function words left
     out, as typed into a search box ("Melanie purchase vehicle").

The evidence of a question stays its own: only its words change.
"""

from __future__ import annotations

import random
import re

_SYNONYMS = """
start: begin
starts: begins
started: began
starting: beginning
begin: start
began: started
kind: type, sort
type: kind, sort
favorite: preferred
enjoy: love, appreciate
enjoys: loves, appreciates
enjoyed: loved, appreciated
likes: enjoys
love: adore
loves: adores
buy: purchase
bought: purchased
receive: get
received: got
make: create
made: created
create: make
created: made
go: travel
went: traveled
visit: see
visited: saw
attend: go to
attended: went to
participate: take part
participated: took part
join: sign up for
joined: signed up for
help: assist
helped: assisted
say: mention
said: mentioned
mention: say
mentioned: said
talk: speak
talked: spoke
tell: inform
told: informed
share: show
shared: showed
planning: intending
want: wish
wants: wishes
learn: study
learned: studied
learning: studying
job: occupation, position
career: profession
hobby: pastime
hobbies: pastimes
activity: pastime
activities: pastimes
book: novel
books: novels
movie: film
movies: films
photo: picture
photos: pictures
picture: photo
pictures: photos
kids: children
children: kids
child: kid
son: boy
daughter: girl
mom: mother
mother: mom
dad: father
father: dad
friend: pal, buddy
friends: pals, buddies
partner: companion
dog: pup
dogs: pups
pet: animal
pets: animals
car: vehicle, automobile
cars: vehicles
house: home
home: house
trip: journey, excursion
recently: lately
lately: recently
currently: now
big: large
large: big
small: little
often: frequently
happy: glad
tough: hard, difficult
hard: difficult
difficult: hard
important: significant
event: occasion
events: occasions
party: celebration
gift: present
reason: motive
advice: guidance, tips
city: town
country: nation
place: spot, location
places: spots, locations
meal: dish
music: songs
song: tune
team: squad
class: course
classes: courses
workshop: seminar
money: cash, funds
finish: complete
finished: completed
try: attempt
tried: attempted
choose: pick, select
chose: picked, selected
decide: choose
decided: chose
watch: view
watched: viewed
write: compose
wrote: composed
painting: artwork
paintings: artworks
recipe: dish
recipes: dishes
adopt: take in
adopted: took in
stay: remain
live: reside
lives: resides
lived: resided
motivated: inspired
inspired: motivated
excited: thrilled
worried: concerned
accident: crash
health: wellbeing
community: neighborhood
project: venture
goal: aim
goals: aims
describe: portray
suggest: recommend
suggested: recommended
recommend: suggest
recommended: suggested
organize: arrange
organized: arranged
give: offer
gave: offered
use: utilize
beach: seaside, shore
hike: trek
hiking: trekking
store: shop
shop: store
online: on the internet
family: relatives
girlfriend: partner
married: wed
stress: pressure, tension
passion: love
people: folks
someone: somebody
"""
SYNONYMS: dict[str, tuple[str, ...]] = {
    word.strip(): tuple(alt.strip() for alt in alts.split(","))
    for word, _, alts in (
        line.partition(":") for line in _SYNONYMS.strip().splitlines()
    )
}
"""Each word (lower case) and its alternatives: the thesaurus of rule 1."""

_QUESTION_WORDS = "what which when where who whom whose why how"
QUESTION_WORDS = frozenset(_QUESTION_WORDS.split())
_AUXILIARIES = (
    "is are was were did does do has have had would will can could might should"
)
AUXILIARIES = frozenset(_AUXILIARIES.split())
_FUNCTION_WORDS = """a an and are as at be but by can did do does for from had has
    have he her him his how i if in is it its me my no not of on or our she so the
    their they to up us was we were what when where which who whom whose why will
    with would you could might should"""
FUNCTION_WORDS = frozenset(_FUNCTION_WORDS.split())
_PREPOSITIONS = """about after before during for from in into like of on over to
    with without"""
_ENDS_SUBJECT = FUNCTION_WORDS | frozenset(_PREPOSITIONS.split())
_BE = frozenset(("is", "are", "was", "were"))
_AFTER_PERFECT = "has have had was were been be being is are get getting"
_PERFECT = frozenset(_AFTER_PERFECT.split())
"""Words after which a past form is a participle, which the table may not
give ("has started" is not "has began")."""
FORMS = ("as asked", "echo", "keywords")
_WORD = re.compile(r"[A-Za-z]+")


def synonyms(question: str, rng: random.Random) -> str:
    """Returns ``question`` with each word of :data:`SYNONYMS` replaced (rule 1)."""

    def swap(match: re.Match[str]) -> str:
        word = match.group()
        alternatives = SYNONYMS.get(word.lower())
        before = question[: match.start()].split()[-1:]
        if alternatives is None or (
            word.endswith("ed") and before and before[0].lower() in _PERFECT
        ):
            return word
        chosen = rng.choice(alternatives)
        return chosen[0].upper() + chosen[1:] if word[0].isupper() else chosen

    return _WORD.sub(swap, question)


def _is_name(word: str) -> bool:
    return word[:1].isupper()


def _subject_end(words: list[str], noun_phrase: bool) -> int:
    """Returns how many of ``words`` make a named subject (0: none).

    A name, names joined by "and", and after a possessive the word it owns;
    with ``noun_phrase`` (after a form of "be"), every word it owns up to a
    function word or a preposition ("Joanna's third screenplay").
    """
    if not words or not _is_name(words[0]):
        return 0
    at = 1
    while at < len(words):
        word = words[at]
        if word == "and" and at + 1 < len(words) and _is_name(words[at + 1]):
            at += 2
        elif words[at - 1].endswith(("'s", "s'")) and word.lower() not in _ENDS_SUBJECT:
            at += 1  # what the possessive owns
            while noun_phrase and at < len(words):
                if words[at].lower() in _ENDS_SUBJECT:
                    break
                at += 1
        else:
            break
    return at


def echo(question: str) -> str | None:
    """Returns ``question`` with its question word moved to the end, if it can."""
    words = question.rstrip(" ?").split()
    if not words or words[0].lower() not in QUESTION_WORDS:
        return None
    aux = next(
        (i for i, w in enumerate(words[:7]) if i and w.lower() in AUXILIARIES), None
    )
    if aux is None:
        return None
    rest = words[aux + 1 :]
    end = _subject_end(rest, words[aux].lower() in _BE)
    if not end:
        return None
    asking = " ".join(words[:aux])
    asking = asking[0].lower() + asking[1:]
    moved = [*rest[:end], words[aux], *rest[end:], asking]
    return " ".join(moved) + "?"


def keywords(question: str) -> str:
    """Returns the question's words less question words and function words."""
    words = [w.strip('?,.!"') for w in question.split()]
    return " ".join(w for w in words if w and w.lower() not in FUNCTION_WORDS)


def paraphrase(question: str, rng: random.Random) -> str:
    """Returns ``question`` said otherwise by the module's rules."""
    said = synonyms(question, rng)
    form = rng.choice(FORMS)
    if form == "echo":
        return echo(said) or said
    if form == "keywords":
        return keywords(said) or said
    return said
