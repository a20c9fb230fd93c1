import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctx.engine import (
    Draft,
    Intent,
    InvalidInputError,
    NotFoundError,
    Store,
    blame_lines,
    create_branch,
    edit,
    forget,
    link,
    list_conflicts,
    list_links,
    list_memories,
    merge,
    remember,
    resolve,
    show,
    status,
    tag,
)

MERGER = Intent(agent="reviewer", intent="merge")


def _fork(store, intent, text="base line\nsecond line", **kw):
    mid = remember(store, Draft(text=text, tags=("a:1",), **kw), intent).ids[0]
    create_branch(store, "agent")
    return mid


def test_fast_forward_and_up_to_date(store, intent):
    _fork(store, intent)
    new = remember(store, Draft(text="agent fact"), intent, branch="agent").ids[0]
    result = merge(store, "agent", MERGER)
    assert result.fast_forward
    assert show(store, new).memory.body == "agent fact"
    again = merge(store, "agent", MERGER)
    assert again.up_to_date
    assert again.commit is None
    remember(store, Draft(text="main moves on"), intent)
    tip = store.branch_tip("main")
    behind = merge(store, "agent", MERGER)  # agent is now an ancestor of main
    assert behind.up_to_date
    assert store.branch_tip("main") == tip


def test_disjoint_changes_merge_with_two_parents(store, intent):
    mid = _fork(store, intent)
    theirs = remember(store, Draft(text="theirs"), intent, branch="agent").ids[0]
    ours = remember(store, Draft(text="ours"), intent).ids[0]
    result = merge(store, "agent", MERGER)
    assert result.commit is not None
    assert len(result.commit.parents) == 2
    bodies = sorted(r.memory.body for r in list_memories(store))
    assert bodies == sorted(["base line\nsecond line", "theirs", "ours"])
    assert {theirs, ours, mid} == {r.memory.id for r in list_memories(store)}


def test_field_wise_and_line_wise_merge(store, intent):
    mid = _fork(store, intent, text="one\ntwo\nthree")
    edit(store, mid, intent, body="one, ours\ntwo\nthree", add_tags=["b:2"])
    edit(
        store,
        mid,
        intent,
        title="Their title",
        body="one\ntwo\nthree, theirs",
        add_tags=["c:3"],
        remove_tags=["a:1"],
        branch="agent",
    )
    result = merge(store, "agent", MERGER)
    assert result.merged == (mid,)
    assert not result.conflicts
    m = show(store, mid).memory
    assert m.body == "one, ours\ntwo\nthree, theirs"
    assert m.title == "Their title"
    assert m.tags == ("b:2", "c:3")  # union, and a:1 stays removed


def test_identical_changes_collapse(store, intent):
    mid = _fork(store, intent)
    edit(store, mid, intent, body="same")
    edit(store, mid, intent, body="same", branch="agent")
    result = merge(store, "agent", MERGER)
    assert not result.conflicts
    assert show(store, mid).memory.body == "same"


def test_a_real_clash_is_stored_as_a_conflict_and_resolved(store, intent):
    mid = _fork(store, intent, text="one line")
    edit(store, mid, intent, body="ours says A")
    edit(store, mid, intent, body="theirs says B", branch="agent")
    result = merge(store, "agent", MERGER)
    assert [c.id for c in result.conflicts] == [mid]
    assert result.commit is not None
    assert result.commit.summary == "Merge agent into main (1 conflict)"
    conflict = list_conflicts(store)[0]
    assert conflict.fields == ("body",)
    assert conflict.ours.body == "ours says A"
    assert conflict.theirs.body == "theirs says B"
    assert show(store, mid).memory.body == "ours says A"
    assert [c.id for c in status(store).conflicts] == [mid]
    resolve(store, mid, MERGER, take="theirs")
    assert show(store, mid).memory.body == "theirs says B"
    assert list_conflicts(store) == []
    with pytest.raises(NotFoundError):
        resolve(store, mid, MERGER, take="ours")


