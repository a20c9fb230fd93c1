"""Dream cycles on a real store: what each kind finds, back-off, claims, recall."""

from __future__ import annotations

import threading
from datetime import timedelta

import msgspec
import pytest
from dream_support import NOW, WHO, hashing_workspace, proposals, remember

from ctx import engine
from ctx.hub import Workspace, dream
from ctx.hub.config import HubConfig, RecallConfig
from ctx.hub.dream.queue import BASE_WAIT
from ctx.hub.retrieval.index.projection import Projection
from ctx.hub.retrieval.packing import recall
from ctx.hub.retrieval.sources import open_sources


@pytest.fixture
def ws(disk_store):
    # Closed after the test: an unclosed store's packs warn when collected,
    # in whatever test runs then.
    workspace = hashing_workspace(disk_store)
    yield workspace
    workspace.close()


def links_of(p):
    return [(c.source, c.type, c.target) for c in p.links]


def test_a_cycle_proposes_each_kind_on_its_own_branch(ws):
    store = ws.store()
    old_dup = remember(ws, "The staging database is Postgres 15.", days_ago=3)
    new_dup = remember(ws, "the staging database is postgres 15", days_ago=1)
    old_port = remember(ws, "API port", title="API port", kind="fact", days_ago=9)
    store_edit = engine.edit(store, old_port, WHO, body="The API listens on 8080")
    assert store_edit.commit
    new_port = remember(
        ws, "The API listens on 9090", title="API port", kind="fact", days_ago=2
    )
    standup = remember(ws, "Standup is every Monday at nine", days_ago=4)
    ancient = remember(ws, "We tried a hackathon theme once", days_ago=400)
    main_before = store.branch_tip("main")
    report = dream.run(ws, budget=50)
    assert store.branch_tip("main") == main_before
    assert report.examined == 6
    assert report.dream_branch == "dream/main"
    [dup] = proposals(ws, "duplicate")
    assert links_of(dup) == [(new_dup, "SUPERSEDES", old_dup)]
    assert dup.reason == "the same text"
    [update] = proposals(ws, "update")
    assert links_of(update) == [(new_port, "SUPERSEDES", old_port)]
    [rec] = proposals(ws, "recurrence")
    assert [(t.memory, t.tag) for t in rec.tags] == [(standup, "recurs:weekly")]
    [tier] = proposals(ws, "tier")
    assert [(t.memory, t.tag) for t in tier.tags] == [(ancient, "tier:off-context")]
    for p in proposals(ws):
        info = store.commit(
            next(
                e.commit.id
                for e in engine.log(store, rev="dream/main")
                if e.commit.summary.startswith(f"Propose {p.kind}")
                and all(m.id in e.commit.summary for m in p.memories)
            )
        )
        assert info.author == "dream"
        assert info.intent.intent == "dream"
        assert info.intent.reason == p.reason


def test_links_and_contradictions_by_the_rules(ws):
    a = remember(ws, "The billing service uses Kafka for invoices", days_ago=5)
    b = remember(ws, "Kafka retention is set to seven days", days_ago=4)
    c = remember(ws, "The deploy job is green on main", days_ago=1)
    d = remember(ws, "The deploy job is not green on main", days_ago=1)
    dream.run(ws, budget=50)
    [link] = proposals(ws, "link")
    assert links_of(link) == [(a, "DEPENDS_ON", b)]
    [contra] = proposals(ws, "contradiction")
    assert links_of(contra) == [
        tuple([*sorted((c, d))[:1], "CONTRADICTS", sorted((c, d))[1]])
    ]


