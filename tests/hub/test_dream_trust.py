"""Dream a reviewer can trust (issue 31): right updates, few proposals, safe merges."""

from __future__ import annotations

from datetime import timedelta

import pytest
from dream_support import NOW, hashing_workspace, proposals, remember

from ctx import engine
from ctx.hub import dream
from ctx.hub.access import Caller
from ctx.hub.calls import CALLS, invoke
from ctx.hub.dream.events import separate_events, value_changes
from ctx.hub.dream.rules import normalise
from ctx.hub.dream.selection import MAX_PROPOSALS
from ctx.hub.retrieval.feedback import (
    LoggedHit,
    LoggedRecall,
    log_recall,
    new_recall_id,
    record_feedback,
)


@pytest.fixture
def ws(disk_store):
    # Closed after the test: an unclosed store's packs warn when collected,
    # in whatever test runs then.
    workspace = hashing_workspace(disk_store)
    yield workspace
    workspace.close()


LIMITS = dream.Thresholds()


def memory(n, body, days_ago, *, title=None, kind="fact"):
    return engine.Memory(
        version=1,
        id=engine.MemoryId(f"01J{n:023d}"),
        kind=kind,
        title=title,
        body=body,
        created_at=NOW - timedelta(days=days_ago),
    )


# -- the rules ----------------------------------------------------------------


def test_separate_events_of_one_shape_never_supersede_each_other():
    a = memory(1, "Routine note 7: reviewed pull request 107 about ci.", 20)
    b = memory(2, "Routine note 12: reviewed pull request 112 about ci.", 5)
    assert separate_events(a.body, b.body)
    assert dream.judge_pair(a, b, 0.89, LIMITS) is None
    # One id changed in a record of something that happened: two events.
    c = memory(3, "CI run 4512 on main passed", 3)
    d = memory(4, "CI run 4513 on main passed", 1)
    assert dream.judge_pair(c, d, 0.95, LIMITS) is None
    # Ids joined by _ or - tell events apart too.
    g = memory(7, "Fixed flaky test test_case_00 in tests/hub", 30)
    h = memory(8, "Fixed flaky test test_case_04 in tests/hub", 4)
    assert dream.judge_pair(g, h, 0.95, LIMITS) is None
    # Titled alike, but each records its own day.
    e = memory(5, "Held on 2026-03-02: discussed billing", 18, title="Standup")
    f = memory(6, "Held on 2026-03-09: discussed billing", 11, title="Standup")
    assert dream.judge_pair(e, f, 0.9, LIMITS) is None


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        # Who took part, or a count, tells two events apart.
        ("Met with Alice about the Q3 roadmap", "Met with Bob about the Q3 roadmap"),
        ("Ran the backup job, 42 GB written", "Ran the backup job, 43 GB written"),
        ("Alice reviewed the login PR", "Bob reviewed the login PR"),
        # Whom an action went to (an accept-all hid every hand-over but the
        # last).
        ("Sent the monthly invoice to Acme.", "Sent the monthly invoice to Initech."),
        ("Handed the on-call pager to Carol.", "Handed the on-call pager to Dave."),
        ("Sent the logs to the security team.", "Sent the logs to the platform team."),
        (
            "Deployed the billing api to staging.",
            "Deployed the billing api to production.",
        ),
        (
            "Escalated the outage ticket to Alice.",
            "Escalated the outage ticket to Bob.",
        ),
    ],
)
def test_two_events_with_other_people_or_counts_are_not_an_update(older, newer):
    a, b = memory(1, older, 20), memory(2, newer, 19)
    assert separate_events(a.body, b.body)
    assert dream.judge_pair(a, b, 0.95, LIMITS) is None


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("We decided to use Postgres for jobs", "We decided to use Redis for jobs"),
        ("The team lead is Dana", "The team lead is now Erik"),
        ("Timeout was raised to 30 seconds", "Timeout was raised to 45 seconds"),
        ("Changed the API port to 8080", "Changed the API port to 9090"),
        ("Upgraded Postgres to 14", "Upgraded Postgres to 16"),
        ("Moved the weekly sync to Berlin", "Moved the weekly sync to Munich"),
        # An action that went to someone before, in a clause of its own.
        (
            "Emailed the team and moved the launch to March",
            "Emailed the team and moved the launch to April",
        ),
        # A value said after whom it went to, or a time it was put off to.
        (
            "Reported to Alice that the port is 8080",
            "Reported to Alice that the port is 9090",
        ),
        ("Pushed the deadline to Friday", "Pushed the deadline to Monday"),
        ("Pushed the release to next week", "Pushed the release to next month"),
    ],
)
def test_a_value_a_decision_changed_is_still_an_update(older, newer):
    assert not separate_events(older, newer)


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        (
            "Deployed version 1.4.1 to production.",
            "Deployed version 1.4.4 to production.",
        ),
        ("Tagged release 2.3.2 on GitHub.", "Tagged release 2.3.3 on GitHub."),
        ("Deployed v1.4.1 to production.", "Deployed v1.4.4 to production."),
    ],
)
def test_two_versions_are_neither_duplicates_nor_an_update(older, newer):
    # "1.4.1" and "1.4.4" were the same words (their digits): a duplicate of
    # 0.99, and an accept-all hid the older deploy.
    assert (
        dream.judge_pair(memory(1, older, 20), memory(2, newer, 5), 0.98, LIMITS)
        is None
    )