@pytest.mark.parametrize(
    ("take", "body", "expected"),
    [
        ("ours", None, "ours says A"),
        (
            "both",
            None,
            "ours (main):\nours says A\n\n-----\n\ntheirs (agent):\ntheirs says B",
        ),
        (None, "settled", "settled"),
    ],
)
def test_resolve_choices(store, intent, take, body, expected):
    mid = _fork(store, intent, text="one line")
    edit(store, mid, intent, body="ours says A")
    edit(store, mid, intent, body="theirs says B", branch="agent")
    merge(store, "agent", MERGER)
    resolve(store, mid, MERGER, take=take, body=body)
    assert show(store, mid).memory.body == expected


@pytest.mark.parametrize(
    ("take", "expected"),
    [
        ("ours", "fixed by hand"),
        ("both", "ours (main):\nfixed by hand\n\n-----\n\ntheirs (agent):\ntheirs B"),
    ],
)
def test_resolve_keeps_an_edit_made_since_the_merge(store, intent, take, expected):
    mid = _fork(store, intent, text="one line")
    edit(store, mid, intent, body="ours A")
    edit(store, mid, intent, body="theirs B", branch="agent")
    merge(store, "agent", MERGER)
    edit(store, mid, intent, body="fixed by hand")
    resolve(store, mid, MERGER, take=take)
    assert show(store, mid).memory.body == expected


@pytest.mark.parametrize("take", ["theirs", "both"])
def test_blame_credits_the_side_that_wrote_a_settled_line(store, intent, take):
    """Not the resolver: `resolve --take theirs` wrote none of their lines."""
    mid = _fork(store, intent, text="one line")
    bob, carol = Intent(agent="bob", intent="edit"), Intent(agent="carol", intent="e")
    edit(store, mid, bob, body="bob's line", branch="agent")
    edit(store, mid, carol, body="carol's line")
    merge(store, "agent", MERGER)
    resolve(store, mid, MERGER, take=take)
    authors = {b.line: b.commit.author for b in blame_lines(store, mid)}
    assert authors["bob's line"] == "bob"
    if take == "both":
        assert authors["carol's line"] == "carol"
        assert authors["theirs (agent):"] == "reviewer"


def test_resolve_needs_exactly_one_choice(store, intent):
    with pytest.raises(InvalidInputError):
        resolve(store, "01ARZ3NDEKTSV4RRFFQ69G5FAV", MERGER)
    with pytest.raises(InvalidInputError):
        resolve(store, "01ARZ3NDEKTSV4RRFFQ69G5FAV", MERGER, take="mine")


def test_delete_against_modify_keeps_the_modified_version(store, intent):
    mid = _fork(store, intent)
    forget(store, mid, intent)
    edit(store, mid, intent, body="still useful", branch="agent")
    result = merge(store, "agent", MERGER)
    assert result.conflicts[0].fields == ("deleted",)
    assert show(store, mid).memory.body == "still useful"  # nothing lost yet
    other = remember(store, Draft(text="Another note"), intent).ids[0]
    link(store, other, mid, "RELATES_TO", intent)  # links to it and from it
    link(store, mid, other, "RELATES_TO", intent)
    resolve(store, mid, MERGER, take="ours")  # ours deleted it: so it is
    with pytest.raises(NotFoundError):
        show(store, mid)
    assert not list_conflicts(store)
    assert not list_links(store, other)  # none left pointing at nothing


@pytest.mark.parametrize(
    ("prefer", "expected"), [("ours", "A"), ("theirs", "B"), ("newer", "B")]
)
def test_prefer_settles_clashes(store, intent, prefer, expected):
    mid = _fork(store, intent, text="one line")
    edit(store, mid, intent, body="A")
    edit(store, mid, intent, body="B", branch="agent")  # later on the clock
    result = merge(store, "agent", MERGER, prefer=prefer)
    assert result.settled == (mid,)
    assert not result.conflicts
    assert show(store, mid).memory.body == expected


