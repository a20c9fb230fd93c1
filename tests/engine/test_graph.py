import pytest

from ctx.engine import (
    Draft,
    InvalidInputError,
    MemoryNotFoundError,
    Store,
    link,
    list_memories,
    log,
    remember,
    show,
    undo,
    unlink,
)
from ctx.engine.adjacency import adjacency
from ctx.engine.provenance import expand, related, summarize, supersede, trace
from ctx.engine.tags import count_tags, tag, tier_of, untag


def _ids(store, intent, n):
    return [remember(store, Draft(text=f"memory {i}"), intent).ids[0] for i in range(n)]


def test_summarize_links_sources_and_archives_them(store, intent):
    a, b = _ids(store, intent, 2)
    result = summarize(store, [a, b], "a and b, briefly", intent, archive_sources=True)
    summary = result.id
    assert show(store, summary).memory.kind == "summary"
    assert [r.memory.id for r in expand(store, summary)] == sorted([a, b])
    assert "tier:off-context" in show(store, a).memory.tags
    assert tier_of(show(store, a)) == "off-context"
    assert len(log(store)) == 4  # one commit for the summary, links and tiers
    undo(store)
    with pytest.raises(MemoryNotFoundError):
        show(store, summary)


def test_expand_needs_sources(store, intent):
    (a,) = _ids(store, intent, 1)
    with pytest.raises(InvalidInputError, match="derived from nothing"):
        expand(store, a)


def test_trace_follows_provenance_and_handles_cycles(store, intent):
    a, b, c, d = _ids(store, intent, 4)
    link(store, a, b, "DERIVED_FROM", intent)
    link(store, b, c, "DEPENDS_ON", intent)
    link(store, c, a, "DEPENDS_ON", intent)  # a cycle
    link(store, a, d, "RELATES_TO", intent)  # not provenance
    root = trace(store, a)
    assert root.id == a
    assert [n.id for n in root.children] == [b]
    (nb,) = root.children
    assert nb.via == "DERIVED_FROM"
    (nc,) = nb.children
    assert nc.id == c
    assert [(n.id, n.cycle) for n in nc.children] == [(a, True)]
    assert nc.children[0].children == ()
    back = trace(store, c, reverse=True)
    assert [n.id for n in back.children] == [b]
    assert [n.id for n in trace(store, a, depth=1).children[0].children] == []
    with pytest.raises(InvalidInputError):
        trace(store, a, depth=0)


def test_related_walks_both_directions(store, intent):
    a, b, c, d = _ids(store, intent, 4)
    link(store, a, b, "RELATES_TO", intent)
    link(store, c, b, "DEPENDS_ON", intent)
    link(store, c, d, "CHILD_OF", intent)
    hits = related(store, a, depth=2)
    assert [(h.id, h.distance) for h in hits] == [(b, 1), (c, 2)]
    assert hits[1].direction == "in"
    assert [h.id for h in related(store, a, depth=3)] == [b, c, d]
    assert [h.id for h in related(store, a, depth=3, types=["RELATES_TO"])] == [b]


def test_supersede_hides_the_old_memory(store, intent):
    old, new = _ids(store, intent, 2)
    supersede(store, old, new, intent)
    snap = store.snapshot(store.branch_tip("main"))
    assert adjacency(store, snap).superseded() == {old}
    assert supersede(store, old, new, intent).commit is None
    with pytest.raises(InvalidInputError):
        supersede(store, new, old, intent)
    with pytest.raises(InvalidInputError):
        supersede(store, old, old, intent)
    assert {r.memory.id for r in list_memories(store)} == {new}
    assert {r.memory.id for r in list_memories(store, all=True)} == {old, new}