def test_a_dotted_name_is_named_whole():
    # "orders.v1" was named "orders.v" in a link's reason.
    found = dream.rules.entities(memory(1, "The orders.v1 topic feeds billing", 2))
    assert "orders.v1" in found
    assert "orders.v" not in found


def test_one_value_of_one_subject_changed_is_an_update():
    old = memory(1, "The API listens on port 8080", 20)
    new = memory(2, "The API now listens on port 9090", 5)
    assert value_changes(old.body, new.body) == [(("8080",), ("9090",))]
    verdict = dream.judge_pair(old, new, 0.85, LIMITS)
    assert verdict is not None
    assert (verdict.kind, verdict.source, verdict.target) == ("update", new.id, old.id)
    assert "one value changed (8080 -> 9090)" in verdict.reason
    # A titled update says what its body changed, not only its title.
    was = memory(3, "We use Postgres for jobs", 20, title="Queue backend")
    now = memory(4, "We use Redis for jobs", 5, title="queue backend")
    verdict = dream.judge_pair(was, now, 0.5, LIMITS)
    assert verdict is not None
    assert verdict.reason == (
        "the same fact titled 'Queue backend', written later (Postgres -> Redis)"
    )
    # A value that "is" introduces stays a value, even in a dated note.
    a = memory(3, "On 2026-03-01 the release is v1.2.3", 9)
    b = memory(4, "On 2026-03-01 the release is v1.2.4", 2)
    verdict = dream.judge_pair(a, b, 0.95, LIMITS)
    assert verdict is not None
    assert verdict.kind == "update"
    # The same kind and title with another body: an update.
    t1 = memory(5, "We chose Postgres", 30, title="Database", kind="decision")
    t2 = memory(6, "We chose MySQL", 2, title="Database", kind="decision")
    verdict = dream.judge_pair(t1, t2, 0.4, LIMITS)
    assert verdict is not None
    assert (verdict.kind, verdict.source) == ("update", t2.id)


def test_case_and_spacing_only_copies_are_duplicates_keeping_the_titled_one():
    titled = memory(1, "SSO uses OIDC with Okta", 30, title="SSO", kind="decision")
    copy = memory(2, "sso uses  oidc with okta", 1)
    verdict = dream.judge_pair(titled, copy, 0.5, LIMITS)
    assert verdict is not None
    assert (verdict.kind, verdict.source, verdict.target) == (
        "duplicate",
        titled.id,
        copy.id,
    )
    spaced = memory(3, "SSO  uses OIDC\twith Okta", 1)
    plain = memory(4, "SSO uses OIDC with Okta", 2)
    verdict = dream.judge_pair(spaced, plain, 0.99, LIMITS)
    assert verdict is not None
    assert verdict.kind == "duplicate"
    # Accents too: a copy typed without them is the same text.
    accented = memory(5, "Résumé uploads go to the S3 bucket cv-prod", 2)
    bare = memory(6, "Resume uploads go to the S3 bucket cv-prod", 1)
    verdict = dream.judge_pair(accented, bare, 0.5, LIMITS)
    assert verdict is not None
    assert verdict.kind == "duplicate"
    assert normalise("Tiếng Việt") == "tieng viet"