def test_a_second_cycle_makes_nothing_twice_and_backs_off(ws):
    remember(ws, "Same words here", days_ago=2)
    remember(ws, "same words here.", days_ago=1)
    lone = remember(ws, "Nothing like anything else", days_ago=1)
    first = dream.run(ws, budget=50)
    assert sum(first.proposed.values()) == 1
    assert first.known == 0  # its other side is met in the same cycle: not before
    again = dream.run(ws, budget=50)
    assert again.examined == 0  # everything backs off
    later = dream.run(ws, budget=50, now=NOW + timedelta(seconds=BASE_WAIT + 1))
    assert later.examined == 3
    assert later.proposed == {}
    assert later.known == 2  # the duplicate, seen from each side
    status = dream.dream_status(ws, now=NOW + timedelta(seconds=BASE_WAIT + 2))
    assert status.queue.due == 0
    assert status.queue.waiting == 3
    # The memory that made the proposal gave nothing new for the first time:
    # it waits BASE_WAIT; the other two gave nothing twice in a row (the
    # duplicate's second side found it made): they wait twice as long.
    assert status.queue.next_due == NOW + timedelta(seconds=BASE_WAIT * 2 + 1)
    then = dream.dream_status(ws, now=NOW + timedelta(seconds=BASE_WAIT * 2 + 2))
    assert (then.queue.due, then.queue.waiting) == (1, 2)
    last = dream.dream_status(ws, now=NOW + timedelta(seconds=BASE_WAIT * 3 + 2))
    assert last.queue.due == 3
    engine.edit(ws.store(), lone, WHO, body="Changed, so due again")
    assert dream.dream_status(ws).queue.due == 1


def test_rejected_proposals_are_never_made_again(ws):
    remember(ws, "Same words here", days_ago=2)
    remember(ws, "same words here.", days_ago=1)
    dream.run(ws, budget=50)
    [p] = proposals(ws)
    dream.reject(ws, [p.id], reason="they differ in context")
    with_wait = NOW + timedelta(days=2)
    report = dream.run(ws, budget=50, now=with_wait)
    assert report.proposed == {}
    [same] = proposals(ws)
    assert (same.status, same.note) == ("rejected", "they differ in context")


def test_accepted_proposals_reach_recall_after_merge_and_undo_takes_it_back(ws):
    store = ws.store()
    old = remember(ws, "The office wifi password is hunter2", days_ago=30)
    new = remember(ws, "The office wifi password is correcthorse", days_ago=1)
    dream.run(ws, budget=50)
    projection = Projection.for_store(store, HubConfig(embedder={"kind": "hashing"}))

    def hits():
        sources = open_sources(projection)
        found = recall(
            projection, sources, "office wifi password", now=NOW, config=RecallConfig()
        )
        return [h.id for h in found.hits]

    assert old in hits()
    [p] = proposals(ws, "update")
    assert links_of(p) == [(new, "SUPERSEDES", old)]
    dream.merge(ws)
    accepted = dream.accept(ws, [])
    assert accepted.ids == (p.id,)
    before = store.branch_tip("main")
    result = dream.merge(ws)
    assert result.merged == (p.id,)
    assert result.merge.commit.intent.intent == "merge"  # ctx dream merge's
    assert hits()[0] == new
    assert old not in hits()
    engine.undo(store, "main")
    assert store.branch_tip("main") == before
    assert old in hits()


def test_two_workers_at_once_never_make_a_proposal_twice(ws):
    for n in range(6):
        end = "." if n >= 3 else ""
        remember(ws, f"Repeated fact number {n % 3} about the cache{end}", days_ago=n)
    errors = []

    def work():
        try:
            dream.run(Workspace(ws.path, clock=lambda: NOW), budget=50)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    ids = [p.id for p in proposals(ws)]
    assert len(ids) == len(set(ids))
    dupes = proposals(ws, "duplicate")
    assert len(dupes) == 3
    commits = [
        e
        for e in engine.log(ws.store(), rev="dream/main")
        if e.commit.summary.startswith("Propose")
    ]
    assert len(commits) == len(ids)


def test_dream_refuses_its_own_branches_and_bad_budgets(ws):
    remember(ws, "anything")
    with pytest.raises(engine.InvalidInputError, match="one of Dream's own"):
        dream.run(ws, branch="dream/main")
    with pytest.raises(engine.InvalidInputError, match="at least 1"):
        dream.run(ws, budget=0)
    with pytest.raises(engine.RefNotFoundError):
        dream.run(ws, branch="nope")


