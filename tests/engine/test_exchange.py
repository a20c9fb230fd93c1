import itertools
import json
from datetime import UTC, datetime, timedelta, timezone

import msgspec
import pytest

from ctx.engine import (
    ConflictError,
    Draft,
    Intent,
    InvalidInputError,
    Link,
    Memory,
    MemoryNotFoundError,
    Source,
    Store,
    edit,
    forget,
    link,
    list_links,
    list_memories,
    log,
    prime,
    remember,
    remember_many,
    show,
)
from ctx.engine.exports import (
    FORMAT_NAME,
    FORMAT_VERSION,
    export_lines,
    is_graph_export,
)
from ctx.engine.graph_import import import_graph
from ctx.engine.graph_lines import _LinkIn, _MemoryIn, _SourceIn

T1 = datetime(2026, 2, 1, 8, 0, tzinfo=UTC)
OTHER_ID = "01KE6VZKJ00000000000000000"

DOC = """Intro.

# Style
Use black.

## Testing
Run pytest -q.
"""


def fresh_store() -> Store:
    ticks = itertools.count()
    return Store.memory(clock=lambda: T1 + timedelta(seconds=next(ticks)))


@pytest.fixture
def importer():
    return Intent(agent="importer", intent="import")


@pytest.fixture
def graph(store, intent):
    """A store holding every shape a memory or link can take."""
    result = remember_many(
        store,
        [
            Draft(
                text="The API listens on 8080.", title="API port", tags=("b:2", "a:1")
            ),
            Draft(
                text="We chose Postgres.\n\nBecause of:\n- transactions\n- JSON",
                kind="decision",
                context="decisions",
                when=datetime(2023, 5, 8, 13, 56, tzinfo=timezone(timedelta(hours=2))),
                meta={"ticket": "OPS-7", "źródło": "ünïcødé ✓"},
            ),
            Draft(text="Café ☕ — naïve 日本語 \U0001f600", kind="observation"),
            Draft(text="Always run the linter.", pinned=True, context="style"),
            Draft(text="Is the cache needed?", kind="open-question", title=None),
        ],
        intent,
    )
    prime(store, DOC, "guide", intent, file_name="GUIDE.md")
    ids = list(result.ids)
    a, b, c, d, e = ids
    link(store, b, a, "DEPENDS_ON", intent, confidence=0.25)
    link(store, c, a, "relates-to", Intent(agent="dream", intent="dream"))
    link(store, d, b, "DERIVED_FROM", intent)
    # A link left dangling by forget is not exported.
    link(store, e, a, "RELATES_TO", intent)
    link(store, a, e, "RELATES_TO", intent)
    forget(store, e, intent)
    return ids[:4]


def export(store, **kwargs) -> bytes:
    return b"".join(export_lines(store, **kwargs))


