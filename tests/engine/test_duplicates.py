"""Exact duplicates and upserts (issue 16, "Where agents read")."""

import pytest

from ctx.engine import (
    Draft,
    InvalidInputError,
    import_memories,
    list_memories,
    remember,
    show,
)


def _bodies(store):
    return sorted(r.memory.body for r in list_memories(store))


def test_remember_of_a_live_text_returns_the_existing_id(store, intent):
    first = remember(store, Draft(text="Use UTC  in every\nlog line"), intent)
    again = remember(store, Draft(text=" Use UTC in every log line "), intent)
    assert again.ids == first.ids
    assert again.existing == first.ids
    assert again.commit is None
    assert again.paths == first.paths
    assert _bodies(store) == ["Use UTC  in every\nlog line"]


def test_allow_duplicate_writes_a_second_memory(store, intent):
    first = remember(store, Draft(text="twice"), intent)
    again = remember(store, Draft(text="twice"), intent, allow_duplicate=True)
    assert again.ids != first.ids
    assert again.existing == ()
    assert _bodies(store) == ["twice", "twice"]


def test_a_forgotten_or_other_branch_text_is_no_duplicate(store, intent):
    from ctx.engine import create_branch, forget

    first = remember(store, Draft(text="gone"), intent)
    forget(store, first.ids[0], intent)
    again = remember(store, Draft(text="gone"), intent)
    assert again.ids != first.ids
    assert again.existing == ()
    create_branch(store, "side", "main")
    remember(store, Draft(text="only on side"), intent, branch="side")
    here = remember(store, Draft(text="only on side"), intent)
    assert here.existing == ()


def test_import_skips_lines_already_there(store, intent):
    remember(store, Draft(text="old news"), intent)
    lines = [b'{"text": "old  news"}', b'{"text": "fresh"}', b'{"text": "fresh"}']
    result = import_memories(store, lines, intent)
    assert result.existing == 2
    assert len(result.ids) == 1
    assert _bodies(store) == ["fresh", "old news"]
    again = import_memories(store, lines, intent)
    assert (again.commit, again.ids, again.existing) == (None, (), 3)


def test_upsert_edits_the_memory_of_that_kind_and_title(store, intent):
    first = remember(
        store, Draft(text="Redis", kind="decision", title="Queue backend"), intent
    )
    again = remember(
        store,
        Draft(text="Postgres", kind="decision", title="Queue backend"),
        intent,
        upsert=True,
    )
    assert again.ids == first.ids
    assert again.commit is not None
    assert again.updated == first.ids
    assert show(store, first.ids[0]).memory.body == "Postgres"
    assert _bodies(store) == ["Postgres"]


def test_upsert_adds_when_none_has_that_kind_and_title(store, intent):
    remember(store, Draft(text="Redis", kind="fact", title="Queue backend"), intent)
    added = remember(
        store,
        Draft(text="Kafka", kind="decision", title="Queue backend"),
        intent,
        upsert=True,
    )
    assert added.updated == ()
    assert _bodies(store) == ["Kafka", "Redis"]


def test_upsert_needs_a_title(store, intent):
    with pytest.raises(InvalidInputError, match="needs a title"):
        remember(store, Draft(text="x", kind="decision"), intent, upsert=True)


def test_upsert_refuses_two_candidates(store, intent):
    draft = Draft(text="one", kind="decision", title="Queue backend")
    remember(store, draft, intent)
    remember(
        store,
        Draft(text="two", kind="decision", title="Queue backend"),
        intent,
    )
    with pytest.raises(InvalidInputError, match="2 memories") as caught:
        remember(
            store,
            Draft(text="three", kind="decision", title="Queue backend"),
            intent,
            upsert=True,
        )
    assert caught.value.hint
    assert _bodies(store) == ["one", "two"]


def test_two_upserts_at_once_make_one_memory(disk_store, intent, clock, monkeypatch):
    """Another writer's upsert of the title waits for the look and the add."""
    import threading
    import time

    from ctx.engine import Store
    from ctx.engine import memories as memories_module

    other = Store.open(disk_store.path, clock=clock)
    real = memories_module.remember_many
    racing: list[threading.Thread] = []

    def add_meanwhile(*args, **kwargs):
        if not racing:  # the first upsert found none: the other one starts
            draft = Draft(text="Kafka", kind="decision", title="Queue backend")
            racing.append(
                threading.Thread(
                    target=remember,
                    args=(other, draft, intent),
                    kwargs={"upsert": True},
                )
            )
            racing[0].start()
            time.sleep(0.3)  # its chance to take the lock, were it free
        return real(*args, **kwargs)

    monkeypatch.setattr(memories_module, "remember_many", add_meanwhile)
    draft = Draft(text="Redis", kind="decision", title="Queue backend")
    remember(disk_store, draft, intent, upsert=True)
    racing[0].join(timeout=30)
    other.close()
    assert _bodies(disk_store) == ["Kafka"]  # one memory, the later body
