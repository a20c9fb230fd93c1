import pytest

from ctx.engine import (
    ConflictError,
    Draft,
    InvalidInputError,
    RefNotFoundError,
    create_branch,
    delete_branch,
    diff,
    edit,
    forget,
    link,
    list_branches,
    list_memories,
    remember,
    switch_branch,
)
from ctx.engine.reflogs import reflog


def test_branches_are_independent(store, intent):
    remember(store, Draft(text="shared"), intent)
    create_branch(store, "agent/claude")
    remember(store, Draft(text="only claude"), intent, branch="agent/claude")
    assert len(list_memories(store, "main")) == 1
    assert len(list_memories(store, "agent/claude")) == 2
    names = [(b.name, b.current) for b in list_branches(store)]
    assert names == [("agent/claude", False), ("main", True)]


def test_switch_changes_the_default_branch(store, intent):
    create_branch(store, "exp")
    switch_branch(store, "exp")
    remember(store, Draft(text="on exp"), intent)
    assert len(list_memories(store, "exp")) == 1
    assert len(list_memories(store, "main")) == 0
    with pytest.raises(ConflictError):
        delete_branch(store, "exp")


@pytest.mark.parametrize(
    "name",
    [
        "",
        "a b",
        "a..b",
        "x~1",
        "y^",
        "z:",
        "-x",
        "HEAD",
        "@",
        "a/",
        "x.lock",
        "bad\x00",
    ],
)
def test_bad_branch_names_are_refused(store, name):
    with pytest.raises(InvalidInputError):
        create_branch(store, name)
    assert [b.name for b in list_branches(store)] == ["main"]


def test_branch_errors(store, intent):
    created = create_branch(store, "x")
    assert (created.name, created.deleted) == ("x", False)
    assert reflog(store, "x")[-1].message == "ctx branch: created from HEAD"
    with pytest.raises(ConflictError, match="Branch 'x' already exists"):
        create_branch(store, "x")
    with pytest.raises(RefNotFoundError):
        delete_branch(store, "nope")
    with pytest.raises(RefNotFoundError):
        remember(store, Draft(text="t"), intent, branch="nope")
    deleted = delete_branch(store, "x")
    assert (deleted.name, deleted.tip, deleted.deleted) == ("x", created.tip, True)
    assert [b.name for b in list_branches(store)] == ["main"]


@pytest.mark.parametrize("on_disk", [False, True])
def test_a_branch_cannot_be_a_folder_of_another(store, disk_store, on_disk):
    """As in git: 'main' is a file, so no 'main/sub'; 'foo/bar' blocks 'foo'."""
    store = disk_store if on_disk else store
    create_branch(store, "foo/bar")
    cases = (
        ("main/sub", "main"),
        ("foo", "foo/bar"),
        ("Foo", "foo/bar"),
        ("MAIN", "main"),
    )
    for name, other in cases:
        with pytest.raises(InvalidInputError, match=f"beside branch '{other}'") as e:
            create_branch(store, name)
        # A name to take instead, never the one refused.
        example = f" (e.g. {name.replace('/', '-')!r})" if "/" in name else ""
        assert (
            e.value.hint == f"Choose another name{example}, or delete {other!r} first."
        )
    assert [b.name for b in list_branches(store)] == ["foo/bar", "main"]
    # Only what a case-folding file system folds: "ß" is not "ss" there.
    create_branch(store, "straße/x")
    assert create_branch(store, "STRASSE").name == "STRASSE"


def test_a_deleted_branch_s_log_does_not_block_a_new_name(disk_store, intent):
    """Its reflog is a file too; the new branch takes the way (git drops it)."""
    for old, new in (("foo/bar", "foo"), ("zed", "zed/one")):
        create_branch(disk_store, old)
        delete_branch(disk_store, old)
        assert create_branch(disk_store, new).name == new
        remember(disk_store, Draft(text=f"on {new}"), intent, branch=new)
        made, _wrote = reflog(disk_store, new)
        assert made.message.startswith("ctx branch: created")
    names = [b.name for b in list_branches(disk_store)]
    assert names == ["foo", "main", "zed/one"]


def test_diff_reports_memories_and_links(store, intent):
    keep = remember(store, Draft(text="keep"), intent).ids[0]
    change = remember(store, Draft(text="old body"), intent).ids[0]
    gone = remember(store, Draft(text="gone"), intent).ids[0]
    create_branch(store, "b")
    new = remember(store, Draft(text="new"), intent, branch="b").ids[0]
    edit(store, change, intent, body="new body", branch="b")
    forget(store, gone, intent, branch="b")
    link(store, keep, new, "DEPENDS_ON", intent, branch="b")
    result = diff(store, "main", "b")
    assert [m.id for m in result.added] == [new]
    assert [m.id for m in result.removed] == [gone]
    assert [(c.new.id, c.fields) for c in result.changed] == [(change, ("body",))]
    assert "-old body" in result.changed[0].body_diff
    assert "+new body" in result.changed[0].body_diff
    assert [(r.source, r.type, r.target) for r in result.links_added] == [
        (keep, "DEPENDS_ON", new)
    ]
    empty = diff(store, "b", "b")
    assert not (empty.added)
    assert not (empty.removed)
    assert not (empty.changed)
