import pytest

from ctx.engine import (
    CommitNotFoundError,
    Draft,
    Intent,
    InvalidInputError,
    MemoryNotFoundError,
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
    # A path as a shell completes it, and every top folder by its name.
    for path in ("memory", "./memory", "/memory", "memory/"):
        assert len(log(store, path)) == 3, path
    assert log(store, "conflicts") == log(store, "views") == []
    with pytest.raises(InvalidInputError):
        log(store, limit=0)
    unknown = "01" + "A" * 24  # a full id, taken as given: no history is an error
    with pytest.raises(
        MemoryNotFoundError, match=f"No commit touched memory {unknown}"
    ):
        log(store, unknown)


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


def test_a_revision_that_is_no_text_is_unknown(store):
    with pytest.raises(CommitNotFoundError, match="Unknown revision"):
        resolve_revision(store, "\udcff")  # a shell's byte 0xff


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

    def counting(self, commit, fetched, trees):
        diffed.append(commit.id)
        return real(self, commit, fetched, trees)

    monkeypatch.setattr(History, "_diff", counting)
    fresh = Store.open(disk_store.path, clock=disk_store.clock)
    assert log(fresh, limit=3) == everything[:3]
    assert len(diffed) == 3
    again = Store.open(disk_store.path, clock=disk_store.clock)
    assert log(again) == everything  # the three recorded, the rest diffed now
    assert len(diffed) == len(everything)


def _history_with_everything(store, intent):
    """Two contexts, a pinned memory, edits, a removal, a merged branch."""
    from ctx.engine import forget, merge

    a = remember(store, Draft(text="alpha", context="decisions"), intent).ids[0]
    b = remember(store, Draft(text="beta"), intent).ids[0]
    pin = remember(store, Draft(text="pinned rule", pinned=True), intent).ids[0]
    for i in range(4):
        remember(store, Draft(text=f"filler {i}"), intent)
    edit(store, a, intent, body="alpha, second")
    create_branch(store, "side")
    edit(store, b, intent, body="beta on the side", branch="side")
    edit(store, pin, intent, body="pinned rule, revised", branch="side")
    c = remember(store, Draft(text="gamma", context="decisions"), intent).ids[0]
    merge(store, "side", intent, into="main", no_ff=True)
    edit(store, a, intent, body="alpha, third\nwith a line")
    forget(store, c, intent)
    return [a, b, pin, c]


def _queries(ids):
    out = {"log": lambda s: log(s), "log3": lambda s: log(s, limit=3)}
    for target in ("memory/decisions", "memory/dec", "pinned", "memory/general/"):
        out[target] = lambda s, t=target: log(s, t)
    for mid in ids:
        out[mid] = lambda s, m=mid: log(s, m)
        out["blame " + mid] = lambda s, m=mid: blame(s, m)
    for mid in ids[:3]:
        out["lines " + mid] = lambda s, m=mid: blame_lines(s, m)
    return out


def _answers(store, ids):
    return {name: query(store) for name, query in _queries(ids).items()}


def test_history_without_its_cache_answers_as_with_it(disk_store, intent):
    from ctx.engine import Store

    ids = _history_with_everything(disk_store, intent)
    expected = _answers(disk_store, ids)
    cache = disk_store.path / "cache" / "history.jsonl"
    # Each query alone on a fresh store with no cache: the one walk it needs.
    for name, query in _queries(ids).items():
        cache.unlink()
        fresh = Store.open(disk_store.path, clock=disk_store.clock)
        assert query(fresh) == expected[name], name
        fresh.close()
    # And the partial cache one query leaves, read by the next ones.
    cache.unlink()
    fresh = Store.open(disk_store.path, clock=disk_store.clock)
    assert blame(fresh, ids[1]) == expected["blame " + ids[1]]
    fresh.close()
    again = Store.open(disk_store.path, clock=disk_store.clock)
    assert _answers(again, ids) == expected
    again.close()


@pytest.mark.parametrize("cut", [0.3, 0.55, 0.9])
def test_a_rebuild_killed_midway_leaves_a_cache_that_answers_alike(
    disk_store, intent, monkeypatch, cut
):
    from ctx.engine import Store
    from ctx.engine import history as history_module
    from ctx.engine.history import History

    ids = _history_with_everything(disk_store, intent)
    expected = _answers(disk_store, ids)
    cache = disk_store.path / "cache" / "history.jsonl"
    whole = cache.read_bytes()
    cache.unlink()
    # A rebuild that saves every 3 commits dies at its 10th diff...
    monkeypatch.setattr(history_module, "_SAVE_EVERY", 3)
    real = History._diff
    calls = []

    def failing(self, commit, fetched, trees):
        calls.append(commit.id)
        if len(calls) == 10:
            raise OSError("fault injected")
        return real(self, commit, fetched, trees)

    monkeypatch.setattr(History, "_diff", failing)
    dying = Store.open(disk_store.path, clock=disk_store.clock)
    with pytest.raises(OSError, match="fault injected"):
        blame_lines(dying, ids[0])  # a full rebuild
    dying.close()
    monkeypatch.setattr(History, "_diff", real)
    assert cache.read_bytes().count(b"\n") == 9  # three saves kept
    fresh = Store.open(disk_store.path, clock=disk_store.clock)
    assert _answers(fresh, ids) == expected
    fresh.close()
    # ...and a writer killed mid-append leaves a torn last line.
    cache.write_bytes(whole[: int(len(whole) * cut)])
    torn = Store.open(disk_store.path, clock=disk_store.clock)
    assert _answers(torn, ids) == expected
    torn.close()


def test_cold_blame_of_a_memory_edited_many_times_answers_as_with_the_cache(
    disk_store, intent, monkeypatch
):
    """Issue 30: 130 edits, a merged branch that edited it, other memories
    between; the cold walk keeping a single tree still finds every edit."""
    from functools import partial

    from ctx.engine import Store, merge
    from ctx.engine import history as history_module

    mid = remember(disk_store, Draft(text="version 0"), intent).ids[0]
    other = remember(disk_store, Draft(text="other", context="decisions"), intent)
    for i in range(1, 101):
        edit(disk_store, mid, intent, body=f"version {i}\nline two")
        if i % 10 == 0:
            remember(disk_store, Draft(text=f"filler {i}"), intent)
    create_branch(disk_store, "side")
    for i in range(101, 111):
        edit(disk_store, mid, intent, body=f"side {i}\nline two", branch="side")
        edit(disk_store, other.ids[0], intent, body=f"main {i}")
    merge(disk_store, "side", intent, into="main", no_ff=True)
    for i in range(111, 131):
        edit(disk_store, mid, intent, body=f"version {i}\nline two\nline {i}")
    expected = blame(disk_store, mid)
    expected_lines = blame_lines(disk_store, mid)
    assert len(expected) == 131
    assert [b.line for b in expected_lines] == ["version 130", "line two", "line 130"]
    (disk_store.path / "cache" / "history.jsonl").unlink()
    monkeypatch.setattr(history_module, "Trees", partial(history_module.Trees, keep=1))
    cold = Store.open(disk_store.path, clock=disk_store.clock)
    assert blame(cold, mid) == expected
    assert blame_lines(cold, mid) == expected_lines
    cold.close()