def test_no_depends_on_between_near_copies():
    a = memory(1, "SSO uses OIDC with Okta", 3)
    b = memory(2, "Our SSO uses OIDC with Okta for staff", 3)
    # Weak vectors (the hashing embedder): only the words tell them alike.
    verdict = dream.judge_pair(a, b, 0.3, LIMITS, rare=lambda name: False)
    assert verdict is None or verdict.link != "DEPENDS_ON"
    # A count is not a need: "needs two approvals" needs no memory of "two".
    review = memory(5, "Code review needs two approvals", 3)
    fixed = memory(6, "Two things this benchmark found are fixed.", 9)
    verdict = dream.judge_pair(review, fixed, 0.3, LIMITS, rare=lambda name: True)
    assert verdict is None
    # A real need still links.
    app = memory(3, "The checkout service uses Stripe", 3)
    stripe = memory(4, "Stripe webhooks retry for three days", 2)
    verdict = dream.judge_pair(app, stripe, 0.3, LIMITS, rare=lambda name: False)
    assert verdict is not None
    assert verdict.link == "DEPENDS_ON"


def test_a_rare_name_opening_one_sentence_still_links_the_pair():
    a = memory(1, "Error reports go to Sentry", 20)
    b = memory(2, "Sentry drops events above 200 a minute", 5)
    verdict = dream.judge_pair(a, b, 0.35, LIMITS, rare=lambda name: True)
    assert verdict is not None
    assert (verdict.link, verdict.reason) == (
        "RELATES_TO",
        "names sentry (cosine 0.35)",
    )
    # A name that only ever opens sentences (a speaker's) is no evidence.
    c = memory(3, "Melanie: the kids loved the campfire", 20)
    d = memory(4, "Melanie: we painted a sunset", 5)
    assert dream.judge_pair(c, d, 0.35, LIMITS, rare=lambda name: True) is None


# -- not flooded ----------------------------------------------------------------

TOPICS = ("ci", "docs", "billing", "search", "auth")


def test_a_store_of_routine_notes_gets_a_handful_of_proposals(ws):
    # Issue 31's store of 36 memories: once 113 proposals, 77 of them
    # routine notes superseding one another.
    old_dup = remember(ws, "The staging database is Postgres 15.", days_ago=220)
    new_dup = remember(ws, "the staging database is postgres 15", days_ago=219)
    old_port = remember(ws, "The API listens on port 8080", days_ago=230)
    new_port = remember(ws, "The API now listens on port 9090", days_ago=200)
    remember(ws, "The billing service uses Kafka for invoices", days_ago=210)
    remember(ws, "Kafka retention is set to seven days", days_ago=205)
    routine = [
        remember(
            ws,
            f"Routine note {n}: reviewed pull request {100 + n} about "
            f"{TOPICS[n % len(TOPICS)]}.",
            days_ago=190 + n,
        )
        for n in range(30)
    ]
    report = dream.run(ws, budget=100)
    made = proposals(ws)
    assert len(made) <= 5, [(p.kind, p.reason) for p in made]
    assert report.held_back == 0
    superseded = {c.target for p in made for c in p.links if c.type == "SUPERSEDES"}
    assert superseded == {old_dup, old_port}
    assert not superseded & set(routine)
    [tier] = proposals(ws, "tier")
    tiered = set(tier.changed_memories())
    assert set(routine) <= tiered
    assert new_dup not in superseded
    assert new_port not in superseded


