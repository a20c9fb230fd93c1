import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctx.engine import InvalidInputError, Source, list_memories, log, show
from ctx.engine.ingest import (
    DEFAULT_PIECE_BYTES,
    MIN_PIECE_BYTES,
    ingest_files,
    split_text,
)


def _parts(store, result):
    memories = [show(store, mid).memory for mid in result.ids]
    return sorted(memories, key=lambda m: int(m.meta.get("part", "1")))


def test_small_file_is_one_memory(store, intent):
    before = len(log(store))
    result = ingest_files(
        store, [("notes.md", b"# Notes\n\nShip on Friday.\n")], intent
    )
    assert result.commit is not None
    assert result.commit.summary == "Ingest notes.md as 1 memory"
    assert len(log(store)) == before + 1
    (mid,) = result.ids
    record = show(store, mid)
    assert record.path == f"memory/sources/{mid[-1]}/{mid[-2]}/{mid[-3]}/{mid}.json"
    assert result.paths == (record.path,)
    memory = record.memory
    assert memory.kind == "source"
    assert memory.title == "notes.md"
    assert memory.body == "# Notes\n\nShip on Friday.\n"
    assert memory.meta == {"file": "notes.md"}
    assert memory.source == Source(file="notes.md", section="notes.md")
    assert memory.created_at <= result.commit.time  # the clock ticks per call


def _paragraphs(count: int) -> str:
    return (
        "\n\n".join(
            f"Paragraph {n}: " + " ".join(f"word{n}-{i}" for i in range(60))
            for n in range(count)
        )
        + "\n"
    )


def test_big_file_is_split_at_paragraphs(store, intent):
    text = _paragraphs(120)
    assert len(text.encode()) > 3 * DEFAULT_PIECE_BYTES
    result = ingest_files(store, [("big.txt", text.encode())], intent, context="docs")
    parts = _parts(store, result)
    count = len(parts)
    assert count == len(result.ids) > 3
    assert "".join(m.body for m in parts) == text
    for number, memory in enumerate(parts, 1):
        assert len(memory.body.encode()) <= DEFAULT_PIECE_BYTES
        assert memory.title == f"big.txt (part {number}/{count})"
        assert memory.meta == {
            "file": "big.txt",
            "part": str(number),
            "parts": str(count),
        }
        assert memory.source == Source(file="big.txt", section=memory.title)
        assert memory.body.startswith("Paragraph ")
    # Every cut falls on a blank line: joined with it, the pieces give the text.
    assert all(m.body.endswith("\n\n") for m in parts[:-1])
    assert "\n\n".join(m.body.removesuffix("\n\n") for m in parts) == text
    assert all(r.path.startswith("memory/docs/") for r in list_memories(store))
    assert result.commit is not None
    assert result.commit.summary == f"Ingest big.txt as {count} memories"


def test_a_long_paragraph_is_split_at_lines_then_characters():
    lines = "".join(f"line {n} " + "x" * 40 + "\n" for n in range(20))
    pieces = split_text(lines, 200)
    assert "".join(pieces) == lines
    assert all(p.endswith("\n") for p in pieces)
    assert all(len(p.encode()) <= 200 for p in pieces)
    long_line = "é☕\U0001f600" * 100  # 2-, 3- and 4-byte characters, no breaks
    pieces = split_text(long_line, 100)
    assert "".join(pieces) == long_line
    assert all(0 < len(p.encode()) <= 100 for p in pieces)


def test_cuts_prefer_paragraphs_over_lines():
    text = "a1\na2\n\nb1\nb2\n\nc1\n"
    assert split_text(text, 64) == [text]
    big = "x" * 30 + "\n" + "y" * 30 + "\n\n" + "z" * 30 + "\n"
    assert split_text(big, 64) == ["x" * 30 + "\n" + "y" * 30 + "\n\n", "z" * 30 + "\n"]


