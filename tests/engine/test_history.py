import pytest

from ctx.engine import (
    CommitNotFoundError,
    Draft,
    Intent,
    InvalidInputError,
    RefNotFoundError,
    blame,
    blame_lines,
    create_branch,
    edit,
    list_memories,
    log,
    remember,
    resolve_revision,
    show,
    undo,
)


def test_log_is_newest_first_with_intent(store, intent):
    remember(store, Draft(text="one"), intent)
    other = Intent(
        agent="claude", intent="decide", confidence=0.4, reason="second", session="s1"
    )
    remember(store, Draft(text="two"), other)
    entries = log(store)
    assert [e.commit.intent.agent for e in entries] == ["claude", "tester", "ctx"]
    assert entries[0].commit.intent == other
    assert log(store, limit=1) == entries[:1]


def test_log_of_a_memory_and_of_a_path(store, intent):
    a = remember(store, Draft(text="a", context="decisions"), intent).ids[0]
    remember(store, Draft(text="b"), intent)
    edit(store, a, intent, body="a2")
    assert len(log(store, a)) == 2
    assert len(log(store, "memory/decisions")) == 2
    assert len(log(store, "memory/general")) == 1
    with pytest.raises(InvalidInputError):
        log(store, limit=0)


def test_blame_lists_every_touch_and_lines(store, intent):
    mid = remember(store, Draft(text="line one\nline two"), intent).ids[0]
    claude = Intent(agent="claude", intent="refine")
    edit(store, mid, claude, body="line one\nline two, revised\nline three")
    entries = blame(store, mid)
    assert [e.commit.author for e in entries] == ["claude", "tester"]
    lines = blame_lines(store, mid)
    assert [(b.line, b.commit.author) for b in lines] == [
        ("line one", "tester"),
        ("line two, revised", "claude"),
        ("line three", "claude"),
    ]


def test_revisions(store, intent):
    first = resolve_revision(store, "HEAD")
    remember(store, Draft(text="a"), intent)
    second = resolve_revision(store, "main")
    assert resolve_revision(store, "HEAD~1") == first
    assert resolve_revision(store, "main^") == first
    assert resolve_revision(store, second[:8]) == second
    assert resolve_revision(store, second) == second
    for bad in ("nope", "HEAD~5", "0000000", "main^2", "../x"):
        with pytest.raises((CommitNotFoundError, InvalidInputError)):
            resolve_revision(store, bad)


def test_undo_steps_back_and_is_itself_undoable(store, intent):
    mid = remember(store, Draft(text="kept"), intent).ids[0]
    edit(store, mid, intent, body="changed")
    result = undo(store)
    assert show(store, mid).memory.body == "kept"
    assert "Edit" in result.undone
    undo(store)
    assert show(store, mid).memory.body == "changed"


def test_undo_of_branch_creation_is_refused(store, intent):
    create_branch(store, "agent/x")
    with pytest.raises(InvalidInputError, match="no operation to undo"):
        undo(store, "agent/x")
    with pytest.raises(RefNotFoundError):
        undo(store, "missing")


def test_undo_works_on_disk_with_the_reflog(disk_store, intent):
    remember(disk_store, Draft(text="a"), intent)
    remember(disk_store, Draft(text="b"), intent)
    undo(disk_store)
    assert [r.memory.body for r in list_memories(disk_store)] == ["a"]


def test_history_cache_is_rebuilt_when_deleted(disk_store, intent):
    mid = remember(disk_store, Draft(text="a"), intent).ids[0]
    edit(disk_store, mid, intent, body="b")
    expected = log(disk_store, mid)
    cache = disk_store.path / "cache" / "history.jsonl"
    assert cache.exists()
    cache.unlink()
    from ctx.engine import Store

    fresh = Store.open(disk_store.path, clock=disk_store.clock)
    assert log(fresh, mid) == expected


def test_history_cache_survives_a_torn_line(disk_store, intent):
    mid = remember(disk_store, Draft(text="a"), intent).ids[0]
    cache = disk_store.path / "cache" / "history.jsonl"
    with open(cache, "ab") as f:
        f.write(b'["deadbeef", [')  # a writer killed mid-append
    edit(disk_store, mid, intent, body="b")
    from ctx.engine import Store

    fresh = Store.open(disk_store.path, clock=disk_store.clock)
    assert len(log(fresh, mid)) == 2


def test_blame_lines_across_a_merge_credits_the_branch_author(store, intent):
    from ctx.engine import merge

    mid = remember(store, Draft(text="first line"), intent).ids[0]
    create_branch(store, "agent")
    edit(
        store,
        mid,
        Intent(agent="claude", intent="refine"),
        body="first line\nadded by claude",
        branch="agent",
    )
    edit(store, mid, Intent(agent="alice", intent="refine"), add_tags=["status:ok"])
    merge(store, "agent", Intent(agent="reviewer", intent="merge"))
    lines = blame_lines(store, mid)
    assert [(b.line, b.commit.author) for b in lines] == [
        ("first line", "tester"),
        ("added by claude", "claude"),
    ]
    from ctx.engine import MemoryNotFoundError, forget

    forget(store, mid, intent)
    with pytest.raises(MemoryNotFoundError, match="No memory"):
        blame_lines(store, mid)


def test_a_short_log_without_the_cache_diffs_only_what_it_shows(
    disk_store, intent, monkeypatch
):
    from ctx.engine import Store, merge
    from ctx.engine.history import History

    for i in range(6):
        remember(disk_store, Draft(text=f"main note {i}"), intent)
    create_branch(disk_store, "side")
    remember(disk_store, Draft(text="side note"), intent, branch="side")
    remember(disk_store, Draft(text="main after"), intent)
    merge(disk_store, "side", intent, into="main", no_ff=True)
    everything = log(disk_store)
    (disk_store.path / "cache" / "history.jsonl").unlink()
    diffed = []
    real = History._diff

    def counting(self, commit, fetched):
        diffed.append(commit.id)
        return real(self, commit, fetched)

    monkeypatch.setattr(History, "_diff", counting)
    fresh = Store.open(disk_store.path, clock=disk_store.clock)
    assert log(fresh, limit=3) == everything[:3]
    assert len(diffed) == 3
    again = Store.open(disk_store.path, clock=disk_store.clock)
    assert log(again) == everything  # the three recorded, the rest diffed now
    assert len(diffed) == len(everything)
