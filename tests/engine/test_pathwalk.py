"""The tree comparison a cold history walk makes of each commit (issue 30)."""

from __future__ import annotations

from dulwich.object_store import MemoryObjectStore
from dulwich.objects import Blob, Tree

from ctx.engine._pathwalk import TreeReader, differs, under


def _tree(objects, entries):
    """Adds a tree of {name: blob bytes or a nested dict}; returns its id."""
    tree = Tree()
    for name, value in entries.items():
        if isinstance(value, dict):
            tree.add(name, 0o040000, _tree(objects, value))
        else:
            blob = Blob.from_string(value)
            objects.add_object(blob)
            tree.add(name, 0o100644, blob.id)
    objects.add_object(tree)
    return tree.id


def _raw_tree(objects, raw):
    tree = Tree.from_raw_string(Tree.type_num, raw)
    objects.add_object(tree)
    return tree.id


def test_only_a_change_where_the_query_looks_counts():
    objects = MemoryObjectStore()
    files = {f"f{i}".encode(): str(i).encode() for i in range(40)}
    old = _tree(objects, {b"a": {b"x": files}, b"b": {b"y": b"1"}})
    elsewhere = _tree(objects, {b"a": {b"x": files}, b"b": {b"y": b"2"}})
    inside = _tree(
        objects, {b"a": {b"x": {**files, b"f7": b"new"}}, b"b": {b"y": b"1"}}
    )
    trees = TreeReader(objects, keep=1)
    assert not differs(trees, old, elsewhere, under("a/x/"))
    assert differs(trees, old, inside, under("a/x/"))
    assert differs(trees, elsewhere, inside, under("b"))
    assert not differs(trees, old, old, under("a"))
    assert differs(trees, None, old, under("a/x/f7"))


def test_a_tree_the_entry_pattern_does_not_tile_is_read_by_dulwich():
    objects = MemoryObjectStore()
    blob = Blob.from_string(b"x")
    objects.add_object(blob)
    sha = bytes.fromhex(blob.id.decode())
    # An entry with an empty name: dulwich's lenient parser reads it.
    odd = _raw_tree(objects, b"100644 \0" + sha + b"100644 kept\0" + sha)
    plain = _tree(objects, {b"kept": b"x"})
    trees = TreeReader(objects)
    assert len(trees.entries(odd)) == 2
    assert differs(trees, plain, odd, under(""))
    assert not differs(trees, plain, odd, under("kept"))