@given(
    st.text(alphabet=st.sampled_from("ab é☕\U0001f600\n\n\r\t"), max_size=600),
    st.integers(min_value=MIN_PIECE_BYTES, max_value=300),
)
def test_split_text_round_trips(text, max_bytes):
    pieces = split_text(text, max_bytes)
    assert "".join(pieces) == text
    assert all(0 < len(p.encode()) <= max_bytes for p in pieces)


def test_binary_file_is_refused_and_nothing_written(store, intent):
    before = log(store)
    with pytest.raises(InvalidInputError) as info:
        ingest_files(
            store,
            [("ok.txt", b"fine"), ("notes.bin", b"PK\x03\x04\x00\x00")],
            intent,
        )
    assert info.value.message == "notes.bin looks binary (it contains NUL bytes)."
    assert info.value.hint == "Only text files can be ingested."
    assert log(store) == before
    assert list_memories(store) == []


def test_non_utf8_file_is_refused(store, intent):
    before = log(store)
    with pytest.raises(InvalidInputError) as info:
        ingest_files(store, [("latin1.txt", "café".encode("latin-1"))], intent)
    assert info.value.message == (
        "latin1.txt is not UTF-8 text (invalid byte at offset 3)."
    )
    assert log(store) == before


@pytest.mark.parametrize("content", [b"", b"  \n\n\t\n", b"\xef\xbb\xbf"])
def test_empty_file_is_refused(store, intent, content):
    before = log(store)
    with pytest.raises(InvalidInputError, match=r"^empty\.txt is empty\.$"):
        ingest_files(store, [("a.txt", b"text"), ("empty.txt", content)], intent)
    assert log(store) == before


def test_byte_order_mark_is_dropped(store, intent):
    result = ingest_files(store, [("bom.txt", b"\xef\xbb\xbfhello\n")], intent)
    assert show(store, result.ids[0]).memory.body == "hello\n"


def test_tags_are_applied_to_every_piece(store, intent):
    result = ingest_files(
        store,
        [("a.md", b"alpha\n"), ("b.md", _paragraphs(60).encode())],
        intent,
        tags=["source:docs", "project:ctx", "source:docs"],
    )
    memories = [show(store, mid).memory for mid in result.ids]
    assert len(memories) > 2
    assert all(m.tags == ("project:ctx", "source:docs") for m in memories)
    assert result.commit is not None
    assert result.commit.summary == f"Ingest 2 files as {len(memories)} memories"
    assert memories[0].meta == {"file": "a.md"}


@pytest.mark.parametrize(
    ("kwargs", "files", "message"),
    [
        (
            {"tags": ["bad tag"]},
            [("a.md", b"x")],
            "a.md: Tag 'bad tag' is not of the form namespace:value.",
        ),
        ({"context": "../up"}, [("a.md", b"x")], "Context '../up' is not allowed."),
        (
            {"max_bytes": 10},
            [("a.md", b"x")],
            "The piece size must be 64 to 100000 bytes.",
        ),
        (
            {"max_bytes": 100_001},
            [("a.md", b"x")],
            "The piece size must be 64 to 100000 bytes.",
        ),
        ({}, [], "There are no files to ingest."),
        ({}, [("", b"x")], "File name '' cannot title a memory."),
        ({}, [("a\nb", b"x")], "File name 'a\\nb' cannot title a memory."),
    ],
)
def test_bad_arguments_are_refused(store, intent, kwargs, files, message):
    before = log(store)
    with pytest.raises(InvalidInputError) as info:
        ingest_files(store, files, intent, **kwargs)
    assert info.value.message == message
    assert log(store) == before


def test_ingest_on_a_disk_store(disk_store, intent):
    result = ingest_files(disk_store, [("big.txt", _paragraphs(100).encode())], intent)
    parts = _parts(disk_store, result)
    assert "".join(m.body for m in parts) == _paragraphs(100)


def test_long_blank_runs_join_a_neighbouring_piece(store, intent):
    text = "\n" * 300 + "a" * 50 + "\n" * 300 + "b\n"
    result = ingest_files(store, [("gaps.txt", text.encode())], intent, max_bytes=64)
    parts = _parts(store, result)
    assert "".join(m.body for m in parts) == text
    assert all(m.body.strip() for m in parts)
