import pytest

from ctx.engine import (
    Draft,
    InvalidInputError,
    LinkNotFoundError,
    MemoryNotFoundError,
    forget,
    link,
    list_links,
    log,
    remember,
    unlink,
)


@pytest.fixture
def pair(store, intent):
    a = remember(store, Draft(text="a"), intent).ids[0]
    b = remember(store, Draft(text="b"), intent).ids[0]
    return a, b


def test_link_is_one_file_per_typed_edge(store, intent, pair):
    a, b = pair
    result = link(store, a, b, "depends_on", intent)
    assert result.path == f"links/{a[-1]}/{a[-2]}/{a[-3]}/{a}/DEPENDS_ON/{b}"
    out = list_links(store, a, direction="out")
    assert [(r.source, r.type, r.target, r.link.agent) for r in out] == [
        (a, "DEPENDS_ON", b, "tester")
    ]
    assert [r.source for r in list_links(store, b, direction="in")] == [a]
    assert list_links(store, b, direction="out") == []
    assert link(store, a, b, "DEPENDS_ON", intent).commit is None  # idempotent


def test_unlink_and_errors(store, intent, pair):
    a, b = pair
    link(store, a, b, "RELATES_TO", intent)
    unlink(store, a, b, "RELATES_TO", intent)
    assert list_links(store, a) == []
    before = log(store)
    with pytest.raises(LinkNotFoundError):
        unlink(store, a, b, "RELATES_TO", intent)
    with pytest.raises(InvalidInputError, match="cannot link to itself"):
        link(store, a, a, "RELATES_TO", intent)
    with pytest.raises(InvalidInputError, match="Unknown link type"):
        link(store, a, b, "LIKES", intent)
    with pytest.raises(MemoryNotFoundError):
        link(store, a, "01ARZ3NDEKTSV4RRFFQ69G5FAV", "RELATES_TO", intent)
    assert log(store) == before


def test_forget_removes_links_both_ways(store, intent, pair):
    a, b = pair
    c = remember(store, Draft(text="c"), intent).ids[0]
    link(store, a, b, "RELATES_TO", intent)
    link(store, c, a, "DEPENDS_ON", intent)
    forget(store, a, intent)
    with pytest.raises(MemoryNotFoundError):
        list_links(store, a)
    assert list_links(store, b) == []
    assert list_links(store, c) == []
    snap = store.snapshot(store.branch_tip("main"))
    assert list(snap.links()) == []
