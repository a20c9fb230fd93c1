"""Names a question spells otherwise than the store: misspelt or short (issue 29)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from ctx import engine
from ctx.engine import Draft, Memory
from ctx.hub.config import HubConfig, RecallConfig
from ctx.hub.retrieval.embedders import HashingEmbedder, MiniLMEmbedder, knows_word
from ctx.hub.retrieval.floors import NAMED_WEAK_SHARE, WEAK_SHARE, weak_floor
from ctx.hub.retrieval.index import searcher as searcher_module
from ctx.hub.retrieval.index.lexical_errors import LexicalIndexCorruptError
from ctx.hub.retrieval.index.projection import Projection
from ctx.hub.retrieval.index.spelling import (
    HELD_MAX,
    Respelling,
    allowed_edits,
    edits,
    held_names,
    misspelt,
    near_a_tag,
    short_for,
    sound_alike,
    suspects,
)
from ctx.hub.retrieval.packing import recall
from ctx.hub.retrieval.ranking import Ranked, Ranking, rank
from ctx.hub.retrieval.sources import open_sources
from ctx.hub.retrieval.temporal.parse import parse_temporal

NOW = datetime(2026, 3, 20, 12, tzinfo=UTC)
HASHING = HubConfig(embedder={"kind": "hashing"})
WHO = engine.Intent(agent="tester", intent="observe")

TURNS = [
    ("Muhhamed: I finally moved into the new flat in Lisbon", "muhhamed"),
    ("Kate: the weather in Porto was lovely for the trip", "kate"),
    ("Muhhamed: my sister is visiting in June", "muhhamed"),
    ("Nicolas: I started a pottery class on Tuesdays", "nicolas"),
    ("Melanie: we adopted a cat called Miso, thanks Kate", "melanie"),
    ("Muhhamed: the job interview at the bank went well", "muhhamed"),
    ("Kate: my brother fixed the old bike, every spoke of it", "kate"),
    ("Melanie: the garden needs water", "melanie"),
    ("Kate: I washed the car on Sunday", "kate"),
    ("Caroline: I will buy a red kayak", "caroline"),
    ("Evan: I drive an old Prius to work", "evan"),
    ("Kate: see you at the lake, Ev, and bring the Prius", "kate"),
    ("Evan: the Prius needs new tyres", "evan"),
    ("Tim: I left my keys at the climbing gym", "tim"),
]


def knows(word: str) -> bool:
    return knows_word(HashingEmbedder(), word)


# -- the rules, word by word ----------------------------------------------------


def test_a_suspect_is_capitalised_inside_a_sentence_and_outside_time():
    question = "Did Mohammed see Mel Gibson on Friday in May? Where did Kate go"
    spans = parse_temporal(question, NOW).spans
    # "Did" and "Where" begin sentences; "Mel Gibson" is a name of two
    # words; "Friday" and "May" are times.
    assert suspects(question, spans) == ["Mohammed", "Kate"]
    assert suspects("what did mohammed say?") == []
    assert suspects("Was it Al or NASA?") == []  # too short; capitals only


def test_edits_count_a_swap_as_one_and_stop_past_the_most():
    assert edits("nikolas", "nicolas", 2) == 1
    assert edits("carolnie", "caroline", 2) == 1  # a swap
    assert edits("mohammed", "muhhamed", 2) == 3  # more than asked: most + 1
    assert [allowed_edits(w) for w in ("al", "mel", "kate", "nikolas")] == [0, 1, 1, 2]


def test_a_misspelling_takes_the_one_nearest_held_name():
    names = {"muhhamed", "kate", "nicolas"}
    # Three edits, but two with its doubled letters once ("mohamed", "muhamed").
    assert misspelt("mohammed", names, knows) == "muhhamed"
    assert misspelt("nikolas", names, knows) == "nicolas"
    assert misspelt("kathe", names, knows) == "kate"
    assert misspelt("mate", names, knows) is None  # another first letter
    assert misspelt("carl", {"carla", "carly"}, knows) is None  # a tie
    # Two words the vocabulary knows are two names, not one misspelt.
    assert knows("jon")
    assert knows("john")
    assert misspelt("jon", {"john"}, knows) is None


def test_a_short_name_two_edits_away_is_misspelt_when_it_sounds_alike():
    assert sound_alike("ntie", "nate")
    assert sound_alike("jaona", "joanna")
    assert not sound_alike("joana", "john")  # "jn", "jhn"
    assert misspelt("ntie", {"nate", "nick"}, knows) == "nate"
    assert misspelt("jaona", {"joanna", "john"}, knows) == "joanna"
    # Two edits from these, but they do not sound alike.
    assert misspelt("joana", {"john"}, knows) is None
    assert misspelt("natte", {"nike"}, knows) is None
    # One edit is nearer than two.
    assert misspelt("nte", {"nate", "note"}, knows) is None  # a tie of one
    assert misspelt("nite", {"nate", "nutu"}, knows) == "nate"
    # A word of its own to the vocabulary is no sound-alike.
    assert knows("net")
    assert misspelt("net", {"nate"}, knows) is None


def test_a_short_form_takes_the_one_held_name_it_begins():
    assert short_for("mel", {"melanie", "kate"}) == "melanie"
    assert short_for("mel", {"melanie", "melvin"}) is None
    assert short_for("johnny", {"john", "johnson"}) == "john"
    assert short_for("andy", {"andrew", "kate"}) == "andrew"
    assert short_for("al", {"alice"}) is None


def test_one_persons_short_form_and_full_name_are_one():
    counts = {"caro": 2, "caroline": 129, "ev": 3, "evan": 131, "john": 5}
    held = lambda name: counts.get(name, 0)  # noqa: E731
    # The store holds Caroline as "Caro" too: "Car" begins both.
    assert short_for("car", {"caro", "caroline"}) is None
    assert short_for("car", {"caro", "caroline"}, held) == "caroline"
    # "Evvy" is "Ev" less its ending, and "Ev" is Evan's short form.
    assert short_for("evvy", {"ev", "evan"}, held) == "evan"
    assert misspelt("evn", {"ev", "evan"}, knows) is None  # a tie
    assert misspelt("evn", {"ev", "evan"}, knows, held) == "evan"
    # The one most held: "John" over "Johnson".
    assert short_for("johnny", {"john", "johnson"}, held) == "john"
    # Two people, neither name beginning the other, stay two.
    assert short_for("mel", {"melanie", "melvin"}, held) is None
    # Only a whole name and a pet ending, where a word of the language is
    # asked about (typed in lower case).
    assert short_for("johnny", {"john", "melanie"}, pet_only=True) == "john"
    assert short_for("mel", {"melanie"}, pet_only=True) is None


def memory(n, body, tags=()):
    return Memory(
        version=1,
        id=engine.MemoryId(f"01J{n:023d}"),
        kind="fact",
        body=body,
        tags=tags,
        created_at=NOW,
    )


def test_held_names_are_tag_values_and_words_always_capitalised():
    memories = [
        memory(
            1,
            "Every day Melanie waters the garden. Every week too.",
            ("speaker:kate-lee",),
        ),
        memory(2, "We ride every day with Melanie."),
    ]
    # "Every" begins sentences but is written "every" too: no name.
    assert held_names(memories) == {"kate", "lee", "melanie"}


def test_a_respelling_replaces_whole_words_in_the_questions_case():
    respelt = Respelling({"Mel": "Melanie"}, ("melanie",))
    assert respelt.apply("Did Mel see Melbourne?") == "Did Melanie see Melbourne?"
    assert Respelling().apply("as is") == "as is"


def test_minilm_knows_its_vocabularys_whole_words_without_loading_the_model():
    embedder = MiniLMEmbedder()
    assert embedder.knows_word("Nicolas")
    assert not embedder.knows_word("Nikolas")  # "nikola", "##s"
    assert embedder._session is None


# -- recall ---------------------------------------------------------------------


@pytest.fixture
def projection(disk_store):
    for days, (text, speaker) in enumerate(TURNS):
        draft = Draft(
            text=text, when=NOW - timedelta(days=days), tags=(f"speaker:{speaker}",)
        )
        engine.remember(disk_store, draft, WHO)
    return Projection.for_store(disk_store, HASHING)


def ranked(projection, query):
    [source] = open_sources(projection)
    searcher = projection.searcher(source.view)
    found = rank(searcher, query, config=RecallConfig(), now=NOW)
    return found, [searcher.read(h.id).body for h in found.hits]


@pytest.mark.parametrize(
    ("query", "respelt", "answer"),
    [
        ("Where did Mohammed move to?", {"Mohammed": "Muhhamed"}, TURNS[0][0]),
        ("What class did Nikolas start?", {"Nikolas": "Nicolas"}, TURNS[3][0]),
        ("What pet did Mel adopt?", {"Mel": "Melanie"}, TURNS[4][0]),
        # "car" is a word of the store, but no name: "Car" may stand for one.
        ("Will Car buy a kayak?", {"Car": "Caroline"}, TURNS[9][0]),
        # One edit from "Ev", which the store holds as Evan's short form:
        # the misspelling and the short form are one person's, Evan.
        ("What does Evvy drive to work?", {"Evvy": "Evan"}, TURNS[10][0]),
        # Two edits from "Kate", and the same consonants.
        ("When did Kitu wash the car?", {"Kitu": "Kate"}, TURNS[8][0]),
        # Typed in lower case: a word no memory holds may still be a name.
        ("where did mohammed move to", {"mohammed": "Muhhamed"}, TURNS[0][0]),
        ("what pet did melnie adopt?", {"melnie": "Melanie"}, TURNS[4][0]),
        # A word of the language, but a whole held name and a pet ending.
        ("where did timmy leave the keys", {"timmy": "Tim"}, TURNS[13][0]),
    ],
)
def test_a_name_spelt_otherwise_finds_its_memories_as_a_relevant_answer(
    projection, query, respelt, answer
):
    found, bodies = ranked(projection, query)
    assert dict(found.respelt) == respelt
    assert found.named
    assert bodies[0] == answer
    # The held spelling counts in the word share: the answer is no weak hit.
    assert found.hits[0].relevance >= RecallConfig().floor
    result = recall(
        projection, open_sources(projection), query, config=RecallConfig(), now=NOW
    )
    assert not result.nothing_relevant
    assert result.hits[0].body == answer
    assert not result.hits[0].weak


def test_a_question_about_what_the_store_does_not_hold_stays_empty(projection):
    query = "What did Oliver say about the quantum physics lecture?"
    found, _ = ranked(projection, query)
    assert found.respelt == {}
    assert not found.named
    result = recall(
        projection, open_sources(projection), query, config=RecallConfig(), now=NOW
    )
    assert result.nothing_relevant
    assert result.hits == ()


def test_a_named_question_has_the_lower_weak_floor(projection):
    config = RecallConfig()
    named, _ = ranked(projection, "What did Kate ride?")
    other, _ = ranked(projection, "what did the brother ride?")
    assert named.named
    assert not other.named
    assert weak_floor(config, named) == pytest.approx(config.floor * NAMED_WEAK_SHARE)
    assert weak_floor(config, other) == pytest.approx(config.floor * WEAK_SHARE)
    assert weak_floor(config) == weak_floor(config, other)
    # A name the store holds counts as the first word of a sentence too, as
    # a paraphrase or a terse question asks; a capitalised word that is no
    # name there does not.
    # (No tag says "Prius": only the memories' words hold it as a name.)
    first, _ = ranked(projection, "Prius did need what?")
    assert first.named
    assert first.respelt == {}
    word, _ = ranked(projection, "Spoke did break how?")
    assert not word.named


def test_a_question_in_lower_case_respells_only_words_no_memory_holds(projection):
    # "car" is a word of the store: typed in lower case it is that word,
    # not "Caroline" (capitalised inside a sentence, "Car" may be a name).
    found, bodies = ranked(projection, "when did kate wash the car?")
    assert found.respelt == {}
    assert found.named
    assert bodies[0] == TURNS[8][0]
    # A capital inside the question: only capitalised words are suspects.
    found, _ = ranked(projection, "where did mohammed move, Kate?")
    assert found.respelt == {}


def test_a_question_in_lower_case_looks_at_few_unheld_words(projection):
    # Past two words no memory holds, only those no dictionary knows are
    # looked at as names ("nikolas", not "quantum"), each a search.
    found, _ = ranked(projection, "did nikolas like the quantum physics lecture")
    assert dict(found.respelt) == {"nikolas": "Nicolas"}
    found, _ = ranked(projection, "did mohammed like the quantum physics lecture")
    assert found.respelt == {}
    # A pet form of a tag's value names it still: that costs no search.
    found, _ = ranked(projection, "did timmy misplace his wallet on a yacht")
    assert found.respelt == {}
    assert found.named


def test_a_word_typed_in_lower_case_is_no_short_form(projection):
    # "port" begins "Porto", as "Port" inside a sentence might stand for it;
    # typed in lower case, a word of the language is that word.
    found, _ = ranked(projection, "did kate like the port")
    assert found.respelt == {}
    assert ranked(projection, "did kate like Port?")[0].respelt == {"Port": "Porto"}


def test_a_name_the_store_writes_is_named_in_a_lower_case_question(projection):
    # No tag says "Miso": the memories write it as a name. Typed in lower
    # case, "miso" is a word they hold; that they write it as a name is
    # read only where the weak floor turns on it.
    query = "what did miso eat"
    found, bodies = ranked(projection, query)
    assert bodies[0] == TURNS[4][0]
    assert not found.named
    assert found.may_name is not None
    assert found.may_name()
    assert weak_floor(RecallConfig(), found) == pytest.approx(
        RecallConfig().floor * NAMED_WEAK_SHARE
    )
    result = recall(
        projection, open_sources(projection), query, config=RecallConfig(), now=NOW
    )
    assert not result.nothing_relevant
    assert result.hits[0].body == TURNS[4][0]
    assert result.hits[0].weak
    # A word they write in lower case is none.
    other, _ = ranked(projection, "did the brother sleep a lot")
    assert other.may_name is not None
    assert not other.may_name()


def test_a_lower_case_word_that_begins_one_held_name_names_it(projection):
    # "port" is a word of the language, so no short form of "Porto" to
    # respell; but it begins one held name, which a question about it may
    # mean: it is named, and an explicit recall's weak floor is the lower.
    found, _ = ranked(projection, "was the port lovely")
    assert found.respelt == {}
    assert found.named
    # Nor a weekday: "sun" (less the pet ending of "sunny") begins "Sunday",
    # which a memory writes capitalised, but no word names a time so.
    for query in ("was the sun out", "was it sunny"):
        found, _ = ranked(projection, query)
        assert not found.named, query


def test_a_lower_case_word_near_a_tags_value_names_it(projection):
    # "car" is a word the store holds ("washed the car"), and begins the
    # tag ``speaker:caroline``; "tom", a word of the language no memory
    # holds, is one edit from ``speaker:tim``. Typed in lower case, each
    # may be that name: the lower weak floor, no respelling.
    for query in ("will car buy a kayak", "where did tom leave the keys"):
        found, _ = ranked(projection, query)
        assert found.respelt == {}, query
        assert found.named, query
    # Words near no tag's value name nothing, nor one that begins a tag's
    # namespace ("speaker:caroline" is a term too, "caroline" its value).
    assert not ranked(projection, "who fixed the bike")[0].named
    assert not ranked(projection, "what did the speaker say about the bike")[0].named
    assert not ranked(projection, "was the bank open")[0].named


def test_a_tag_value_is_begun_past_many_deleted_tags():
    # The terms of forgotten memories stay in the index until a merge: more
    # than 50 of them beginning "spe" must not hide the live ``topic:spectrum``
    # (a phrase prefix query stops after 50 terms).
    from hashlib import sha1

    from ctx.hub.retrieval.index.lexical import LexicalIndex
    from ctx.hub.retrieval.index.schema import LexicalDoc

    def blob(i: int) -> str:
        return sha1(str(i).encode()).hexdigest()

    index = LexicalIndex.in_memory()
    dead = 60
    with index.writer() as writer:
        writer.add(
            [
                LexicalDoc(
                    blob=blob(i),
                    memory_id=f"m{i}",
                    kind="fact",
                    context="",
                    title=None,
                    body="x",
                    tags=(f"speaker:a{i:03d}",) if i < dead else ("topic:spectrum",),
                    created_at=datetime(2024, 1, 1, tzinfo=UTC),
                )
                for i in range(dead + 1)
            ]
        )
        writer.commit()
    with index.writer() as writer:
        writer.delete([blob(i) for i in range(dead)])
        writer.commit()
    assert near_a_tag("spe", [index], misspelt=False)
    assert near_a_tag("spectrum", [index], misspelt=False)
    assert not near_a_tag("spa", [index], misspelt=False)


def test_a_lower_case_question_reads_memories_for_few_held_words(projection):
    query = "did kate like the weather the trip the lake the bike the car the garden"
    found, _ = ranked(projection, query)
    assert found.may_name is not None
    [source] = open_sources(projection)
    searcher = projection.searcher(source.view)
    held = searcher.respell(query).held
    assert len(held) == HELD_MAX
    assert held[0] == "weather"  # "kate" is a tag's value: a name already


def test_a_damaged_index_tells_no_name_after_the_ranking(projection, monkeypatch):
    found, _ = ranked(projection, "what did miso eat")

    def damaged(*_args):
        raise LexicalIndexCorruptError("the lexical index cannot be read")

    monkeypatch.setattr(searcher_module, "names_among", damaged)
    assert found.may_name is not None
    assert not found.may_name()
    assert weak_floor(RecallConfig(), found) == pytest.approx(
        RecallConfig().floor * WEAK_SHARE
    )


def test_the_weak_floor_asks_may_name_only_where_the_answer_turns_on_it():
    config = RecallConfig()
    asked = []

    def may_name() -> bool:
        asked.append(True)
        return True

    def floor_of(relevance: float) -> float:
        hits = [Ranked(id="a", score=1.0, relevance=relevance)]
        found = Ranking(
            hits, parse_temporal("", NOW), [], lambda _: None, may_name=may_name
        )
        return weak_floor(config, found)

    # A strong hit, or a best hit under even the lower floor: nothing turns
    # on it, and no memory is read.
    assert floor_of(config.floor) == pytest.approx(config.floor * WEAK_SHARE)
    assert floor_of(0.1) == pytest.approx(config.floor * WEAK_SHARE)
    assert asked == []
    assert floor_of(0.3) == pytest.approx(config.floor * NAMED_WEAK_SHARE)
    assert asked == [True]


def test_a_word_typed_in_haste_is_respelt_to_the_word_the_store_holds(projection):
    # No memory holds "gardenn" nor "tyers": each is the word nearest it
    # that the memories hold, its first letter kept.
    found, bodies = ranked(projection, "does the gardenn need water")
    assert dict(found.respelt) == {"gardenn": "garden"}
    assert bodies[0] == TURNS[7][0]
    assert found.hits[0].relevance >= RecallConfig().floor
    # --explain says what the vector channel asked.
    assert found.focus == "does the garden need water"
    found, bodies = ranked(projection, "Tyers for the Prius?")
    assert dict(found.respelt) == {"Tyers": "Tyres"}
    assert bodies[0] == TURNS[12][0]
    # A word of the language is taken as meant, and a capitalised word
    # inside a sentence is the name rules' to judge.
    assert ranked(projection, "does the garden need waiter")[0].respelt == {}
    assert ranked(projection, "did Gardenn need water")[0].respelt == {}
    # A question in another language has no English typos.
    assert ranked(projection, "wann braucht der gardenn wasser")[0].respelt == {}
    # Each word alone: one near no word of the store is left as it is.
    found, _ = ranked(projection, "does the gardenn need sprnklers")
    assert dict(found.respelt) == {"gardenn": "garden"}
    # Past four such words, the question is not about what the store holds.
    found, _ = ranked(projection, "gardenn sprnklers fertlizr mulchh hoesz")
    assert found.respelt == {}


def test_a_word_typed_in_haste_means_a_word_a_live_memory_holds(disk_store):
    def write(text):
        return engine.remember(disk_store, Draft(text=text, when=NOW), WHO).ids[0]

    gone = [write(f"Servile staff, note {n}") for n in range(3)]
    write("The service is good")
    write("This is the thick client")
    write("This rack is this one, with this")
    projection = Projection.for_store(disk_store, HASHING)

    def respelt(query):
        return dict(ranked(projection, query)[0].respelt)

    assert respelt("is the servise good") == {"servise": "servile"}  # three to one
    for memory_id in gone:
        engine.forget(disk_store, memory_id, WHO)
    # The index still counts the forgotten memories' "servile" in its
    # document frequency; no live memory holds it.
    assert respelt("is the servise good") == {"servise": "service"}
    # "this" is one edit from "thisk" too, and more memories hold it, but a
    # function word is no word a question means by a typo.
    assert respelt("why is the thisk client slow") == {"thisk": "thick"}
    # A word joined to digits or an underscore, or shouted, is left as it is.
    assert respelt("is the servise2 good") == {}
    assert respelt("is the servise_x good") == {}
    assert respelt("is the SERVISE good") == {}


def test_no_word_is_respelt_to_a_month_or_a_weekday(projection):
    # "sun" would be a short form of "Sunday", which the memories write
    # capitalised as they write names.
    found, _ = ranked(projection, "did kate sit in the sun")
    assert found.respelt == {}
