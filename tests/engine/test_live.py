from ctx.engine import (
    Draft,
    changed_blobs,
    context_of,
    gc,
    is_memory_path,
    is_pinned,
    link,
    live_catalog,
    read_memories,
    read_memory,
    remember,
    remember_many,
)
from ctx.engine.layout import (
    conflict_path,
    id_from_conflict_path,
    link_path,
    memory_path,
    view_path,
)


def _tree(store, commit):
    tree = store.snapshot(commit).tree
    return None if tree is None else tree.decode("ascii")


def test_changed_blobs_lists_memory_blobs_added_and_removed(store, intent):
    first = remember(store, Draft(text="the first"), intent)
    before = _tree(store, first.commit.id)
    second = remember(store, Draft(text="the second"), intent)
    a, b = first.ids[0], second.ids[0]
    link(store, b, a, "RELATES_TO", intent)  # a link file is no memory
    after = _tree(store, store.branch_tip("main"))
    entries = live_catalog(store, store.branch_tip("main")).entries
    assert changed_blobs(store, before, after) == ([entries[b].blob], [])
    assert changed_blobs(store, after, before) == ([], [entries[b].blob])
    everything, nothing = changed_blobs(store, None, after)
    assert sorted(everything) == sorted(e.blob for e in entries.values())
    assert nothing == []
    assert changed_blobs(store, after, after) == ([], [])


def test_changed_blobs_from_a_tree_that_is_gone_counts_everything_new(store, intent):
    done = remember(store, Draft(text="kept"), intent)
    after = _tree(store, done.commit.id)
    gone = "0" * 40
    assert changed_blobs(store, gone, after) == changed_blobs(store, None, after)


def test_read_memory_reads_one_blob(store, intent):
    done = remember(store, Draft(text="read me", context="notes"), intent)
    entry = live_catalog(store, done.commit.id).entries[done.ids[0]]
    memory = read_memory(store, entry.path, entry.blob)
    assert (memory.id, memory.body) == (done.ids[0], "read me")


def test_layout_predicates_agree_with_the_paths_the_engine_builds():
    mid = "01JABCDEFGHJKMNPQRSTVWXYZ0"
    assert is_memory_path(memory_path("notes", mid))
    assert is_memory_path("pinned/style/use-black.json")
    assert is_memory_path("sessions/s1/summary.json")
    assert not is_memory_path(link_path(mid, "RELATES_TO", mid))
    assert not is_memory_path(conflict_path(mid))
    assert not is_memory_path(view_path("daily"))
    assert not is_memory_path("pinned/style/notes.txt")
    assert is_pinned("pinned/style/use-black.json")
    assert not is_pinned("primed/pinned/x.json")
    assert context_of(memory_path("notes", mid)) == "notes"
    assert id_from_conflict_path(conflict_path(mid)) == mid
    assert id_from_conflict_path(memory_path("notes", mid)) is None


def test_a_big_import_leaves_the_catalog_of_its_tree_saved(
    disk_store, intent, monkeypatch
):
    from ctx.engine import Store, remember_many
    from ctx.engine.adjacency import SAVE_AFTER

    def imported(first):
        drafts = [
            Draft(text=f"note {first + i}", title="t" if i % 2 else None, pinned=i == 3)
            for i in range(SAVE_AFTER)
        ]
        remember_many(disk_store, drafts, intent)
        tip = disk_store.branch_tip("main")
        # A new process reads it from the file: no tree is diffed, no blob read.
        fresh = Store.open(disk_store.path, clock=disk_store.clock)
        with monkeypatch.context() as patched:
            patched.setattr("ctx.engine.catalog._catch_up", None)
            recorded = live_catalog(fresh, tip)
        fresh.close()
        # And it is the catalog a catch-up from the trees makes.
        (disk_store.path / "cache" / "catalog.msgpack").unlink()
        rebuilt = Store.open(disk_store.path, clock=disk_store.clock)
        assert live_catalog(rebuilt, tip) == recorded
        rebuilt.close()
        return recorded

    assert len(imported(0).entries) == SAVE_AFTER  # into a new store
    remember(disk_store, Draft(text="one more", context="ops"), intent)
    live_catalog(disk_store, disk_store.branch_tip("main"))  # kept at that tree
    assert len(imported(SAVE_AFTER).entries) == 2 * SAVE_AFTER + 1


def test_memories_read_at_once_are_those_read_one_by_one(disk_store, intent):
    drafts = [Draft(text=f"an imported memory, number {i}") for i in range(40)]
    remember_many(disk_store, drafts, intent, summary="import")  # one pack
    remember(disk_store, Draft(text="a loose one, after the pack"), intent)
    gc(disk_store)  # packed again: blobs may be deltas now
    remember(disk_store, Draft(text="loose again"), intent)
    entries = live_catalog(disk_store, disk_store.branch_tip("main")).entries
    pairs = [(e.path, e.blob) for e in entries.values()]
    read = read_memories(disk_store, pairs)
    assert len(read) == 42
    assert read == [read_memory(disk_store, *pair) for pair in pairs]