def test_an_accepted_proposal_is_rechecked_by_the_rules_before_merge(ws):
    store = ws.store()
    remember(ws, "The staging cluster runs in Frankfurt", days_ago=3)
    kept = remember(ws, "the staging cluster runs in frankfurt", days_ago=1)
    dream.run(ws, budget=50)
    dream.accept(ws, [])
    # The one it keeps changes (one it would hide, edited, is never hidden).
    engine.edit(store, kept, WHO, body="Our cat is called Miso")
    before = store.branch_tip("main")
    result = dream.merge(ws)
    assert result.merged == ()
    [(pid, why)] = result.stale
    assert why == "the memories changed: the rules now see nothing"
    assert store.branch_tip("main") == before
    [stale] = dream.review(ws, status="stale")
    assert stale.proposal.id == pid
    assert [m.changed for m in stale.memories if m.id == kept] == [True]


def test_an_old_memory_given_to_an_agent_stays_in_context(ws):
    from ctx.hub.session_state import editing

    used = remember(ws, "The billing cron runs at midnight UTC", days_ago=400)
    unused = remember(ws, "A hackathon theme we tried once", days_ago=400)
    with editing(ws.path, "s1") as state:
        state.note_shown([used])
    dream.run(ws, budget=50)
    [tier] = proposals(ws, "tier")
    assert [(t.memory, t.tag) for t in tier.tags] == [(unused, "tier:off-context")]


def test_recall_follows_a_merged_dream_link_one_hop(ws):
    store = ws.store()
    checkout = remember(ws, "The checkout service uses Stripe", days_ago=2)
    stripe = remember(ws, "Stripe webhooks retry for three days", days_ago=1)
    dream.run(ws, budget=50)
    [link] = proposals(ws, "link")
    assert links_of(link) == [(checkout, "DEPENDS_ON", stripe)]
    dream.accept(ws, [link.id])
    dream.merge(ws)
    projection = Projection.for_store(store, HubConfig(embedder={"kind": "hashing"}))
    [source] = open_sources(projection)
    found = recall(
        projection,
        [source],
        "checkout service",
        now=NOW,
        config=RecallConfig(),
        explain=True,
    )
    by_id = {h.id: h for h in found.hits}
    assert by_id[stripe].explain.via == f"{checkout} DEPENDS_ON this"


def _fact(n, text, days_ago):
    return engine.Memory(
        version=1,
        id=engine.MemoryId(f"01J{n:023d}"),
        kind="fact",
        body=text,
        created_at=NOW - timedelta(days=days_ago),
    )


def test_a_changed_value_is_an_update_even_when_it_moves_the_vector():
    older = _fact(1, "Caroline: my sister moved to Boston with her two kids", 40)
    newer = _fact(2, "Caroline: my sister moved to Zanzibar with her two kids", 1)
    limits = dream.Thresholds()
    # Below the subject cosine: before, this pair became a RELATES_TO link.
    verdict = dream.judge_pair(older, newer, 0.66, limits)
    assert verdict is not None
    assert (verdict.kind, verdict.link) == ("update", "SUPERSEDES")
    assert (verdict.source, verdict.target) == (newer.id, older.id)
    # The same pair written on one day is nearly one memory twice: no link.
    same_day = _fact(3, "Caroline: my sister moved to Zanzibar with her two kids", 40)
    assert dream.judge_pair(older, same_day, 0.66, limits) is None


def test_a_shared_name_links_only_when_it_is_rare():
    a = _fact(1, "We met Jolene at the pottery fair", 3)
    b = _fact(2, "The kiln broke, Jolene said it was old", 2)
    limits = dream.Thresholds()
    linked = dream.judge_pair(a, b, 0.46, limits, rare=lambda name: True)
    assert linked is not None
    assert (linked.kind, linked.link) == ("link", "RELATES_TO")
    assert "jolene" in linked.reason
    assert dream.judge_pair(a, b, 0.46, limits, rare=lambda name: False) is None


