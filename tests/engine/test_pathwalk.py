"""The tree comparison a cold history walk makes of each commit (issue 30)."""

from __future__ import annotations

import random

import pytest
from dulwich.diff_tree import tree_changes as dulwich_tree_changes
from dulwich.object_store import MemoryObjectStore
from dulwich.objects import Blob, Tree

from ctx.engine._pathwalk import PathWalk, Trees, tree_changes, under


def _tree(objects, entries):
    """Adds a tree of {name: blob bytes or a nested dict}; returns its id."""
    return bytes.fromhex(_hex_tree(objects, entries).decode())  # as entries name it


def _hex_tree(objects, entries):
    tree = Tree()
    for name, value in entries.items():
        if isinstance(value, dict):
            tree.add(name, 0o040000, _hex_tree(objects, value))
        else:
            blob = Blob.from_string(value)
            objects.add_object(blob)
            tree.add(name, 0o100644, blob.id)
    objects.add_object(tree)
    return tree.id


def _raw_tree(objects, raw):
    tree = Tree.from_raw_string(Tree.type_num, raw)
    objects.add_object(tree)
    return bytes.fromhex(tree.id.decode())


def test_only_a_change_where_the_query_looks_counts():
    objects = MemoryObjectStore()
    files = {f"f{i}".encode(): str(i).encode() for i in range(40)}
    old = _tree(objects, {b"a": {b"x": files}, b"b": {b"y": b"1"}})
    elsewhere = _tree(objects, {b"a": {b"x": files}, b"b": {b"y": b"2"}})
    inside = _tree(
        objects, {b"a": {b"x": {**files, b"f7": b"new"}}, b"b": {b"y": b"1"}}
    )
    assert not PathWalk(Trees(objects, keep=1), under("a/x/")).differs(old, elsewhere)
    assert PathWalk(Trees(objects, keep=1), under("a/x/")).differs(old, inside)
    assert PathWalk(Trees(objects, keep=1), under("b")).differs(elsewhere, inside)
    assert not PathWalk(Trees(objects, keep=1), under("a")).differs(old, old)
    assert PathWalk(Trees(objects, keep=1), under("a/x/f7")).differs(None, old)


def test_a_tree_the_entry_pattern_does_not_tile_is_read_by_dulwich():
    objects = MemoryObjectStore()
    blob = Blob.from_string(b"x")
    objects.add_object(blob)
    sha = bytes.fromhex(blob.id.decode())
    # An entry with an empty name: dulwich's lenient parser reads it.
    odd = _raw_tree(objects, b"100644 \0" + sha + b"100644 kept\0" + sha)
    plain = _tree(objects, {b"kept": b"x"})
    assert len(Trees(objects).entries(odd)) == 2
    assert PathWalk(Trees(objects), under("")).differs(plain, odd)
    assert not PathWalk(Trees(objects), under("kept")).differs(plain, odd)


def _dulwich_pairs(objects, old, new):
    """The changes as the history cache took them from dulwich's diff."""
    pairs = []
    old_hex = old.hex().encode() if old else None
    for ch in dulwich_tree_changes(objects, old_hex, new.hex().encode()):
        old_path = ch.old.path if ch.old and ch.old.path else None
        new_path = ch.new.path if ch.new and ch.new.path else None
        old_id = ch.old.sha.decode() if ch.old and ch.old.sha else None
        new_id = ch.new.sha.decode() if ch.new and ch.new.sha else None
        if ch.type == "modify" or old_path == new_path:
            pairs.append(((new_path or old_path).decode(), old_id, new_id))
        else:
            if old_path:
                pairs.append((old_path.decode(), old_id, None))
            if new_path:
                pairs.append((new_path.decode(), None, new_id))
    return sorted(pairs)


def _moded_tree(objects, entries):
    """Like _tree, but a value may be (mode, blob bytes)."""
    tree = Tree()
    for name, value in entries.items():
        if isinstance(value, dict):
            tree.add(name, 0o040000, _moded_tree(objects, value).hex().encode())
            continue
        mode, content = value if isinstance(value, tuple) else (0o100644, value)
        blob = Blob.from_string(content)
        objects.add_object(blob)
        tree.add(name, mode, blob.id)
    objects.add_object(tree)
    return bytes.fromhex(tree.id.decode())


def _random_tree(rng, depth):
    names = rng.sample([b"a", b"b", b"c", b"d", b"e"], rng.randint(0, 4))
    out = {}
    for name in names:
        if depth and rng.random() < 0.4:
            out[name] = _random_tree(rng, depth - 1)
        else:
            out[name] = str(rng.randint(0, 3)).encode()
    return out


def _mutated(rng, tree, depth):
    out = dict(tree)
    for name in rng.sample([b"a", b"b", b"c", b"d", b"e"], rng.randint(0, 3)):
        roll = rng.random()
        if name in out and isinstance(out[name], dict) and roll < 0.5:
            out[name] = _mutated(rng, out[name], depth - 1)
        elif roll < 0.6:
            out.pop(name, None)
        elif roll < 0.7 and depth:
            out[name] = _random_tree(rng, depth - 1)  # maybe a folder for a file
        elif roll < 0.8 and isinstance(out.get(name), bytes):
            out[name] = (0o100755, out[name])  # its mode alone
        elif roll < 0.8:
            out[name] = (0o100755, str(rng.randint(0, 3)).encode())
        else:
            out[name] = str(rng.randint(0, 3)).encode()
    return out


@pytest.mark.parametrize("seed", range(300))
def test_a_full_diff_finds_what_dulwich_finds(seed):
    """Issue 30: the history cache's diff of a commit, made from the entries
    that differ, lists the changes dulwich's tree diff lists."""
    rng = random.Random(seed)
    objects = MemoryObjectStore()
    before = _random_tree(rng, 3)
    after = _mutated(rng, before, 3)
    old = _moded_tree(objects, before) if seed % 10 else None  # a first commit
    new = _moded_tree(objects, after)
    assert sorted(tree_changes(Trees(objects, keep=1), old, new)) == _dulwich_pairs(
        objects, old, new
    )


def test_a_file_that_changed_kind_is_left_to_dulwich():
    objects = MemoryObjectStore()
    old = _moded_tree(objects, {b"d": {b"f": b"x"}})
    link = _moded_tree(objects, {b"d": {b"f": (0o120000, b"x")}})
    assert tree_changes(Trees(objects), old, link) is None
    twice = _raw_tree(
        objects,
        b"40000 d\0"
        + bytes.fromhex(objects[objects[old.hex().encode()][b"d"][1]].id.decode())
        + b"40000 d\0"
        + bytes(20),
    )
    assert tree_changes(Trees(objects), old, twice) is None
