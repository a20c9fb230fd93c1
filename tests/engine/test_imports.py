import msgspec
import pytest

from ctx.engine import (
    Draft,
    ImportResult,
    InvalidInputError,
    Store,
    export_lines,
    import_files,
    import_memories,
    link,
    list_links,
    log,
    remember,
    show,
)


def test_plain_lines_are_new_memories(store, intent):
    lines = [b"", b'{"text": "a"}', b'{"text": "b", "title": "B"}']
    result = import_memories(store, lines, intent, source="notes.jsonl")
    assert isinstance(result, ImportResult)
    assert len(result.ids) == 2
    assert result.commit == log(store)[0].commit.id
    assert log(store)[0].commit.summary == "Import 2 memories from notes.jsonl"


def test_an_export_header_makes_a_graph_import(store, intent):
    a = remember(store, Draft(text="first"), intent).ids[0]
    b = remember(store, Draft(text="second"), intent).ids[0]
    link(store, a, b, "RELATES_TO", intent)
    data = b"".join(export_lines(store))
    other = Store.memory(clock=store.clock)
    # A generator works as well as a list, blank first lines too.
    result = import_memories(other, iter([b"\n", *data.splitlines()]), intent)
    assert sorted(result.ids) == sorted([a, b])
    assert show(other, a).memory.body == "first"
    assert len(list_links(other, a)) == 1
    again = import_memories(other, data.splitlines(), intent)
    assert again == ImportResult(commit=None, ids=())


def test_a_file_without_a_header_is_read_as_memory_lines(store, intent):
    with pytest.raises(InvalidInputError, match=r"^Line 1: Object contains unknown"):
        import_memories(store, [b'{"type": "memory", "path": "x"}'], intent)
    with pytest.raises(InvalidInputError, match="holds no memories"):
        import_memories(store, [], intent)


def test_a_key_given_twice_is_refused_and_a_byte_order_mark_read(store, intent):
    """msgspec keeps a repeated key's last value: the first was lost unsaid."""
    for line, key in (
        (b'{"text": "x", "text": "y"}', "text"),
        (b'{"text": "x", "meta": {"a": "1", "a": "2"}}', "a"),
    ):
        with pytest.raises(InvalidInputError, match=f"^Line 2: the key '{key}'"):
            import_memories(store, [b'{"text": "fine"}', line], intent)
    assert len(log(store)) == 1  # nothing written
    # A file saved with a byte order mark (Windows tools) reads as without.
    made = import_memories(store, [b'\xef\xbb\xbf{"text": "bom first"}'], intent)
    assert show(store, made.ids[0]).memory.body == "bom first"
    data = b"".join(export_lines(store))
    other = Store.memory(clock=store.clock)
    again = import_memories(other, (b"\xef\xbb\xbf" + data).splitlines(), intent)
    assert again.ids == made.ids


def test_import_result_json_shape(store, intent):
    result = import_files(store, [("notes.md", b"hello\n")], intent)
    assert result.commit == log(store)[0].commit.id
    decoded = msgspec.json.decode(msgspec.json.encode(result))
    assert decoded == {
        "store": None,  # the engine's caller holds the store; the CLI names it
        "commit": result.commit,
        "ids": list(result.ids),
        "existing": 0,
    }
    assert list(decoded) == ["store", "commit", "ids", "existing"]
