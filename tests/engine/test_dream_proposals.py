"""Dream's proposals in git: own branch, one commit each, review, merge, undo."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ctx import engine
from ctx.engine import (
    Draft,
    InvalidInputError,
    LinkChange,
    NotFoundError,
    TagChange,
    make_proposal,
)

T0 = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)

WHO = engine.Intent(agent="tester", intent="observe")
REVIEWER = engine.Intent(agent="alice", intent="review")


def remember(store, text, **kw):
    return engine.remember(store, Draft(text=text, when=T0, **kw), WHO).ids[0]


def blob_of(store, mid, branch="main"):
    snap = store.snapshot(store.branch_tip(branch))
    return snap.find(mid).blob


def supersede_proposal(store, new, old, **kw):
    return make_proposal(
        kind="duplicate",
        branch="main",
        memories={new: blob_of(store, new), old: blob_of(store, old)},
        links=[LinkChange(source=new, type="SUPERSEDES", target=old)],
        confidence=0.95,
        reason=kw.pop("reason", "same words"),
        now=T0,
    )


@pytest.fixture
def pair(store):
    old = remember(store, "The deploy runs on Fridays")
    new = remember(store, "The deploy runs on Fridays.")
    return old, new


def test_a_proposal_is_one_commit_on_the_dream_branch_only(store, pair):
    old, new = pair
    main_before = store.branch_tip("main")
    result = engine.propose(store, supersede_proposal(store, new, old))
    assert store.branch_tip("main") == main_before
    info = store.commit(result.commit)
    assert info.author == "dream"
    assert info.intent.intent == "dream"
    assert info.intent.confidence == pytest.approx(0.95)
    assert info.intent.reason == "same words"
    assert info.parents == (main_before,)
    dream = store.snapshot(store.branch_tip("dream/main"))
    assert [(r.source, r.type, r.target) for r in dream.links_from(new)] == [
        (new, "SUPERSEDES", old)
    ]
    [listed] = engine.list_proposals(store, "main")
    assert listed.id == result.id
    assert listed.status == "proposed"


def test_the_same_proposal_is_never_written_twice(store, pair):
    old, new = pair
    first = engine.propose(store, supersede_proposal(store, new, old))
    again = engine.propose(store, supersede_proposal(store, new, old, reason="other"))
    assert again.id == first.id
    assert again.commit is None
    engine.review_proposals(store, "main", [first.id], "rejected", REVIEWER)
    assert engine.propose(store, supersede_proposal(store, new, old)).commit is None
    [listed] = engine.list_proposals(store, "main")
    assert listed.status == "rejected"


def test_accepted_proposals_merge_through_a_merge_commit_and_undo(store, pair):
    old, new = pair
    tag = make_proposal(
        kind="recurrence",
        branch="main",
        memories={old: blob_of(store, old)},
        tags=[TagChange(memory=old, tag="recurs:weekly")],
        confidence=0.8,
        reason="every Friday",
        now=T0,
    )
    dup = engine.propose(store, supersede_proposal(store, new, old))
    rec = engine.propose(store, tag)
    engine.review_proposals(store, "main", [dup.id[:6]], "accepted", REVIEWER)
    before = store.branch_tip("main")
    result = engine.merge_accepted(store, "main", REVIEWER, lambda p, m: None)
    assert result.merged == (dup.id,)
    merge_commit = result.merge.commit
    assert len(merge_commit.parents) == 2
    snap = store.snapshot(store.branch_tip("main"))
    assert [r.type for r in snap.links_from(new)] == ["SUPERSEDES"]
    assert "recurs:weekly" not in snap.find(old).memory.tags  # not accepted
    statuses = {p.id: p.status for p in engine.list_proposals(store, "main")}
    assert statuses == {dup.id: "merged", rec.id: "proposed"}
    with pytest.raises(InvalidInputError, match="was merged already"):
        engine.review_proposals(store, "main", [dup.id], "accepted", REVIEWER)
    engine.undo(store, "main")
    assert store.branch_tip("main") == before
    # Taken back: it may be accepted and merged again.
    engine.review_proposals(store, "main", [dup.id], "accepted", REVIEWER)
    again = engine.merge_accepted(store, "main", REVIEWER, lambda p, m: None)
    assert again.merged == (dup.id,)
    snap = store.snapshot(store.branch_tip("main"))
    assert [r.type for r in snap.links_from(new)] == ["SUPERSEDES"]


def test_a_changed_memory_is_rechecked_before_merge(store, pair):
    old, new = pair
    proposal = engine.propose(store, supersede_proposal(store, new, old))
    engine.review_proposals(store, "main", [], "accepted", REVIEWER)
    engine.edit(store, new, WHO, body="The deploy moved to Mondays")
    seen = []

    def recheck(p, memories):
        seen.append((p.id, memories[new].body))
        return "the words differ now"

    before = store.branch_tip("main")
    result = engine.merge_accepted(store, "main", REVIEWER, recheck)
    assert seen == [(proposal.id, "The deploy moved to Mondays")]
    assert result.merged == ()
    assert result.stale == ((proposal.id, "the words differ now"),)
    assert store.branch_tip("main") == before
    [listed] = engine.list_proposals(store, "main")
    assert (listed.status, listed.note) == ("stale", "the words differ now")


def test_a_memory_edited_since_is_never_hidden_on_the_proposals_word(store, pair):
    old, new = pair
    proposal = engine.propose(store, supersede_proposal(store, new, old))
    engine.review_proposals(store, "main", [], "accepted", REVIEWER)
    # The one the proposal would hide is edited to the current value.
    engine.edit(store, old, WHO, body="The deploy moved to RabbitMQ days")
    before = store.branch_tip("main")
    result = engine.merge_accepted(store, "main", REVIEWER, lambda p, m: None)
    assert result.merged == ()
    assert result.stale == (
        (
            proposal.id,
            f"memory {old}, which it would hide, was edited since: it may say "
            "the current value now",
        ),
    )
    assert store.branch_tip("main") == before


def test_a_tag_on_the_memory_to_hide_is_no_edit_of_what_it_says(store, pair):
    old, new = pair
    proposal = engine.propose(store, supersede_proposal(store, new, old))
    engine.review_proposals(store, "main", [], "accepted", REVIEWER)
    engine.tag(store, old, ["topic:deploys"], WHO)  # its blob changes, not its words
    result = engine.merge_accepted(store, "main", REVIEWER, lambda p, m: None)
    assert result.merged == (proposal.id,)  # the rules' re-check held


def test_a_proposal_whose_memory_is_gone_goes_stale(store, pair):
    old, new = pair
    engine.propose(store, supersede_proposal(store, new, old))
    engine.review_proposals(store, "main", [], "accepted", REVIEWER)
    engine.forget(store, old, WHO)
    result = engine.merge_accepted(store, "main", REVIEWER, lambda p, m: None)
    assert result.merged == ()
    assert "no longer on the branch" in result.stale[0][1]


def test_bad_reviews_are_refused_and_change_nothing(store, pair):
    old, new = pair
    engine.propose(store, supersede_proposal(store, new, old))
    tip = store.branch_tip("dream/main")
    with pytest.raises(NotFoundError, match="No proposal 'zzzzzz'"):
        engine.review_proposals(store, "main", ["zzzzzz"], "accepted", REVIEWER)
    [proposal] = engine.list_proposals(store, "main")
    with pytest.raises(InvalidInputError, match="give at least 6 of its characters"):
        engine.review_proposals(store, "main", [proposal.id[:1]], "accepted", REVIEWER)
    with pytest.raises(InvalidInputError, match="accepts or rejects"):
        engine.review_proposals(store, "main", [], "maybe", REVIEWER)
    assert store.branch_tip("dream/main") == tip


def test_the_dream_branch_catches_up_with_its_branch(store, pair):
    old, new = pair
    engine.propose(store, supersede_proposal(store, new, old))
    later = remember(store, "Something written after the proposal")
    engine.sync_dream_branch(store, "main")
    dream = store.snapshot(store.branch_tip("dream/main"))
    assert dream.find(later).memory.body == "Something written after the proposal"
    assert len(engine.list_proposals(store, "main")) == 1


def test_a_plain_merge_of_the_dream_branch_is_refused_and_changes_nothing(store, pair):
    old, new = pair
    engine.propose(store, supersede_proposal(store, new, old))
    main_before = store.branch_tip("main")
    with pytest.raises(InvalidInputError, match="holds Dream's proposals"):
        engine.merge(store, "dream/main", REVIEWER, into="main")
    assert store.branch_tip("main") == main_before
    preview = engine.merge(store, "dream/main", REVIEWER, into="main", preview=True)
    assert preview.commit is not None or preview.merged  # what it would do, unwritten
    assert store.branch_tip("main") == main_before