def test_near_neighbours_alone_are_not_linked():
    # Two halves of one exchange: near in recall, but no entity in common.
    a = _fact(1, "Andrew: Wow, that tattoo looks great!", 3)
    b = _fact(2, "Andrew: Aww, that's cute! What made you get it?", 2)
    limits = dream.Thresholds()
    assert dream.judge_pair(a, b, 0.8, limits, rare=lambda name: True) is None
    # A shared rare name is evidence, but only between neighbours.
    c = _fact(3, "We met Jolene at the pottery fair", 3)
    d = _fact(4, "Jolene sold her boat", 2)
    assert dream.judge_pair(c, d, 0.1, limits, rare=lambda name: True) is None


def test_strong_neighbours_with_one_subject_tag_written_apart_are_linked():
    def tagged(n, text, days_ago, *tags):
        return msgspec.structs.replace(_fact(n, text, days_ago), tags=tags)

    a = tagged(1, "Melanie: we went camping with the kids", 40, "speaker:melanie")
    b = tagged(2, "Melanie: the kids loved the campfire", 3, "speaker:melanie")
    limits = dream.Thresholds()
    linked = dream.judge_pair(a, b, 0.6, limits, rare=lambda name: False)
    assert linked is not None
    assert (linked.kind, linked.link) == ("link", "RELATES_TO")
    assert "speaker:melanie" in linked.reason
    # Not when one sitting wrote both, nor when only a tier is shared.
    same_sitting = tagged(
        3, "Melanie: the kids loved the campfire", 40, "speaker:melanie"
    )
    assert dream.judge_pair(a, same_sitting, 0.6, limits, rare=lambda n: False) is None
    c = tagged(4, "we went camping with the kids", 40, "tier:reference")
    d = tagged(5, "the kids loved the campfire", 3, "tier:reference")
    assert dream.judge_pair(c, d, 0.6, limits, rare=lambda name: False) is None


def test_rarity_is_counted_in_the_store_and_a_memory_gives_one_link(ws):
    from ctx.hub.dream.detect import MAX_LINKS, RARE_MIN, Detector

    for n in range(RARE_MIN + 2):
        remember(ws, f"Kafka topic number {n} keeps invoices", days_ago=3)
    remember(ws, "Zookeeper was retired last spring", days_ago=2)
    store = ws.store()
    projection = Projection.for_store(store, HubConfig(embedder={"kind": "hashing"}))
    [source] = open_sources(projection)
    detector = Detector(
        projection.searcher(source.view),
        engine.link_graph(store, source.commit),
        "main",
        NOW,
    )
    assert detector.rare("zookeeper")
    assert not detector.rare("kafka")
    assert MAX_LINKS == 1
    dream.run(ws, budget=50)
    made: dict[str, int] = {}
    for p in proposals(ws, "link"):
        for m in p.memories:
            made[m.id] = made.get(m.id, 0) + 1
    # Each memory gives at most one link; both ends count, so at most 2 each.
    assert all(n <= 2 * MAX_LINKS for n in made.values())


def test_two_turns_replying_to_different_texts_are_judged_by_what_they_say(ws):
    # A chat turn is indexed with the text it replies to, so that recall
    # finds it by its question; judged by that vector, a restated turn with
    # a new value and another context would look like another subject.
    old = remember(
        ws,
        "Jon: I'm currently reading The Lean Startup and hoping it gives me tips",
        days_ago=40,
        meta={
            "reply_to": "Gina: The dance studio opening went well, the floors "
            "arrived on Tuesday and the mirrors were hung by a crew of four"
        },
    )
    new = remember(
        ws,
        "Jon: I'm currently reading The Zanzibar Startup and hoping it gives me tips",
        days_ago=1,
        meta={
            "reply_to": "Gina: My cousin flew in from Lisbon with a suitcase of "
            "pastries, and we spent the evening planning a garden party"
        },
    )
    dream.run(ws, budget=50)
    [update] = proposals(ws, "update")
    assert links_of(update) == [(new, "SUPERSEDES", old)]
    assert "one value changed (Lean -> Zanzibar)" in update.reason