def test_prefer_confident(store, intent):
    mid = _fork(store, intent, text="one line")
    edit(store, mid, Intent(agent="a", intent="refine", confidence=0.9), body="sure")
    edit(
        store,
        mid,
        Intent(agent="b", intent="refine", confidence=0.3),
        body="guess",
        branch="agent",
    )
    merge(store, "agent", MERGER, prefer="confident")
    assert show(store, mid).memory.body == "sure"


def test_links_union(store, intent):
    a = _fork(store, intent)
    b = remember(store, Draft(text="b"), intent).ids[0]
    c = remember(store, Draft(text="c"), intent).ids[0]
    create_branch(store, "side")
    link(store, a, b, "DEPENDS_ON", intent)
    link(store, a, c, "RELATES_TO", intent, branch="side")
    merge(store, "side", MERGER)
    assert sorted(r.type for r in list_links(store, a, direction="out")) == [
        "DEPENDS_ON",
        "RELATES_TO",
    ]


def test_unknown_source_and_preference(store, intent):
    with pytest.raises(NotFoundError):
        merge(store, "nope", MERGER)
    with pytest.raises(InvalidInputError):
        merge(store, "main", MERGER, prefer="mine")


FIELDS = st.fixed_dictionaries(
    {},
    optional={
        "body": st.sampled_from(
            ["alpha", "beta", "gamma\ndelta", "base line\nsecond line"]
        ),
        "title": st.sampled_from(["T1", "T2"]),
        "add_tags": st.lists(st.sampled_from(["x:1", "y:2", "z:3"]), max_size=2),
        "remove_tags": st.lists(st.sampled_from(["a:1"]), max_size=1),
    },
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(ours=FIELDS, theirs=FIELDS, delete=st.sampled_from([None, "ours", "theirs"]))
def test_merge_never_loses_either_side(clock, intent, ours, theirs, delete):
    store = Store.memory(clock=clock)
    mid = _fork(store, intent)
    if delete == "ours":
        forget(store, mid, intent)
    elif ours:
        edit(store, mid, intent, **ours)
    if delete == "theirs":
        forget(store, mid, intent, branch="agent")
    elif theirs:
        edit(store, mid, intent, branch="agent", **theirs)
    our_version = {r.memory.id: r.memory for r in list_memories(store, "main")}.get(mid)
    their_version = {r.memory.id: r.memory for r in list_memories(store, "agent")}.get(
        mid
    )
    result = merge(store, "agent", MERGER)
    after = {r.memory.id: r.memory for r in list_memories(store, "main")}.get(mid)
    conflicts = {c.id: c for c in list_conflicts(store)}
    if mid in conflicts:
        c = conflicts[mid]
        assert c.ours == our_version
        assert c.theirs == their_version
        assert after is not None
    elif our_version is not None and their_version is not None:
        assert after is not None
        if "body" in theirs and "body" not in ours:
            assert after.body == their_version.body
        if "body" in ours and "body" not in theirs:
            assert after.body == our_version.body
        for tag in set(ours.get("add_tags", [])) | set(theirs.get("add_tags", [])):
            assert tag in after.tags
    elif our_version is None and their_version is None:
        assert after is None
    assert result.commit is not None or result.up_to_date


def test_a_view_changed_on_both_sides_keeps_both(store, intent):
    from ctx.engine import create_view, get_view, list_views

    create_view(store, "api", "tag:project:api", 100, intent)
    create_branch(store, "agent")
    create_view(store, "api", "kind:decision", 100, intent, replace=True)
    create_view(store, "api", "kind:fact", 200, intent, replace=True, branch="agent")
    merge(store, "agent", MERGER)
    assert get_view(store, "api").where == "kind:decision"
    names = [v.name for v in list_views(store)]
    assert len(names) == 2
    theirs = next(n for n in names if n != "api")
    assert theirs.startswith("api.theirs-")
    assert get_view(store, theirs).where == "kind:fact"


def test_a_preview_tells_the_conflicts_and_writes_nothing(store, intent):
    mid = _fork(store, intent, text="one line")
    edit(store, mid, intent, body="ours says A")
    edit(store, mid, intent, body="theirs says B", branch="agent")
    tip = store.branch_tip("main")
    result = merge(store, "agent", MERGER, preview=True)
    assert [c.id for c in result.conflicts] == [mid]
    assert result.commit is None
    assert store.branch_tip("main") == tip
    assert list_conflicts(store) == []


def test_a_preview_of_a_fast_forward_leaves_the_branch(store, intent):
    mid = _fork(store, intent, text="one line")
    edit(store, mid, intent, body="theirs says B", branch="agent")
    tip = store.branch_tip("main")
    result = merge(store, "agent", MERGER, preview=True)
    assert result.fast_forward
    assert result.commit is not None
    assert result.commit.id == store.branch_tip("agent")
    assert store.branch_tip("main") == tip


def test_a_preview_takes_no_lock_so_a_read_only_store_shows_it(
    store, intent, monkeypatch
):
    # The lens's review of a store on a read-only mount was blank: the
    # preview took the write lock, whose file cannot be opened there.
    import errno

    mid = _fork(store, intent, text="one line")
    edit(store, mid, intent, body="ours says A")
    edit(store, mid, intent, body="theirs says B", branch="agent")

    def read_only():
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(store, "locked", read_only)
    result = merge(store, "agent", MERGER, preview=True)
    assert [c.id for c in result.conflicts] == [mid]
    with pytest.raises(OSError, match="Read-only"):
        merge(store, "agent", MERGER)


def test_opposite_supersedes_joined_by_a_merge_hide_neither(store, intent):
    from ctx.engine import supersede

    tuesday = remember(store, Draft(text="Deploy window is Tuesday."), intent).ids[0]
    thursday = remember(store, Draft(text="Deploy window is Thursday."), intent)
    thursday_id = thursday.ids[0]
    create_branch(store, "agent/x")
    create_branch(store, "agent/y")
    supersede(store, tuesday, thursday_id, intent, branch="agent/x")
    supersede(store, thursday_id, tuesday, intent, branch="agent/y")
    merge(store, "agent/x", MERGER)
    assert {m.memory.body for m in list_memories(store)} == {
        "Deploy window is Thursday."
    }
    merge(store, "agent/y", MERGER)  # a cycle: nothing says which one stands
    assert {m.memory.body for m in list_memories(store)} == {
        "Deploy window is Tuesday.",
        "Deploy window is Thursday.",
    }
    # A third that supersedes one of the cycle hides that one.
    later = remember(store, Draft(text="Deploy window is Friday."), intent).ids[0]
    supersede(store, tuesday, later, intent)
    assert {m.memory.body for m in list_memories(store)} == {
        "Deploy window is Thursday.",
        "Deploy window is Friday.",
    }


def test_superseded_leaves_out_cycles_whatever_their_shape():
    from ctx.engine.adjacency import Adjacency

    links = [
        ("A", "B"),  # A and B supersede each other: a cycle ...
        ("B", "A"),
        ("C", "A"),  # ... A of which C, outside it, supersedes
        ("D", "D"),  # a memory that supersedes itself
        ("E", "F"),  # a cycle of three, one of them superseded from outside
        ("F", "G"),
        ("G", "E"),
        ("H", "E"),
    ]
    chain = [(f"v{i + 1}", f"v{i}") for i in range(5_000)]  # versions, linear
    edges = [(a, "SUPERSEDES", b) for a, b in links + chain]
    hidden = Adjacency("tree", edges).superseded()
    assert hidden == {"A", "E"} | {f"v{i}" for i in range(5_000)}


def test_a_memory_a_merge_left_with_two_tiers_is_still_edited(store, intent):
    """The tier rule is for new memories and `ctx tag`; a merge unites tags."""
    mid = _fork(store, intent, text="one line")
    tag(store, mid, ["tier:reference"], intent)
    tag(store, mid, ["tier:pinned"], intent, branch="agent")
    merge(store, "agent", MERGER)
    assert {"tier:reference", "tier:pinned"} <= set(show(store, mid).memory.tags)
    edit(store, mid, intent, body="edited after the merge")
    assert show(store, mid).memory.body == "edited after the merge"