def lines_of(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


# -- round trips ----------------------------------------------------------------


def test_round_trip_is_byte_identical(store, graph, importer):
    first = export(store)
    other = fresh_store()
    before = len(log(other))
    result = import_graph(other, lines_of(first), importer)
    assert result.commit is not None
    assert result.commit.summary == "Import 7 memories and 3 links"
    assert result.commit.intent == importer
    assert len(log(other)) == before + 1
    assert export(other) == first
    assert sorted(result.ids) == sorted(r.memory.id for r in list_memories(store))
    assert [(r.path, r.memory) for r in list_memories(other)] == [
        (r.path, r.memory) for r in list_memories(store)
    ]


def test_export_shape(store, graph):
    data = export(store)
    assert data.endswith(b"\n")
    lines = data.split(b"\n")[:-1]
    assert lines[0] == (b'{"format":"ctx-export","version":1,"memories":7,"links":3}')
    objects = [json.loads(line) for line in lines]
    assert all(line == line.strip() for line in lines)
    memories = [o for o in objects[1:] if o["type"] == "memory"]
    links = [o for o in objects[1:] if o["type"] == "link"]
    assert objects[1:] == memories + links
    assert [m["path"] for m in memories] == sorted(m["path"] for m in memories)
    assert {m["path"].split("/")[0] for m in memories} == {"memory", "pinned", "primed"}
    assert list(memories[0]["memory"]) == [
        "version",
        "id",
        "kind",
        "title",
        "body",
        "tags",
        "created_at",
        "source",
        "meta",
    ]
    assert list(links[0]) == ["type", "source", "link_type", "target", "link"]
    by_type = {(o["source"], o["link_type"], o["target"]): o["link"] for o in links}
    a, b, c, _ = graph
    assert by_type[(b, "DEPENDS_ON", a)]["confidence"] == 0.25
    assert by_type[(b, "DEPENDS_ON", a)]["reason"] == "testing"
    assert by_type[(c, "RELATES_TO", a)]["agent"] == "dream"
    assert by_type[(c, "RELATES_TO", a)]["reason"] is None
    primed = [m for m in memories if m["path"].startswith("primed/")]
    assert primed[0]["memory"]["source"]["file"] == "GUIDE.md"


def test_round_trip_through_a_disk_store(store, graph, disk_store, importer):
    first = export(store)
    import_graph(disk_store, lines_of(first), importer)
    assert export(disk_store) == first
    reopened = Store.open(disk_store.path, clock=disk_store.clock)
    try:
        assert export(reopened) == first
    finally:
        reopened.close()
    # And back out of the disk store into memory.
    other = fresh_store()
    import_graph(other, export_lines(disk_store), importer)
    assert export(other) == first


def test_export_at_a_revision(store, graph, intent):
    before = export(store)
    remember(store, Draft(text="later"), intent)
    assert export(store, rev="main~1") == before
    assert export(store) != before


def test_import_twice_is_a_no_op(store, graph, importer):
    data = export(store)
    other = fresh_store()
    import_graph(other, lines_of(data), importer)
    again = import_graph(other, lines_of(data), importer)
    assert again.commit is None
    assert again.ids == ()


def test_header_only_imports_nothing(importer):
    other = fresh_store()
    before = log(other)
    result = import_graph(
        other,
        [b'{"format":"ctx-export","version":1,"memories":0,"links":0}\n'],
        importer,
    )
    assert result.commit is None
    assert log(other) == before


# -- subsets --------------------------------------------------------------------


def test_ids_subset_exports_only_links_inside(store, graph, importer):
    a, b = graph[:2]
    data = export(store, ids=[a.lower(), b])
    objects = [json.loads(line) for line in lines_of(data)]
    assert objects[0]["memories"] == 2
    assert objects[0]["links"] == 1
    assert {o["memory"]["id"] for o in objects if o.get("type") == "memory"} == {a, b}
    assert [(o["source"], o["target"]) for o in objects if o.get("type") == "link"] == [
        (b, a)
    ]
    other = fresh_store()
    import_graph(other, lines_of(data), importer)
    assert export(other) == data
    assert [r.target for r in list_links(other, b, direction="out")] == [a]


def test_ids_subset_with_a_primed_memory(store, graph):
    primed = next(r for r in list_memories(store) if r.path.startswith("primed/"))
    data = export(store, ids=[primed.memory.id])
    assert json.loads(lines_of(data)[1])["path"] == primed.path


def test_ids_subset_refuses_unknown_ids(store, graph):
    with pytest.raises(MemoryNotFoundError, match=f"No memory {OTHER_ID} here."):
        export_lines(store, ids=[OTHER_ID])
    with pytest.raises(InvalidInputError):
        export_lines(store, ids=["nope"])


# -- detecting the format ---------------------------------------------------------


def test_is_graph_export():
    assert is_graph_export(b'{"format":"ctx-export","version":1}\n')
    assert is_graph_export(b'{"format": "ctx-export", "version": 9, "x": 1}')
    assert is_graph_export(b'\xef\xbb\xbf{"format":"ctx-export","version":1}')
    assert not is_graph_export(b'{"text": "a memory"}')
    assert not is_graph_export(b'{"format": "other", "version": 1}')
    assert not is_graph_export(b"not json")
    assert not is_graph_export(b"")
    assert FORMAT_NAME == "ctx-export"
    assert FORMAT_VERSION == 1


def test_strict_twins_match_the_model():
    """The import decoders must list exactly the stored fields."""
    for strict, model in ((_MemoryIn, Memory), (_LinkIn, Link), (_SourceIn, Source)):
        assert [f.name for f in msgspec.structs.fields(strict)] == [
            f.name for f in msgspec.structs.fields(model)
        ]


# -- refusing bad input -------------------------------------------------------------


def _mutate(data: bytes, index: int, change) -> list[bytes]:
    lines = lines_of(data)
    obj = json.loads(lines[index])
    change(obj)
    lines[index] = json.dumps(obj).encode() + b"\n"
    return lines


def _memory_line(data: bytes, area: str = "memory/") -> int:
    for n, line in enumerate(lines_of(data)):
        obj = json.loads(line)
        if obj.get("type") == "memory" and obj["path"].startswith(area):
            return n
    raise AssertionError(area)


def _link_line(data: bytes) -> int:
    return next(
        n
        for n, line in enumerate(lines_of(data))
        if json.loads(line).get("type") == "link"
    )


def _set(path, value):
    def change(obj):
        target = obj
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def _bad_cases(data: bytes):
    m = _memory_line(data)
    p = _memory_line(data, "pinned/")
    k = _link_line(data)
    mem = json.loads(lines_of(data)[m])
    mid = mem["memory"]["id"]
    context = mem["path"].split("/")[1]
    link_obj = json.loads(lines_of(data)[k])
    lines = lines_of(data)
    yield "missing header", lines[1:], "Line 1: not a ctx export header."
    yield (
        "wrong version",
        _mutate(data, 0, _set(["version"], 2)),
        "Line 1: export format version 2 is not supported (this ctx reads version 1).",
    )
    yield (
        "unknown header key",
        _mutate(data, 0, _set(["branch"], "main")),
        "Line 1: Object contains unknown field `branch`.",
    )
    yield (
        "bad json",
        [*lines[:m], b'{"type": "memory", "path": \n', *lines[m + 1 :]],
        f"Line {m + 1}: not a JSON object (",
    )
    yield (
        "not utf-8",
        [*lines[:m], b'{"type": "memory", "path": "\xff"}\n', *lines[m + 1 :]],
        f"Line {m + 1}: not valid UTF-8.",
    )
    yield (
        "unknown key",
        _mutate(data, m, _set(["extra"], 1)),
        f"Line {m + 1}: Object contains unknown field `extra`.",
    )
    yield (
        "unknown nested key",
        _mutate(data, m, _set(["memory", "colour"], "red")),
        f"Line {m + 1}: Object contains unknown field `colour` - at `$.memory`.",
    )
    yield (
        "unknown line type",
        _mutate(data, m, _set(["type"], "note")),
        f"Line {m + 1}: Invalid value 'note' - at `$.type`.",
    )
    yield (
        "invalid kind",
        _mutate(data, m, _set(["memory", "kind"], "banana")),
        f"Line {m + 1}: Unknown kind 'banana'.",
    )
    yield (
        "empty body",
        _mutate(data, m, _set(["memory", "body"], "  \n")),
        f"Line {m + 1}: The text is empty.",
    )
    yield (
        "bad tag",
        _mutate(data, m, _set(["memory", "tags"], ["no colon"])),
        f"Line {m + 1}: Tag 'no colon' is not of the form namespace:value.",
    )
    yield (
        "naive time",
        _mutate(data, m, _set(["memory", "created_at"], "2026-01-05T09:30:00")),
        f"Line {m + 1}: `created_at` needs a timezone offset.",
    )
    yield (
        "memory version",
        _mutate(data, m, _set(["memory", "version"], 2)),
        f"Line {m + 1}: Memory version 2 is not supported (this ctx reads version 1).",
    )
    yield (
        "lower-case id",
        _mutate(data, m, _set(["memory", "id"], mid.lower())),
        f"Line {m + 1}: {mid.lower()!r} is not a memory id as stored",
    )
    wrong = mem["path"].replace(mid, OTHER_ID)
    yield (
        "path/id mismatch",
        _mutate(data, m, _set(["path"], wrong)),
        f"Line {m + 1}: Path {wrong!r} does not match memory {mid}",
    )
    yield (
        "dot-dot in path",
        _mutate(data, m, _set(["path"], "memory/../../etc/x/y.json")),
        f"Line {m + 1}: Path 'memory/../../etc/x/y.json' is not allowed",
    )
    yield (
        "dot-dot in pinned path",
        _mutate(data, p, _set(["path"], "pinned/../x.json")),
        f"Line {p + 1}: Path 'pinned/../x.json' is not allowed",
    )
    yield (
        "bad context",
        _mutate(
            data, m, _set(["path"], mem["path"].replace(f"/{context}/", "/Gen eral/"))
        ),
        f"Line {m + 1}: Context 'Gen eral' is not allowed.",
    )
    yield (
        "unknown area",
        _mutate(data, m, _set(["path"], "links/x.json")),
        f"Line {m + 1}: Path 'links/x.json' must start with memory/, pinned/, primed/ or sessions/.",
    )
    yield (
        "bad pinned slug",
        _mutate(data, p, _set(["path"], "pinned/style/Has Space.json")),
        f"Line {p + 1}: File name 'Has Space.json' is not allowed.",
    )
    yield (
        "link to a missing memory",
        _mutate(data, k, _set(["target"], OTHER_ID)),
        f"Line {k + 1}: link target {OTHER_ID} is not a memory of the file.",
    )
    yield (
        "self link",
        _mutate(data, k, _set(["target"], link_obj["source"])),
        f"Line {k + 1}: A memory cannot link to itself.",
    )
    yield (
        "unknown link type",
        _mutate(data, k, _set(["link_type"], "LIKES")),
        f"Line {k + 1}: Unknown link type 'LIKES'.",
    )
    yield (
        "link confidence",
        _mutate(data, k, _set(["link", "confidence"], 1.5)),
        f"Line {k + 1}: Confidence 1.5 is outside 0..1.",
    )
    yield (
        "duplicate id",
        [*lines[: m + 1], lines[m], *lines[m + 1 :]],
        f"Line {m + 2}: memory {mid} is already on line {m + 1}.",
    )
    moved = _mutate(
        data, m, _set(["path"], mem["path"].replace(f"/{context}/", "/other/"))
    )
    yield (
        "duplicate id at another path",
        [*lines[: m + 1], moved[m], *lines[m + 1 :]],
        f"Line {m + 2}: memory {mid} is already on line {m + 1}.",
    )
    yield (
        "duplicate link",
        [*lines[: k + 1], lines[k], *lines[k + 1 :]],
        f"Line {k + 2}: link links/",
    )
    yield (
        "truncated",
        lines[:-1],
        "The header announces 3 links but the file holds 2; it may be truncated.",
    )
    yield "empty", [], "The import is empty."


BAD_CASES = [
    "missing header",
    "wrong version",
    "unknown header key",
    "bad json",
    "not utf-8",
    "unknown key",
    "unknown nested key",
    "unknown line type",
    "invalid kind",
    "empty body",
    "bad tag",
    "naive time",
    "memory version",
    "lower-case id",
    "path/id mismatch",
    "dot-dot in path",
    "dot-dot in pinned path",
    "bad context",
    "unknown area",
    "bad pinned slug",
    "link to a missing memory",
    "self link",
    "unknown link type",
    "link confidence",
    "duplicate id",
    "duplicate id at another path",
    "duplicate link",
    "truncated",
    "empty",
]


@pytest.mark.parametrize("case", BAD_CASES)
def test_bad_input_is_refused_and_nothing_written(store, graph, importer, case):
    data = export(store)
    cases = {name: (lines, message) for name, lines, message in _bad_cases(data)}
    assert sorted(cases) == sorted(BAD_CASES)
    lines, message = cases[case]
    other = fresh_store()
    remember(other, Draft(text="already here"), importer)
    before = log(other)
    with pytest.raises(InvalidInputError) as info:
        import_graph(other, lines, importer)
    assert info.value.message.startswith(message), info.value.message
    assert log(other) == before


def test_header_must_come_first(store, graph, importer):
    lines = lines_of(export(store))
    lines = [lines[1], lines[0], *lines[2:]]
    with pytest.raises(InvalidInputError, match=r"^Line 1: not a ctx export header\.$"):
        import_graph(fresh_store(), lines, importer)


def test_blank_lines_are_skipped_but_counted(store, graph, importer):
    lines = lines_of(export(store))
    with_blanks = [b"\n", lines[0], b"  \n", *lines[1:]]
    other = fresh_store()
    import_graph(other, with_blanks, importer)
    assert export(other) == b"".join(lines)
    bad = [b"\n", lines[0], b"\n", b"{oops\n"]
    with pytest.raises(InvalidInputError, match=r"^Line 4: "):
        import_graph(fresh_store(), bad, importer)


def test_tags_and_titles_are_normalised(store, graph, importer):
    data = export(store)
    m = _memory_line(data)
    mid = json.loads(lines_of(data)[m])["memory"]["id"]
    lines = _mutate(data, m, _set(["memory", "tags"], ["z:1", "a:1", "z:1"]))
    lines = _mutate(b"".join(lines), m, _set(["memory", "title"], "  spaced  "))
    other = fresh_store()
    import_graph(other, lines, importer)
    memory = show(other, mid).memory
    assert memory.tags == ("a:1", "z:1")
    assert memory.title == "spaced"


# -- importing into a branch that has memories ------------------------------------


def test_clash_is_refused_without_merge(store, graph, importer, intent):
    a = graph[0]
    other = fresh_store()
    import_graph(other, lines_of(export(store)), importer)
    edit(store, a, intent, body="The API listens on 9090.")
    changed = export(store)
    before = log(other)
    with pytest.raises(ConflictError) as info:
        import_graph(other, lines_of(changed), importer)
    line = _line_of(changed, a)
    assert info.value.message == (
        f"Line {line}: memory {a} already exists on branch 'main' with different content."
    )
    assert info.value.hint == "Import with merge to replace it."
    assert log(other) == before


def test_merge_replaces_existing_memories(store, graph, importer, intent):
    a = graph[0]
    other = fresh_store()
    import_graph(other, lines_of(export(store)), importer)
    kept = remember(other, Draft(text="only in the other store"), intent).ids[0]
    edit(store, a, intent, body="The API listens on 9090.")
    result = import_graph(other, lines_of(export(store)), importer, merge=True)
    assert result.commit is not None
    assert result.commit.summary == "Import 1 memory and 0 links (merge)"  # changed
    assert result.ids == (a,)
    assert result.paths == (show(store, a).path,)
    assert show(other, a).memory.body == "The API listens on 9090."
    assert show(other, a).path == show(store, a).path
    assert show(other, kept).memory.body == "only in the other store"
    assert len(log(other, a)) == 2


def test_merge_moves_a_memory_to_the_files_path(store, graph, importer):
    a = graph[0]
    data = export(store)
    other = fresh_store()
    import_graph(other, lines_of(data), importer)
    m = _line_of(data, a) - 1
    old = json.loads(lines_of(data)[m])["path"]
    new = old.replace("memory/general/", "memory/moved/")
    moved = _mutate(data, m, _set(["path"], new))
    before = log(other)
    with pytest.raises(
        ConflictError, match=f"already exists on branch 'main' at {old}"
    ):
        import_graph(other, moved, importer)
    assert log(other) == before
    result = import_graph(other, moved, importer, merge=True)
    assert result.paths == (new,)
    assert show(other, a).path == new
    assert old not in {r.path for r in list_memories(other)}


def test_a_path_holding_another_memory_is_refused(store, graph, importer, intent):
    data = export(store)
    p = _memory_line(data, "pinned/")
    pinned = json.loads(lines_of(data)[p])
    other = fresh_store()
    remember(
        other,
        Draft(text="Always run the linter.", pinned=True, context="style"),
        intent,
    )
    squatter = list_memories(other)[0]
    assert squatter.path == pinned["path"]
    before = log(other)
    for merge in (False, True):
        with pytest.raises(ConflictError) as info:
            import_graph(other, lines_of(data), importer, merge=merge)
        assert info.value.message == (
            f"Line {p + 1}: path {pinned['path']} holds another memory "
            f"({squatter.memory.id}) on branch 'main'."
        )
    assert log(other) == before


def test_merge_links_to_memories_on_the_branch(store, graph, importer, intent):
    a, b = graph[0], graph[1]
    target = fresh_store()
    import_graph(target, lines_of(export(store, ids=[a])), importer)
    partial = export(store, ids=[b])  # b's link to a is not in it
    lines = lines_of(partial)
    link_line = (
        json.dumps(
            {
                "type": "link",
                "source": b,
                "link_type": "DEPENDS_ON",
                "target": a,
                "link": {
                    "version": 1,
                    "agent": "tester",
                    "created_at": "2026-01-05T09:30:00Z",
                },
            }
        ).encode()
        + b"\n"
    )
    lines = [
        lines[0].replace(b'"links":0', b'"links":1'),
        *lines[1:],
        link_line,
    ]
    before = log(target)
    with pytest.raises(
        InvalidInputError,
        match=f"^Line 3: link target {a} is not a memory of the file.",
    ):
        import_graph(target, lines, importer)
    assert log(target) == before
    result = import_graph(target, lines, importer, merge=True)
    assert result.commit is not None
    assert [r.target for r in list_links(target, b, direction="out")] == [a]
    # A link whose end is on neither side is still refused.
    dangling = [lines[0], lines[1], link_line.replace(a.encode(), OTHER_ID.encode())]
    with pytest.raises(
        InvalidInputError,
        match=f"^Line 3: link target {OTHER_ID} is neither in the file nor on branch 'main'.",
    ):
        import_graph(target, dangling, importer, merge=True)


def test_link_clash_without_merge(store, graph, importer):
    a, b = graph[0], graph[1]
    data = export(store)
    other = fresh_store()
    import_graph(other, lines_of(data), importer)
    k = next(
        n
        for n, line in enumerate(lines_of(data))
        if json.loads(line).get("link_type") == "DEPENDS_ON"
    )
    changed = _mutate(data, k, _set(["link", "confidence"], 0.75))
    with pytest.raises(ConflictError) as info:
        import_graph(other, changed, importer)
    assert info.value.message == (
        f"Line {k + 1}: the DEPENDS_ON link from {b} to {a} already exists on "
        "branch 'main' with different content."
    )
    import_graph(other, changed, importer, merge=True)
    (record,) = [r for r in list_links(other, b, direction="out")]
    assert record.link.confidence == 0.75


def test_import_to_another_branch(store, graph, importer):
    from ctx.engine import create_branch

    other = fresh_store()
    create_branch(other, "imported")
    import_graph(other, lines_of(export(store)), importer, branch="imported")
    assert list_memories(other) == []
    assert export(other, rev="imported") == export(store)


def _line_of(data: bytes, memory_id: str) -> int:
    for n, line in enumerate(lines_of(data), 1):
        obj = json.loads(line)
        if obj.get("type") == "memory" and obj["memory"]["id"] == memory_id:
            return n
    raise AssertionError(memory_id)


def test_superseded_memories_are_exported(store, intent, importer):
    old = remember(store, Draft(text="The port is 8080."), intent).ids[0]
    new = remember(store, Draft(text="The port is 9090."), intent).ids[0]
    link(store, new, old, "SUPERSEDES", intent)
    data = export(store)
    objects = [json.loads(line) for line in lines_of(data)]
    assert {o["memory"]["id"] for o in objects if o.get("type") == "memory"} == {
        old,
        new,
    }
    assert [o["link_type"] for o in objects if o.get("type") == "link"] == [
        "SUPERSEDES"
    ]
    other = fresh_store()
    import_graph(other, lines_of(data), importer)
    assert export(other) == data


def test_the_documented_example_round_trips(importer):
    from pathlib import Path

    doc = Path(__file__).parents[2] / "docs" / "export-format.md"
    example = doc.read_text().split("```json\n", 1)[1].split("```", 1)[0].encode()
    other = fresh_store()
    import_graph(other, lines_of(example), importer)
    assert export(other) == example