def test_routine_events_of_one_project_are_not_linked(ws):
    # Twelve of sixteen proposals on a store of routine notes were links
    # between them ("both tagged project:shop, strong neighbours").
    for n, topic in enumerate(["CI", "the login page", "billing", "search"] * 3):
        remember(
            ws,
            f"Reviewed PR {100 + 7 * n} about {topic}",
            days_ago=40 - 3 * n,
            tags=("project:shop",),
        )
    remember(ws, "The shop's checkout uses Stripe", days_ago=2, tags=("project:shop",))
    dream.run(ws, budget=50)
    linked = [
        p
        for p in proposals(ws, "link")
        if all(
            engine.show(ws.store(), e.id).memory.body.startswith("Reviewed PR")
            for e in p.memories
        )
    ]
    assert linked == []


def test_a_cycle_writes_at_most_twenty_the_surest_first_and_says_so(ws):
    for n in range(MAX_PROPOSALS + 5):
        remember(ws, f"Service {n} keeps its logs in bucket {n}", days_ago=3)
        remember(ws, f"service {n} keeps its logs in bucket {n}.", days_ago=2)
    remember(ws, "Standup is every Monday at nine", days_ago=2)
    report = dream.run(ws, budget=500)
    assert sum(report.proposed.values()) == MAX_PROPOSALS
    assert report.held_back == 6  # 5 duplicates and the recurrence
    assert report.proposed == {"duplicate": MAX_PROPOSALS}  # the surest
    later = dream.run(ws, budget=500)
    assert later.proposed == {"duplicate": 5, "recurrence": 1}
    assert later.held_back == 0


def test_the_review_lists_the_surest_first(ws):
    remember(ws, "The staging database is Postgres 15.", days_ago=3)
    remember(ws, "the staging database is postgres 15", days_ago=2)
    remember(ws, "Standup is every Monday at nine", days_ago=2)
    remember(ws, "The checkout service uses Stripe", days_ago=2)
    remember(ws, "Stripe webhooks retry for three days", days_ago=1)
    remember(ws, "A hackathon theme we tried once", days_ago=400)
    dream.run(ws, budget=50)
    views = dream.review(ws)
    kinds = [v.proposal.kind for v in views]
    assert sorted(kinds) == ["duplicate", "link", "recurrence", "tier"]
    confidences = [v.proposal.confidence for v in views]
    assert confidences == sorted(confidences, reverse=True)
    assert kinds[0] == "duplicate"


def test_copies_of_one_note_are_one_proposal_per_copy_not_per_pair(ws):
    # Eight spellings of one rule were 28 proposals, one per pair.
    spellings = [
        "Always pin dependencies",
        "always pin dependencies",
        "Always pin dependencies.",
        "ALWAYS PIN DEPENDENCIES",
        "always pin dependencies!",
        "Always pin dependencies!!",
        "always pin Dependencies",
        "Always Pin Dependencies",
    ]
    ids = [remember(ws, text, days_ago=10 - n) for n, text in enumerate(spellings)]
    dream.run(ws, budget=50)
    made = proposals(ws, "duplicate")
    assert len(made) == 7
    hidden = [link.target for p in made for link in p.links]
    assert sorted(hidden) == sorted(ids[:-1])
    assert {link.source for p in made for link in p.links} == {ids[-1]}
    again = dream.run(ws, budget=50, now=NOW + timedelta(days=1))
    assert again.proposed == {}


def test_a_copy_to_be_hidden_gets_no_other_proposal(ws):
    # A note kept three times, and one that contradicts it: one
    # contradiction (with the copy kept), not one per copy.
    copies = [
        remember(ws, text, days_ago=1 + n / 100)
        for n, text in enumerate(
            [
                "The deploy job is green on main",
                "the deploy job is green on main.",
                "The deploy job is green on main!",
            ]
        )
    ]
    remember(ws, "The deploy job is not green on main", days_ago=1.05)
    dream.run(ws, budget=50)
    hidden = {link.target for p in proposals(ws, "duplicate") for link in p.links}
    assert len(hidden) == 2
    [contradiction] = proposals(ws, "contradiction")
    [kept] = set(copies) - hidden
    assert kept in {e.id for e in contradiction.memories}