def test_adjacency_catches_up_and_survives_reopening(disk_store, intent, clock):
    a, b, c = _ids(disk_store, intent, 3)
    link(disk_store, a, b, "RELATES_TO", intent)
    snap = disk_store.snapshot(disk_store.branch_tip("main"))
    assert adjacency(disk_store, snap).incoming(b) == [("RELATES_TO", a)]
    link(disk_store, c, b, "DEPENDS_ON", intent)
    unlink(disk_store, a, b, "RELATES_TO", intent)
    fresh = Store.open(disk_store.path, clock=clock)
    snap = fresh.snapshot(fresh.branch_tip("main"))
    assert adjacency(fresh, snap).incoming(b) == [("DEPENDS_ON", c)]
    (disk_store.path / "cache" / "links.msgpack").write_bytes(b"garbage")
    again = Store.open(disk_store.path, clock=clock)
    assert adjacency(again, snap).incoming(b) == [("DEPENDS_ON", c)]


def test_tags_and_tiers(store, intent):
    a, b = _ids(store, intent, 2)
    tag(store, a, ["project:ctx", "tier:reference"], intent)
    assert tag(store, a, ["project:ctx"], intent).commit is None  # twice: no-op
    tag(store, a, ["tier:working"], intent)
    assert show(store, a).memory.tags == ("project:ctx", "tier:working")
    tag(store, b, ["project:ctx"], intent)
    assert [(t.tag, t.count) for t in count_tags(store)] == [
        ("project:ctx", 2),
        ("tier:working", 1),
    ]
    assert [t.tag for t in count_tags(store, prefix="tier:")] == ["tier:working"]
    untag(store, a, ["tier:working"], intent)
    assert tier_of(show(store, a)) == "working"
    before = log(store)
    with pytest.raises(InvalidInputError, match="Unknown tier"):
        tag(store, a, ["tier:urgent"], intent)
    with pytest.raises(InvalidInputError, match="no tag"):
        untag(store, a, ["tier:working"], intent)
    with pytest.raises(InvalidInputError):
        tag(store, a, ["tier:working", "tier:reference"], intent)
    assert log(store) == before


@pytest.mark.parametrize("saved", ["other-version", "garbage", "truncated"])
def test_a_cached_catalog_it_cannot_use_is_rebuilt(disk_store, intent, clock, saved):
    import msgspec

    from ctx.engine import catalog as module

    ids = _ids(disk_store, intent, 3)
    snap = disk_store.snapshot(disk_store.branch_tip("main"))
    cached = module.catalog(disk_store, snap)
    file = disk_store.path / "cache" / "catalog.msgpack"
    wrong = {}  # a catalog of this tree that lies: it must not be believed
    data = msgspec.msgpack.encode(
        module.Catalog(version=module._VERSION - 1, tree=cached.tree, entries=wrong)
    )
    files = {
        "other-version": data,
        "garbage": b"\x00not msgpack",
        "truncated": data[:9],
    }
    file.parent.mkdir(exist_ok=True)
    file.write_bytes(files[saved])
    fresh = Store.open(disk_store.path, clock=clock)
    found = module.catalog(fresh, fresh.snapshot(fresh.branch_tip("main")))
    assert sorted(found.entries) == sorted(ids)


def test_catalog_follows_edits_moves_and_deletes(disk_store, intent, clock):
    from ctx.engine import edit, forget, prime
    from ctx.engine.catalog import catalog

    a, b = _ids(disk_store, intent, 2)
    prime(disk_store, "# Rule\nBe brief.\n", "guide", intent, file_name="G.md")

    def entries(store):
        snap = store.snapshot(store.branch_tip("main"))
        return {
            k: (v.path.split("/")[0], v.headline)
            for k, v in catalog(store, snap).entries.items()
        }

    first = entries(disk_store)
    assert first[a] == ("memory", "memory 0")
    rule = next(k for k, v in first.items() if v[0] == "primed")
    edit(disk_store, a, intent, title="Renamed")
    forget(disk_store, b, intent)
    prime(
        disk_store, "# Rule\nBe brief.\n", "guide", intent, file_name="G.md", pin=True
    )
    fresh = Store.open(disk_store.path, clock=clock)
    now = entries(fresh)
    assert now == entries(disk_store)
    assert now[a] == ("memory", "Renamed")
    assert b not in now
    assert now[rule] == ("pinned", "Rule")
