"""Redaction: a text removed from every version, reflog and object (issue 33)."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from dulwich.objects import Blob
from redaction_checks import killed_after

from ctx.engine import (
    ConflictError,
    Draft,
    Intent,
    InvalidInputError,
    RemoteError,
    Store,
    add_remote,
    clone,
    create_branch,
    edit,
    fetch,
    import_files,
    live_catalog,
    op_log,
    pack_loose,
    pull,
    push,
    remember,
    show,
    undo,
)
from ctx.engine._redaction_record import (
    list_redactions,
    record_tip,
    replaced_records,
    snapshot,
)
from ctx.engine._redaction_sync import sync_redactions
from ctx.engine.redaction import redact_memory, redact_text

SECRET = "hunter2-very-secret-token"


def git(store: Store, *args: str) -> str:
    assert store.path is not None
    return subprocess.run(
        ["git", "--git-dir", str(store.path / "git"), *args],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def all_objects_text(store: Store) -> str:
    """Every object's content, as stock git reads it, with the full log."""
    listing = git(
        store, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)"
    )
    contents = subprocess.run(
        ["git", "--git-dir", str(store.path / "git"), "cat-file", "--batch"],
        input=listing.encode(),
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8", "replace")
    return contents + git(store, "log", "-p", "--all", "--reflog")


def logs_text(store: Store) -> str:
    assert store.path is not None
    return "".join(
        p.read_text() for p in (store.path / "git" / "logs").rglob("*") if p.is_file()
    )


def build(store: Store, intent: Intent) -> str:
    """A history where the secret is written, edited, branched and undone."""
    first = remember(store, Draft(text="plain fact about the build"), intent)
    leak = remember(
        store, Draft(text=f"the token is {SECRET}", title=f"token {SECRET}"), intent
    )
    assert first.commit is not None
    (leak_id,) = leak.ids
    edit(store, leak_id, intent, body=f"the token {SECRET} was rotated")
    create_branch(store, "side")
    remember(store, Draft(text="later fact on main"), intent)
    remember(store, Draft(text=f"an undone {SECRET}"), intent, branch="side")
    undo(store, "side")
    return leak_id


def test_redact_text_removes_it_from_every_object_and_log(disk_store, intent):
    build(disk_store, intent)
    before_ops = len(op_log(disk_store))
    assert SECRET in all_objects_text(disk_store)

    result = redact_text(disk_store, SECRET, reason="leaked key")

    assert SECRET not in all_objects_text(disk_store)
    assert SECRET not in logs_text(disk_store)
    assert result.commits >= 3
    assert result.blobs >= 2
    assert result.pruned > 0
    assert set(result.branches) == {"main", "side"}
    # The rewritten commits keep their trailers and say what was removed.
    log = git(disk_store, "log", "--format=%B", "main")
    assert "Ctx-Agent: tester" in log
    assert "Ctx-Redacted: a text of 25 characters (leaked key)" in log
    assert "[REDACTED]" in git(disk_store, "log", "-p", "main")
    # The operation log keeps every move, and undo still works on it.
    assert len(op_log(disk_store)) == before_ops
    undo(disk_store, "side")  # the redo of the undone, redacted write
    assert SECRET not in all_objects_text(disk_store)
    assert git(disk_store, "fsck", "--no-dangling").strip() == ""
    (record,) = list_redactions(disk_store)
    assert record.id == result.redaction
    assert record.reason == "leaked key"
    assert SECRET not in str(record)


def test_a_second_redaction_of_one_memory_leaves_neither_text(disk_store, intent):
    remember(
        disk_store, Draft(text="one SECRETONE and two SECRETTWO in a note"), intent
    )
    redact_text(disk_store, "SECRETONE")
    redact_text(disk_store, "SECRETTWO")
    held = all_objects_text(disk_store)
    assert "SECRETONE" not in held
    assert "SECRETTWO" not in held


@pytest.mark.parametrize("text", ["body", "fact", "created_at", "2026-01-05"])
def test_redact_text_leaves_how_memories_are_written(disk_store, intent, text):
    # Redacting "body" once replaced the field's name in every memory, and
    # "fact" every memory's kind: the store no longer read its memories.
    kept = remember(disk_store, Draft(text="plain note about the build"), intent)
    said = remember(
        disk_store,
        Draft(text=f"this note says {text} once", tags=(f"topic:{text}",)),
        intent,
    )
    redact_text(disk_store, text)
    shown = show(disk_store, said.ids[0]).memory
    assert shown.body == "this note says [REDACTED] once"
    assert shown.tags == ("topic:[REDACTED]",)
    assert shown.kind == "fact"
    assert show(disk_store, kept.ids[0]).memory.body == "plain note about the build"
    catalog = live_catalog(disk_store, disk_store.branch_tip("main"))
    assert set(catalog.entries) == {kept.ids[0], said.ids[0]}
    assert git(disk_store, "fsck", "--no-dangling").strip() == ""


@pytest.mark.parametrize("text", ["section", "file", "version"])
def test_redact_text_leaves_nested_field_names(disk_store, intent, text):
    # A memory's source is an object: its field names were replaced, and
    # the file no longer read as a memory.
    [mid] = import_files(
        disk_store, [("notes.md", b"# Deploys\nWe deploy on Fridays.\n")], intent
    ).ids
    remember(disk_store, Draft(text=f"a {text} to remove"), intent)
    redact_text(disk_store, text)
    catalog = live_catalog(disk_store, disk_store.branch_tip("main"))
    assert mid in catalog.entries
    shown = show(disk_store, mid).memory
    assert shown.source is not None
    assert "We deploy on Fridays" in shown.body


def test_redact_text_reaches_every_meta_value_and_leaves_conflicts_whole(
    disk_store, intent
):
    # A meta value under a name such as "source" or "id" was left; and a
    # stored conflict's field list, path and branch names were redacted.
    from ctx.engine import create_branch, list_conflicts, merge

    [mid] = remember(
        disk_store,
        Draft(text="the queue", meta={"source": "pw Hunter2pw", "id": "Hunter2pw"}),
        intent,
    ).ids
    create_branch(disk_store, "side")
    edit(disk_store, mid, intent, body="the queue is Postgres, body text")
    edit(disk_store, mid, intent, body="the queue is Redis, body text", branch="side")
    assert merge(disk_store, "side", intent).conflicts
    redact_text(disk_store, "Hunter2pw")
    assert "Hunter2pw" not in all_objects_text(disk_store)
    redact_text(disk_store, "body")
    [conflict] = list_conflicts(disk_store, "main")
    assert conflict.fields == ("body",)
    assert conflict.theirs is not None
    assert conflict.theirs.body == "the queue is Redis, [REDACTED] text"
    assert git(disk_store, "fsck", "--no-dangling").strip() == ""


def test_a_tag_redacted_whole_stays_a_tag(disk_store, intent):
    # "proj:SEKRETzz" became "[REDACTED]", which no edit took again.
    [mid] = remember(
        disk_store, Draft(text="n", tags=("proj:SEKRETzz", "area:ops")), intent
    ).ids
    redact_text(disk_store, "proj:SEKRETzz")
    assert show(disk_store, mid).memory.tags == ("area:ops", "redacted:[REDACTED]")
    edit(disk_store, mid, intent, body="edited after the redaction")
    # Nor do two tags become one, the one already redacted among them.
    remember(disk_store, Draft(text="m", tags=("k:[REDACTED]", "k:QQQQzz")), intent)
    with pytest.raises(InvalidInputError, match="two of a memory's tags one"):
        redact_text(disk_store, "QQQQzz")


def test_redact_text_refuses_to_make_two_meta_names_one(disk_store, intent):
    remember(
        disk_store, Draft(text="n", meta={"k_AAAA": "one", "k_BBBB": "two"}), intent
    )
    redact_text(disk_store, "AAAA")
    before = git(disk_store, "rev-parse", "main")
    with pytest.raises(InvalidInputError, match="two of a memory's meta names one"):
        redact_text(disk_store, "BBBB")
    assert git(disk_store, "rev-parse", "main") == before


def test_redact_text_takes_an_id_shaped_secret_out_of_a_memory(disk_store, intent):
    # A secret that is 40 hex digits (an old GitHub token's shape) was left
    # wherever it filled a string, as if it were a commit's id.
    token = "3f9a1c0b" * 5
    [mid] = remember(disk_store, Draft(text=token, title=token), intent).ids
    redact_text(disk_store, token)
    assert token not in all_objects_text(disk_store)
    assert show(disk_store, mid).memory.body == "[REDACTED]"


def test_redact_memory_removes_every_version(disk_store, intent):
    memory_id = build(disk_store, intent)
    pack_loose(disk_store)  # the old versions in a pack, which must be rewritten
    assert list((disk_store.path / "git" / "objects" / "pack").glob("*.pack"))
    result = redact_memory(disk_store, memory_id, reason="pasted key")
    text = all_objects_text(disk_store)
    assert "the token is" not in text
    assert "was rotated" not in text
    assert f"Ctx-Redacted: memory {memory_id} (pasted key)" in text
    assert result.what == f"memory {memory_id}"


def test_nothing_to_redact_changes_nothing(disk_store, intent):
    build(disk_store, intent)
    tip = disk_store.branch_tip("main")
    with pytest.raises(InvalidInputError, match="No version in the history"):
        redact_text(disk_store, "no such text anywhere")
    with pytest.raises(InvalidInputError, match="at least 4 characters"):
        redact_text(disk_store, "ab")
    assert disk_store.branch_tip("main") == tip
    assert list_redactions(disk_store) == []


_KILL = killed_after(
    "ctx.engine.redaction",
    """
    from ctx.engine import Store
    store = Store.open(root, clock=lambda: datetime.now(UTC))
    patched.redact_text(store, target, reason="crash test")
    """,
)


@pytest.mark.parametrize(
    ("step", "redacted"),
    [
        ("write_pending", True),
        ("ctx.engine._redaction_finish:move_refs", True),
        ("ctx.engine._redaction_finish:rewrite_reflogs", True),
        ("ctx.engine._redaction_finish:prune", True),
        ("store_record", False),
    ],
)
def test_a_redaction_killed_at_any_step_is_finished_or_absent(
    tmp_path, clock, intent, step, redacted
):
    store = Store.init(tmp_path / ".ctx", clock=clock)
    build(store, intent)
    tips = {b: store.branch_tip(b) for b in store.branches()}
    store.close()
    done = subprocess.run(
        [sys.executable, "-c", _KILL, str(tmp_path / ".ctx"), step, SECRET],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 9, done.stderr

    reopened = Store.open(tmp_path / ".ctx", clock=clock)
    try:
        assert not (Path(tmp_path / ".ctx") / "redaction.pending").exists()
        after = {b: reopened.branch_tip(b) for b in reopened.branches()}
        if redacted:
            assert SECRET not in all_objects_text(reopened)
            assert all(after[b] != tips[b] for b in tips)
            assert len(list_redactions(reopened)) == 1
        else:
            assert after == tips
            assert list_redactions(reopened) == []
        assert git(reopened, "fsck").count("missing") == 0
        remember(reopened, Draft(text="written after the crash"), intent)
    finally:
        reopened.close()


# -- two clones and a bare git remote ---------------------------------------


def bare_log(path) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(path), "log", "-p", "--all"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


@pytest.fixture
def team(tmp_path, clock, intent):
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    a = Store.init(tmp_path / "a", clock=clock)
    remember(a, Draft(text="the deploy runs on fridays"), intent)
    remember(a, Draft(text=f"the key is {SECRET}"), intent)
    remember(a, Draft(text="a later, harmless fact"), intent)
    add_remote(a, "origin", str(bare))
    push(a, "origin")
    clone(tmp_path / "b", str(bare), clock=clock)
    clone(tmp_path / "c", str(bare), clock=clock)
    b = Store.open(tmp_path / "b", clock=clock)
    c = Store.open(tmp_path / "c", clock=clock)
    yield a, b, c, bare
    for store in (a, b, c):
        store.close()


def written_then_undone(a, b, text, intent):
    """a writes ``text`` and pushes; b (if given) pulls it; a undoes it, pushes that."""
    remember(a, Draft(text=text), intent)
    push(a, "origin")
    if b is not None:
        pull(b, intent, "origin")
    undo(a)
    push(a, "origin", force=True)


def test_redact_push_with_lease_pull_on_the_other(team, intent):
    a, b, c, bare = team
    result = redact_text(a, SECRET, reason="leaked")
    assert result.remotes == {"origin": ("main",)}
    assert SECRET not in all_objects_text(a)

    # The remote still holds the old history: a plain push says so, and a
    # fetch refuses to bring it back, naming the redaction.
    with pytest.raises(ConflictError, match="origin still holds the history"):
        push(a, "origin")
    with pytest.raises(RemoteError, match=f"redaction {result.redaction}"):
        fetch(a, "origin")
    assert SECRET not in all_objects_text(a)

    push(a, "origin", force_with_lease=True)
    assert SECRET not in bare_log(bare)

    pulled = pull(b, intent, "origin")
    assert [r.redaction for r in pulled.redactions] == [result.redaction]
    assert SECRET not in all_objects_text(b)
    assert b.branch_tip("main") == a.branch_tip("main")
    assert [r.id for r in list_redactions(b)] == [result.redaction]

    # A clone made before the redaction cannot push the secret back...
    remember(c, Draft(text="c writes something new"), intent)
    for force in (False, True):
        with pytest.raises(ConflictError, match=r"redaction .* removed"):
            push(c, "origin", force=force)
    assert SECRET not in bare_log(bare)
    # ...unless it says so explicitly.
    push(c, "origin", force=True, ignore_redactions=True)
    assert SECRET in bare_log(bare)


def test_two_redactions_then_one_push_with_lease(team, intent):
    # The lease is the branch as last fetched, which each redaction rewrote
    # in turn: the remote's tip is its pre-image two rewrites back.
    a, b, _, bare = team
    redact_text(a, SECRET, reason="leaked")
    redact_text(a, "harmless", reason="second thoughts")
    push(a, "origin", force_with_lease=True)
    log = bare_log(bare)
    assert SECRET not in log
    assert "harmless" not in log
    pulled = pull(b, intent, "origin")
    assert len(pulled.redactions) == 2
    assert b.branch_tip("main") == a.branch_tip("main")


def test_two_redactions_of_one_version_travel_and_converge(team, intent):
    # The second redaction rewrites a version the first made: that version
    # (which still holds the second text) leaves the record, here and on
    # the remote, and clones converge whether they pulled in between or not.
    a, b, c, bare = team
    first = redact_text(a, SECRET, reason="leaked")
    push(a, "origin", force_with_lease=True)
    pull(b, intent, "origin")  # b applies the first now, c not at all
    second = redact_text(a, "the key is", reason="the rest of it")
    assert second.blobs == 1
    push(a, "origin", force_with_lease=True)
    for text in (SECRET, "the key is"):
        assert text not in all_objects_text(a)
        assert text not in bare_log(bare)
    for store, applied in ((b, [second]), (c, [first, second])):
        pulled = pull(store, intent, "origin")
        assert [r.redaction for r in pulled.redactions] == [
            r.redaction for r in applied
        ]
        assert store.branch_tip("main") == a.branch_tip("main")
        held = all_objects_text(store)
        assert SECRET not in held
        assert "the key is" not in held
        assert [r.id for r in list_redactions(store)] == [
            first.redaction,
            second.redaction,
        ]
    assert record_tip(b) == record_tip(a)  # taken as it is: b held all it replaced
    assert git(c, "fsck", "--no-dangling").strip() == ""


def test_redactions_apply_in_the_order_they_chain_not_by_their_clocks(team, intent):
    # b's clock is behind a's: b's redaction of what a's made is older by
    # its time, yet c (which missed both) must apply a's first.
    a, b, c, _ = team
    first = redact_text(a, SECRET)
    push(a, "origin", force_with_lease=True)
    pull(b, intent, "origin")
    b.clock = lambda: datetime(2026, 1, 1, tzinfo=UTC)  # before a's
    second = redact_text(b, "the key is")
    push(b, "origin", force_with_lease=True)
    assert [r.id for r in list_redactions(b)] == [second.redaction, first.redaction]
    pulled = pull(c, intent, "origin")
    assert [r.redaction for r in pulled.redactions] == [
        first.redaction,
        second.redaction,
    ]
    assert c.branch_tip("main") == b.branch_tip("main")
    held = all_objects_text(c)
    assert SECRET not in held
    assert "the key is" not in held


def test_a_record_fetched_behind_leaves_no_removed_version(team, intent):
    # a's second redaction is not pushed yet when b, which knew only the
    # first, pushes a third: b's record still names the version a's second
    # rewrote (with its text). a fetches that record to join it; the version
    # must not stay in a's objects.
    a, b, _, _ = team
    redact_text(a, SECRET)
    push(a, "origin", force_with_lease=True)
    pull(b, intent, "origin")
    redact_text(a, "the key is")
    redact_text(b, "harmless")
    push(b, "origin", force_with_lease=True)
    with pytest.raises(ConflictError, match="nothing was pushed"):
        push(a, "origin", force_with_lease=True)  # a must pull b's first
    assert len(list_redactions(a)) == 3  # the record joined all the same
    assert "the key is" not in all_objects_text(a)


def test_a_record_behind_in_part_leaves_a_version_a_branch_holds(
    team, intent, tmp_path
):
    # a fetched the second redaction from origin but has not applied it: its
    # main still holds the version the second rewrote. Another remote's
    # record (the first redaction and a third, never the second) names that
    # version too; fetching it must not delete it from under main.
    a, b, c, _ = team
    other = tmp_path / "other.git"
    subprocess.run(["git", "init", "-q", "--bare", str(other)], check=True)
    add_remote(a, "other", str(other))
    push(a, "other")
    redact_text(a, SECRET)
    push(a, "origin", force_with_lease=True)
    push(a, "other", force_with_lease=True)
    pull(b, intent, "origin")
    add_remote(c, "other", str(other))
    pull(c, intent, "other")
    redact_text(b, "the key is")
    push(b, "origin", force_with_lease=True)
    remember(c, Draft(text="c's own note of zzz-secret-2"), intent)
    redact_text(c, "zzz-secret-2")
    push(c, "other", force_with_lease=True)
    fetch(a, "origin")
    fetch(a, "other")
    assert git(a, "fsck", "--no-dangling").strip() == ""
    pull(a, intent, "origin")
    assert git(a, "fsck", "--no-dangling").strip() == ""
    assert "the key is" not in all_objects_text(a)


def test_the_record_carries_no_version_only_this_store_held(team, intent):
    # A memory on a branch never pushed: its redacted version would publish
    # the rest of it with the record. A pushed one's travels, as other
    # clones need it.
    a, b, _, bare = team
    create_branch(a, "private")
    remember(
        a,
        Draft(text=f"PRIVATE-PLAN of the launch, key {SECRET}"),
        intent,
        branch="private",
    )
    redact_text(a, SECRET)
    push(a, "origin", force_with_lease=True)
    assert "PRIVATE-PLAN" not in bare_log(bare)
    assert "PRIVATE-PLAN" in git(a, "log", "-p", "private")
    assert "the key is [REDACTED]" in bare_log(bare)
    pull(b, intent, "origin")
    assert SECRET not in all_objects_text(b)
    assert b.branch_tip("main") == a.branch_tip("main")


def test_a_published_version_rewritten_again_leaves_the_record(
    disk_store, intent, tmp_path
):
    # Redacted without a remote, a private memory's version is published (a
    # store without remotes cannot tell); a second redaction of it, once
    # the store has a remote, must replace it in the record all the same.
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    remember(disk_store, Draft(text="public fact"), intent)
    create_branch(disk_store, "private")
    text = f"a plan, key {SECRET} and code zz-second-code-zz"
    remember(disk_store, Draft(text=text), intent, branch="private")
    redact_text(disk_store, SECRET)
    add_remote(disk_store, "origin", str(bare))
    push(disk_store, "origin")
    redact_text(disk_store, "zz-second-code-zz")
    push(disk_store, "origin")
    assert "zz-second-code-zz" not in all_objects_text(disk_store)
    assert "zz-second-code-zz" not in bare_log(bare)


def test_a_pushed_write_undone_before_the_redaction_leaves_the_clones(team, intent):
    # b fetched the write before a undid it: a's history reaches it only by
    # its reflog, so b never fetches its rewritten commit. The record
    # carries the redacted version and the commit's message without the
    # text; b's push must not bring it back.
    a, b, _, bare = team
    written_then_undone(a, b, "undone, the pin is zz-pin-4242-zz", intent)
    redact_text(a, "zz-pin-4242-zz")
    push(a, "origin", force_with_lease=True)
    pull(b, intent, "origin")
    assert "zz-pin-4242-zz" not in all_objects_text(b)
    remember(b, Draft(text="b writes on"), intent)
    push(b, "origin")
    assert "zz-pin-4242-zz" not in bare_log(bare)


def test_a_carried_message_redacted_again_wins_the_join(team, intent):
    # redact_text, then redact_memory: the second takes "tokenword
    # [REDACTED]" out of the carried message, which keeps one marker. b,
    # which joined the first record, must take the second's message.
    a, b, _, bare = team
    written = remember(
        a, Draft(text="the body zz-body-zz", title=f"tokenword {SECRET}"), intent
    )
    push(a, "origin")
    pull(b, intent, "origin")
    undo(a)  # b holds the write, a's branches no more: the message travels
    push(a, "origin", force=True)
    redact_text(a, SECRET)
    push(a, "origin", force_with_lease=True)
    pull(b, intent, "origin")
    redact_memory(a, written.ids[0])
    push(a, "origin", force_with_lease=True)
    pull(b, intent, "origin")
    remember(b, Draft(text="b writes on"), intent)
    push(b, "origin")
    for held in (all_objects_text(b), bare_log(bare), logs_text(b)):
        assert "tokenword" not in held
        assert SECRET not in held


def test_clones_converge_when_a_redaction_changes_only_messages(team, intent):
    # The second text is only in the undone write's message (its reason):
    # b ends on a's commit, and nothing of either text stays in b.
    a, b, _, _ = team
    why = Intent(agent="tester", intent="observe", reason="ticket zz-tkt-77-zz")
    written_then_undone(a, b, "undone, the pin is zz-pin-4242-zz", why)
    redact_text(a, "zz-pin-4242-zz")
    redact_text(a, "zz-tkt-77-zz")
    push(a, "origin", force_with_lease=True)
    pull(b, intent, "origin")
    for held in (all_objects_text(b), logs_text(b)):
        assert "zz-pin-4242-zz" not in held
        assert "zz-tkt-77-zz" not in held
    ours = set(git(a, "rev-list", "--all", "--reflog").split())
    assert git(b, "rev-parse", "main").strip() in ours


def test_a_record_replaced_on_a_clone_leaves_nothing_it_carried(team, intent):
    # c holds only the record of the first redaction (it never fetched the
    # write); the second replaces the record's version and message, whose
    # old ones held the second text.
    a, _, c, _ = team
    written_then_undone(a, None, "undone zz-one-zz and zz-two-zz", intent)
    redact_text(a, "zz-one-zz")
    push(a, "origin", force_with_lease=True)
    pull(c, intent, "origin")
    redact_text(a, "zz-two-zz")
    push(a, "origin", force_with_lease=True)
    pull(c, intent, "origin")
    assert "zz-two-zz" not in all_objects_text(c)


def test_a_clone_s_reflog_loses_the_text_of_its_own_write(team, intent):
    a, b, _, _ = team
    remember(b, Draft(text="b's pin is zz-pin-4242-zz"), intent)
    push(b, "origin")
    pull(a, intent, "origin")
    redact_text(a, "zz-pin-4242-zz")
    push(a, "origin", force_with_lease=True)
    pull(b, intent, "origin")
    assert "zz-pin" not in all_objects_text(b)
    assert "zz-pin" not in logs_text(b)


def test_a_record_moving_on_a_fetch_keeps_what_a_fetched_branch_holds(team, intent):
    # The first redaction's version of an undone write is pushed again on a
    # branch of its own; the second redaction (main only pushed) replaces
    # it in the record. c's fetch moves its record before its tracking
    # refs: the version that branch needs must stay.
    a, _, c, _ = team
    written_then_undone(a, None, "undone zz-one-zz and zz-two-zz", intent)
    redact_text(a, "zz-one-zz")
    push(a, "origin", force_with_lease=True)
    pull(c, intent, "origin")
    undone = [
        sha
        for sha in git(a, "rev-list", "--reflog").split()
        if "[REDACTED]" in git(a, "log", "-1", "--format=%B", sha)
    ]
    create_branch(a, "rescue", undone[0])
    push(a, "origin", ["rescue"])
    redact_text(a, "zz-two-zz")
    push(a, "origin", force_with_lease=True)
    fetch(c, "origin")
    assert git(c, "fsck", "--no-dangling").strip() == ""


def test_a_redaction_first_applies_those_fetched_here(team, intent):
    # b fetched a's redaction but did not pull; its own redaction must start
    # from a's, or the message it records for the write holds a's text.
    a, b, _, _ = team
    remember(a, Draft(text="body", title="t zz-one-zz zz-two-zz"), intent)
    push(a, "origin")
    pull(b, intent, "origin")
    redact_text(a, "zz-one-zz")
    push(a, "origin", force_with_lease=True)
    fetch(b, "origin")
    redact_text(b, "zz-two-zz")
    push(b, "origin", force_with_lease=True)
    pull(a, intent, "origin")
    for store in (a, b):
        assert "zz-one-zz" not in all_objects_text(store)
        assert "zz-two-zz" not in all_objects_text(store)


def test_a_clone_s_undo_line_loses_the_text(team, intent):
    a, b, _, _ = team
    remember(b, Draft(text="the pin", title="pin zz-pin-4242-zz"), intent)
    push(b, "origin")
    pull(a, intent, "origin")
    undo(b)
    push(b, "origin", force=True)
    redact_text(a, "zz-pin-4242-zz")
    push(a, "origin", force_with_lease=True)
    pull(b, intent, "origin")
    assert "zz-pin" not in logs_text(b)
    assert "zz-pin" not in all_objects_text(b)


def test_redacting_what_a_fetched_redaction_removed_applies_that_one(team, intent):
    # b fetched a's redaction of the text, not applied: b's own redaction of
    # the same text applies a's and answers with it (the hub then scrubs
    # the files beside the history as for any redaction).
    a, b, _, _ = team
    first = redact_text(a, SECRET)
    push(a, "origin", force_with_lease=True)
    fetch(b, "origin")
    tip = b.branch_tip("main")
    with pytest.raises(InvalidInputError, match="No version in the history"):
        redact_text(b, "a text no version ever held")
    assert b.branch_tip("main") == tip  # the fetched one is not applied for it
    result = redact_text(b, SECRET)
    assert result.redaction == first.redaction
    assert result.branches == ("main",)
    assert SECRET not in all_objects_text(b)


def test_a_branch_only_fetched_loses_the_text_and_can_be_pushed(team, intent):
    # b has side only as origin/side. a's redaction of it reaches b by the
    # fetch alone (which moves origin/side): what b held of it goes too. And
    # b's own redaction of it can replace the remote's side with lease.
    a, b, c, bare = team
    create_branch(a, "side")
    remember(
        a, Draft(text="side zz-side-zz note, pin zz-pin-9-zz"), intent, branch="side"
    )
    push(a, "origin", ["side"])
    pull(b, intent, "origin")
    pull(c, intent, "origin")
    redact_text(a, "zz-side-zz")
    push(a, "origin", ["side"], force_with_lease=True)
    pulled = pull(b, intent, "origin")
    assert [r.redaction for r in pulled.redactions] != []
    assert "zz-side-zz" not in all_objects_text(b)
    redact_text(b, "zz-pin-9-zz")
    push(b, "origin", ["side"], force_with_lease=True)
    assert "zz-pin-9-zz" not in bare_log(bare)
    for _ in range(2):
        pull(c, intent, "origin")
    assert "zz-pin-9-zz" not in all_objects_text(c)
    assert "zz-side-zz" not in all_objects_text(c)


def test_a_reason_is_one_line(disk_store, intent):
    remember(disk_store, Draft(text=f"the key is {SECRET}"), intent)
    with pytest.raises(InvalidInputError, match="reason is one line"):
        redact_text(disk_store, SECRET, reason="two\nlines")
    assert list_redactions(disk_store) == []


def test_a_record_that_claims_to_replace_this_one_is_joined_not_taken(
    disk_store, intent, tmp_path, clock
):
    remember(disk_store, Draft(text=f"the key is {SECRET}"), intent)
    redact_text(disk_store, SECRET)
    (record,) = list_redactions(disk_store)
    # Another record, without this one's redaction, that says it replaced
    # this store's record: taking it would forget the redaction.
    ours = record_tip(disk_store)
    assert ours is not None
    other = Blob.from_string(b"{}")
    entries = {b"other.json": (0o100644, other.id)}
    theirs, made = snapshot(disk_store, entries, {ours}, "Redaction of nothing")
    disk_store.add_objects([other, *made])
    assert sync_redactions(disk_store, theirs.id) is True
    assert list_redactions(disk_store) == [record]
    assert record_tip(disk_store) not in (ours, theirs.id)
    # A store without a record does not take that claim on trust either:
    # the record it names would never be fetched from the remote it is on.
    fresh = Store.init(tmp_path / "fresh", clock=clock)
    fresh.add_objects([other, *made])
    assert sync_redactions(fresh, theirs.id) is True
    assert replaced_records(fresh) == {theirs.id}
    fresh.close()


def test_a_lease_the_remote_broke_is_refused(team, intent):
    a, b, _, _ = team
    remember(b, Draft(text="b's newer work"), intent)
    push(b, "origin")
    redact_text(a, SECRET)
    with pytest.raises(ConflictError, match="moved main since it was last fetched"):
        push(a, "origin", force_with_lease=True)