def test_a_pair_waiting_one_way_is_not_proposed_the_other_way():
    # B -> A waits; A gained a title, so a cycle found A -> B (the titled copy
    # is kept): accepting both would hide both copies.
    from ctx.hub.dream.selection import one_per_copy

    a, b = engine.MemoryId("01J" + "A" * 23), engine.MemoryId("01J" + "B" * 23)

    def dup(source, target):
        return engine.make_proposal(
            kind="duplicate",
            branch="main",
            memories={source: "1" * 40, target: "2" * 40},
            links=[engine.LinkChange(source=source, type="SUPERSEDES", target=target)],
            confidence=1.0,
            reason="the same text",
            now=NOW,
        )

    assert one_per_copy([dup(a, b)], [dup(b, a)]) == []
    assert one_per_copy([dup(a, b)], []) == [dup(a, b)]


def test_a_cycle_told_to_write_more_writes_more(ws):
    # Benchmarks accept every proposal at once: the cycle's most is theirs.
    from ctx.hub.config import HubConfig
    from ctx.hub.dream.cycle import run_cycle
    from ctx.hub.retrieval.index.projection import Projection

    for n in range(MAX_PROPOSALS + 2):
        remember(ws, f"Disk {n} fills up in a week", days_ago=3)
        remember(ws, f"disk {n} fills up in a week.", days_ago=2)
    store = ws.store()
    projection = Projection.for_store(store, HubConfig(embedder={"kind": "hashing"}))
    report = run_cycle(store, projection, "main", budget=500, now=NOW, most=100)
    assert report.proposed == {"duplicate": MAX_PROPOSALS + 2}
    assert report.held_back == 0


def test_tier_changes_come_as_one_proposal_reviewed_memory_by_memory(ws):
    old = [
        remember(ws, f"Hackathon idea {word}", days_ago=400)
        for word in ("kites", "llamas", "origami")
    ]
    dream.run(ws, budget=50)
    [tier] = proposals(ws, "tier")
    assert set(tier.changed_memories()) == set(old)
    assert tier.reason.startswith("3 memories to tier:off-context")
    kept, dropped, accepted = sorted(old)
    with pytest.raises(engine.InvalidInputError, match="changes no memory"):
        dream.reject(ws, [tier.id], memories=["01J000000000"])
    declined = dream.reject(
        ws, [tier.id], memories=[dropped[-8:]], reason="still useful"
    )
    assert declined.inside() == (
        f"Declined 1 memory of proposal {tier.id}; it waits on for its other "
        "2 memories."
    )
    [waiting] = dream.review(ws)
    assert waiting.proposal.declined == (dropped,)
    assert any(line.endswith("(declined)") for line in waiting.changes)
    taken = dream.accept(ws, [tier.id], memories=[accepted])
    assert taken.inside() == (
        f"Accepted proposal {tier.id} for 1 memory; its other 2 memories declined."
    )
    [view] = dream.review(ws, status="accepted")
    assert set(view.proposal.declined) == {kept, dropped}
    dream.merge(ws)
    tags = {mid: engine.show(ws.store(), mid).memory.tags for mid in old}
    assert tags[accepted] == ("tier:off-context",)
    assert tags[kept] == tags[dropped] == ()
    # A declined change is never proposed again.
    again = dream.run(ws, budget=50, now=NOW + timedelta(days=2))
    assert again.proposed == {}


# -- accept all is safe -----------------------------------------------------------


def test_a_merge_that_hides_many_memories_asks_to_be_confirmed(ws):
    for n in range(5):
        remember(ws, f"Queue {n} drains every minute", days_ago=3)
        remember(ws, f"queue {n} drains every minute.", days_ago=2)
    dream.run(ws, budget=50)
    views = dream.review(ws)
    hides = {mid for v in views for mid in v.hides}
    assert len(hides) == 5
    dream.accept(ws, [])
    before = ws.store().branch_tip("main")
    with pytest.raises(engine.InvalidInputError) as caught:
        dream.merge(ws)
    assert str(caught.value) == "The merge would hide 5 memories from recall."
    assert ws.store().branch_tip("main") == before
    assert len(dream.review(ws, status="accepted")) == len(views)
    # The same count for agents: refused without yes, then in the result.
    caller = Caller(agent="claude-code")
    with pytest.raises(engine.InvalidInputError, match="hide 5 memories"):
        invoke(ws, caller, CALLS["dream_merge"], {})
    result = invoke(ws, caller, CALLS["dream_merge"], {"yes": True})
    assert set(result.hidden) == hides
    assert ws.store().branch_tip("main") != before


