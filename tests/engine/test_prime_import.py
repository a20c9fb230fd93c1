import pytest

from ctx.engine import (
    InvalidInputError,
    list_memories,
    log,
    prime,
    show,
    split_sections,
)
from ctx.engine.line_import import import_lines

DOC = """Intro text before any heading.

# Style
Use black.

## Testing
Run pytest.

```
# not a heading inside a fence
```

# Style
Duplicate heading.
"""


def test_split_sections():
    sections = split_sections(DOC, "README.md")
    assert [(s.title, s.slug) for s in sections] == [
        ("README.md", "readme-md"),
        ("Style", "style"),
        ("Testing", "testing"),
        ("Style", "style-2"),
    ]
    assert "# not a heading inside a fence" in sections[2].body


def test_prime_is_idempotent(store, intent):
    first = prime(store, DOC, "guide", intent, file_name="GUIDE.md")
    assert first.commit is not None
    paths = sorted(r.path for r in list_memories(store))
    assert paths == sorted(
        f"primed/guide/{s}.json" for s in ("guide-md", "style", "style-2", "testing")
    )
    assert prime(store, DOC, "guide", intent, file_name="GUIDE.md").commit is None
    ids = {r.path: r.memory.id for r in list_memories(store)}
    changed = DOC.replace("Run pytest.", "Run pytest -q.").replace(
        "# Style\nDuplicate heading.\n", ""
    )
    result = prime(store, changed, "guide", intent, file_name="GUIDE.md")
    assert result.commit is not None
    after = {r.path: r for r in list_memories(store)}
    assert sorted(after) == [
        f"primed/guide/{s}.json" for s in ("guide-md", "style", "testing")
    ]
    assert (
        after["primed/guide/testing.json"].memory.id == ids["primed/guide/testing.json"]
    )
    assert "pytest -q" in after["primed/guide/testing.json"].memory.body
    assert len(log(store)) == 3


def test_prime_pin_moves_sections_keeping_ids(store, intent):
    prime(store, DOC, "guide", intent, file_name="GUIDE.md")
    before = {r.memory.id for r in list_memories(store)}
    prime(store, DOC, "guide", intent, file_name="GUIDE.md", pin=True)
    records = list_memories(store)
    assert {r.memory.id for r in records} == before
    assert all(r.path.startswith("pinned/guide/") for r in records)


def test_prime_refuses_bad_input(store, intent):
    with pytest.raises(InvalidInputError):
        prime(store, "   ", "guide", intent, file_name="x.md")
    with pytest.raises(InvalidInputError):
        prime(store, DOC, "../up", intent, file_name="x.md")


def test_import_is_one_commit(store, intent):
    lines = [
        b'{"text": "a", "kind": "decision", "context": "decisions", "tags": ["p:x"]}',
        b"",
        b'{"text": "b", "when": "2023-05-08T13:56:00+00:00", "title": "B"}',
        b'{"text": "c", "pinned": true, "title": "Rule"}',
    ]
    result = import_lines(store, lines, intent)
    assert len(result.ids) == 3
    assert len(log(store)) == 2
    assert show(store, result.ids[1]).memory.created_at.year == 2023
    assert show(store, result.ids[2]).path == "pinned/general/rule.json"


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([b'{"text": "ok"}', b"not json"], "Line 2: not a JSON object"),
        (
            [b'{"text": "ok"}', b'{"txt": "typo"}'],
            "Line 2: Object contains unknown field `txt`",
        ),
        ([b'{"text": "ok"}', b"", b'{"text": ""}'], "Line 3: The text is empty."),
        ([b'{"text": "\\u0000"}'], "Line 1: The text contains a NUL byte."),
        ([b'{"text": "x", "kind": "bogus"}'], "Line 1: Unknown kind 'bogus'."),
        (
            [b'{"text": "x", "when": "2023-05-08T13:56:00"}'],
            "Line 1: `when` '2023-05-08T13:56:00' has no timezone offset.",
        ),
        ([b'{"text": "\xff"}'], "Line 1: not valid UTF-8."),
        ([b"", b"  "], "The import holds no memories."),
    ],
)
def test_import_names_the_bad_line_and_writes_nothing(store, intent, lines, message):
    before = log(store)
    with pytest.raises(InvalidInputError) as info:
        import_lines(store, lines, intent)
    assert info.value.message.startswith(message)
    assert log(store) == before