def test_memories_moved_off_context_count_as_hidden_and_ask_to_be_confirmed(ws):
    # Recall leaves archived memories out: accepting a tier proposal of
    # five old facts once emptied recall without a word.
    old = [
        remember(ws, f"Region {word} stores customer data", days_ago=400)
        for word in ("north", "south", "east", "west", "central")
    ]
    dream.run(ws, budget=50)
    [view] = dream.review(ws)
    assert view.proposal.kind == "tier"
    assert set(view.hides) == set(old)
    assert "(recall leaves them out)" in view.proposal.reason
    dream.reject(ws, [view.proposal.id], memories=[old[0]])
    [view] = dream.review(ws)
    assert set(view.hides) == set(old[1:])  # a declined one stays
    dream.accept(ws, [])
    before = ws.store().branch_tip("main")
    with pytest.raises(engine.InvalidInputError) as caught:
        dream.merge(ws)
    assert str(caught.value) == "The merge would hide 4 memories from recall."
    assert ws.store().branch_tip("main") == before
    result = dream.merge(ws, yes=True)
    assert set(result.hidden) == set(old[1:])
    [merged] = engine.log(ws.store(), limit=1)
    assert merged.commit.summary == (
        "Merge 1 accepted proposal from dream/main into main"
    )


def test_an_old_event_written_lately_stays_in_context(ws):
    # Age is how long ago a memory was last written, not the date it is
    # about: a note of last year's incident written today is fresh.
    fresh = remember(
        ws, "The 2025 outage came from a full disk", days_ago=400, written=0
    )
    stale = remember(ws, "A hackathon theme we tried once", days_ago=400)
    dream.run(ws, budget=50)
    [tier] = proposals(ws, "tier")
    assert tier.changed_memories() == (stale,)
    assert fresh not in tier.changed_memories()


def test_a_memory_another_proposal_is_about_stays_in_context(ws):
    # The copy a duplicate keeps, or a memory a link would join, is in use.
    old = remember(ws, "The staging database is Postgres 15.", days_ago=402)
    kept = remember(ws, "the staging database is postgres 15", days_ago=401)
    alone = remember(ws, "A hackathon theme we tried once", days_ago=400)
    dream.run(ws, budget=50)
    [dup] = proposals(ws, "duplicate")
    assert {e.id for e in dup.memories} == {old, kept}
    [tier] = proposals(ws, "tier")
    assert tier.changed_memories() == (alone,)


# -- the reference tier -------------------------------------------------------------


def _recalled_and_used(ws, mid, times, *, used):
    for n in range(times):
        when = NOW - timedelta(hours=n + 1)
        rid = new_recall_id(when)
        log_recall(
            ws.path,
            LoggedRecall(
                id=rid,
                agent="claude-code",
                branch="main",
                query="python environments",
                now=when,
                budget=None,
                hits=(LoggedHit(mid, 10),),
            ),
        )
        if used:
            record_feedback(ws.path, rid, [mid], NOW)


def test_the_reference_tier_comes_from_what_agents_said_they_used(ws):
    from ctx.hub.session_state import editing

    used = remember(ws, "Use uv for Python environments", days_ago=2)
    shown = remember(ws, "The office plant needs water on Fridays", days_ago=2)
    for session in ("s1", "s2", "s3", "s4", "s5", "s6"):
        with editing(ws.path, session) as state:
            state.note_shown([used, shown])
    _recalled_and_used(ws, used, LIMITS.reference_uses, used=True)
    _recalled_and_used(ws, shown, 5, used=False)
    dream.run(ws, budget=50)
    [tier] = proposals(ws, "tier")
    assert [(t.memory, t.tag) for t in tier.tags] == [(used, "tier:reference")]
    assert tier.reason == (
        "tier:reference: agents said they used it 3 times (feedback, answers citing it)"
    )
