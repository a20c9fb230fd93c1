"""Vector indexes: exact flat search, HNSW, persistence, bad input."""

import json

import numpy as np
import pytest

from ctx.engine import StoreError
from ctx.hub.retrieval.index.hnsw import HnswVectors
from ctx.hub.retrieval.index.rows import FlatVectors
from ctx.hub.retrieval.index.vectors import (
    CROSSOVER,
    SIDECAR,
    VectorIndex,
    VectorIndexError,
    choose_vectors,
    open_vectors,
    read_rows,
)

DIM = 32


def unit(count, dim=DIM, seed=0):
    rows = np.random.default_rng(seed).standard_normal((count, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def names(count, prefix="k"):
    return [f"{prefix}{i:05d}" for i in range(count)]


def exact(vectors, keys, query, k, allowed=None):
    scores = vectors @ query
    order = np.argsort(-scores, kind="stable")
    picked = [keys[i] for i in order if allowed is None or keys[i] in allowed]
    return picked[:k]


class GraphOnly(HnswVectors):
    """Every vector goes into the graph at once (no exact delta)."""

    DELTA_MAX = 1


class Mixed(HnswVectors):
    """A graph of the first rows and an exact delta of the last few."""

    DELTA_MAX = 16


KINDS = {"flat": FlatVectors, "hnsw": GraphOnly, "hnsw-delta": Mixed}


@pytest.fixture(params=list(KINDS))
def kind(request):
    return request.param


def make(kind, path=None, dim=DIM):
    return KINDS[kind](dim, path)


def test_flat_top_k_equals_brute_force_argsort():
    vectors, keys = unit(2000), names(2000)
    index = FlatVectors(DIM)
    index.add(keys[:1500], vectors[:1500])
    index.add(keys[1500:], vectors[1500:])
    assert len(index) == 2000
    for q in unit(20, seed=1):
        hits = index.search(q, 10)
        assert [key for key, _ in hits] == exact(vectors, keys, q, 10)
        assert [s for _, s in hits] == pytest.approx(
            sorted((vectors @ q).tolist(), reverse=True)[:10], abs=1e-5
        )


def test_k_larger_than_the_index_returns_everything(kind):
    index = make(kind)
    index.add(names(5), unit(5))
    assert len(index.search(unit(1, seed=3)[0], 50)) == 5
    assert index.search(unit(1, seed=3)[0], 0) == []
    assert make(kind).search(unit(1)[0], 10) == []


def test_vectors_are_normalised_on_the_way_in(kind):
    index = make(kind)
    index.add(["a", "b"], [[3.0] + [0.0] * (DIM - 1), [0.0, 2.0] + [0.0] * (DIM - 2)])
    hits = index.search([5.0] + [0.0] * (DIM - 1), 1)
    assert hits[0][0] == "a"
    assert hits[0][1] == pytest.approx(1.0, abs=1e-5)


def test_allowed_set_filters(kind):
    vectors, keys = unit(2000), names(2000)
    index = make(kind)
    index.add(keys, vectors)
    rng = np.random.default_rng(7)
    for size in (1, 30, 1500):
        allowed = set(rng.choice(keys, size=size, replace=False).tolist())
        allowed.add("unknown-key")
        q = unit(1, seed=size)[0]
        hits = [key for key, _ in index.search(q, 10, allowed)]
        assert set(hits) <= allowed
        assert len(hits) == min(10, size)
        if kind == "flat" or size <= 30:
            assert hits == exact(vectors, keys, q, 10, allowed)
    assert index.search(unit(1)[0], 10, set()) == []
    assert index.search(unit(1)[0], 10, ["nope"]) == []


def test_remove_and_compact(kind, tmp_path):
    vectors, keys = unit(500), names(500)
    index = make(kind, tmp_path / "v")
    index.add(keys, vectors)
    gone = set(keys[::3])
    index.remove([*gone, "never-there"])
    assert len(index) == 500 - len(gone)
    assert "k00000" not in index
    assert "k00001" in index
    live = [k for k in keys if k not in gone]
    live_vectors = np.array([vectors[i] for i, k in enumerate(keys) if k not in gone])
    q = unit(1, seed=9)[0]
    before = [key for key, _ in index.search(q, 10)]
    assert not set(before) & gone
    assert before == exact(live_vectors, live, q, 10)
    index.compact()
    assert len(index) == len(live)
    assert index.keys() == live
    assert [key for key, _ in index.search(q, 10)] == before
    reopened = open_vectors(tmp_path / "v")
    assert reopened.kind == index.kind
    assert reopened.keys() == live
    assert [key for key, _ in reopened.search(q, 10)] == before
    # The sidecar, the vectors and (hnsw) the graph: older files are gone.
    assert len(list((tmp_path / "v").iterdir())) == (2 if kind == "flat" else 3)


def test_adding_a_present_key_replaces_its_vector(kind):
    index = make(kind)
    a, b = unit(2, seed=4)
    index.add(["x", "y"], [a, b])
    index.add(["x"], [b])
    assert len(index) == 2
    hits = index.search(b, 2)
    assert {key for key, _ in hits} == {"x", "y"}
    assert hits[0][1] == pytest.approx(1.0, abs=1e-5)
    assert hits[1][1] == pytest.approx(1.0, abs=1e-5)


def test_persistence_round_trip(kind, tmp_path):
    vectors, keys = unit(300), names(300)
    path = tmp_path / "idx"
    index = make(kind, path)
    index.add(keys[:200], vectors[:200])
    index.remove(["k00007"])
    index.save()
    index.add(keys[200:], vectors[200:])
    index.save()
    reopened = type(index).open(path)
    assert reopened.dimensions == DIM
    assert reopened.path == path
    assert len(reopened) == 299
    assert "k00007" not in reopened
    for q in unit(5, seed=2):
        assert reopened.search(q, 10) == pytest.approx(index.search(q, 10))
    # The reopened index keeps growing and saving.
    reopened.add(["new"], unit(1, seed=11))
    reopened.save()
    assert "new" in open_vectors(path)
    assert open_vectors(path).search(unit(1, seed=11)[0], 1)[0][0] == "new"


def test_unsaved_flat_rows_are_ignored_on_open(tmp_path):
    # An interrupted save leaves rows past the sidecar's: the old index reads.
    index = FlatVectors(DIM, tmp_path)
    index.add(names(10), unit(10))
    index.save()
    index.add(["late"], unit(1, seed=5))
    reopened = FlatVectors.open(tmp_path)
    assert len(reopened) == 10
    assert "late" not in reopened
    reopened.add(["later"], unit(1, seed=6))
    reopened.save()
    again = FlatVectors.open(tmp_path)
    assert again.keys() == [*names(10), "later"]
    assert again.search(unit(1, seed=6)[0], 1)[0][0] == "later"


def test_hnsw_recall_at_10_against_exact():
    vectors, keys = unit(2000, dim=64), names(2000)
    index = GraphOnly(64)
    index.add(keys, vectors)
    queries = unit(100, dim=64, seed=1)
    found = sum(
        len({key for key, _ in index.search(q, 10)} & set(exact(vectors, keys, q, 10)))
        for q in queries
    )
    assert found / (10 * len(queries)) >= 0.95


def test_hnsw_grows_past_its_initial_capacity():
    index = GraphOnly(8)
    vectors = unit(3000, dim=8)
    for start in range(0, 3000, 700):
        index.add(names(3000)[start : start + 700], vectors[start : start + 700])
    assert len(index) == 3000
    assert index.search(vectors[2999], 1)[0][0] == "k02999"


def test_mismatched_dimensions_refused(kind, tmp_path):
    index = make(kind)
    with pytest.raises(VectorIndexError, match="do not fit an index of 32 dimensions"):
        index.add(["a"], np.ones((1, 31), dtype=np.float32))
    with pytest.raises(VectorIndexError, match="do not fit"):
        index.search(np.ones(33, dtype=np.float32), 5)
    with pytest.raises(VectorIndexError, match=r"Got 2 keys for 1 vector\."):
        index.add(["a", "b"], unit(1))
    with pytest.raises(VectorIndexError, match="must differ"):
        index.add(["a", "a"], unit(2))
    with pytest.raises(VectorIndexError, match="finite"):
        index.add(["a"], np.full((1, DIM), np.nan, dtype=np.float32))
    assert len(index) == 0


def test_corrupt_sidecar_refused(kind, tmp_path):
    index = make(kind, tmp_path)
    index.add(names(20), unit(20))
    index.save()
    sidecar = tmp_path / SIDECAR
    good = sidecar.read_bytes()
    for bad in (b"", b"{not json", b'{"version": 1}', good.replace(b'"k00003"', b"3")):
        sidecar.write_bytes(bad)
        with pytest.raises(VectorIndexError, match="is corrupt") as info:
            open_vectors(tmp_path)
        assert isinstance(info.value, StoreError)
        assert info.value.hint == "Run `ctx reindex`."
        assert "\n" not in str(info.value)


def test_size_mismatch_refused(kind, tmp_path):
    index = make(kind, tmp_path)
    index.add(names(20), unit(20))
    index.save()
    for data in [p for p in tmp_path.iterdir() if p.name != SIDECAR]:
        good = data.read_bytes()
        data.write_bytes(good[:-8])
        with pytest.raises(VectorIndexError, match="holds"):
            type(index).open(tmp_path)
        data.unlink()
        with pytest.raises(VectorIndexError, match="lacks its"):
            type(index).open(tmp_path)
        data.write_bytes(good)
    assert len(type(index).open(tmp_path)) == 20


def test_frozen_allowed_sets_follow_changes(kind):
    vectors = unit(50)
    index = make(kind)
    index.add(names(40), vectors[:40])
    allowed = frozenset(names(50)[::2])
    q = vectors[44]
    assert "k00044" not in {key for key, _ in index.search(q, 50, allowed)}
    index.add(names(50)[40:], vectors[40:])
    assert index.search(q, 1, allowed)[0][0] == "k00044"
    index.remove(["k00044"])
    assert "k00044" not in {key for key, _ in index.search(q, 50, allowed)}
    index.compact()
    assert len(index.search(q, 50, allowed)) == 24


def test_hnsw_filtered_graph_search():
    # exact_below=0 sends every allowed set through hnswlib's filter.
    vectors, keys = unit(2000, dim=64), names(2000)
    index = GraphOnly(64, exact_below=0)
    index.add(keys, vectors)
    allowed = set(keys[::2])
    queries = unit(50, dim=64, seed=3)
    found = 0
    for q in queries:
        hits = [key for key, _ in index.search(q, 10, allowed)]
        assert set(hits) <= allowed
        found += len(set(hits) & set(exact(vectors, keys, q, 10, allowed)))
    assert found / (10 * len(queries)) >= 0.95
    # Fewer allowed than asked for: all of them come back.
    assert len(index.search(queries[0], 10, keys[:3])) == 3


def test_missing_index_and_wrong_kind_refused(tmp_path):
    with pytest.raises(VectorIndexError, match="No vector index at"):
        open_vectors(tmp_path / "none")
    index = FlatVectors(DIM, tmp_path)
    index.add(["a"], unit(1))
    index.save()
    with pytest.raises(VectorIndexError, match="is flat, not hnsw"):
        HnswVectors.open(tmp_path)


def test_an_index_in_memory_cannot_be_saved(kind):
    with pytest.raises(VectorIndexError, match="cannot be saved"):
        make(kind).save()


def test_choose_vectors_picks_by_size(tmp_path):
    assert isinstance(choose_vectors(None, 10, DIM), FlatVectors)
    assert isinstance(choose_vectors(None, CROSSOVER - 1, DIM), FlatVectors)
    assert isinstance(choose_vectors(None, CROSSOVER, DIM), HnswVectors)
    chosen = choose_vectors(tmp_path, 500, DIM, crossover=100)
    assert isinstance(chosen, HnswVectors)
    assert isinstance(chosen, VectorIndex)
    assert chosen.path == tmp_path


def test_hnsw_saves_new_vectors_without_rewriting_the_graph(tmp_path):
    vectors, keys = unit(100), names(100)
    index = Mixed(DIM, tmp_path)
    index.add(keys[:90], vectors[:90])
    index.save()
    graph = open_vectors(tmp_path)
    files = {p.name for p in tmp_path.glob("hnsw-*.bin")}
    index.add(keys[90:95], vectors[90:95])  # under DELTA_MAX: the delta only
    index.save()
    assert {p.name for p in tmp_path.glob("hnsw-*.bin")} == files
    reopened = open_vectors(tmp_path)
    assert len(reopened) == 95
    assert len(graph) == 90
    for i in (3, 92):  # one in the graph, one in the delta
        assert reopened.search(vectors[i], 1)[0][0] == keys[i]
    index.add(keys[95:], vectors[95:])
    index.add(["x"], unit(1, seed=9))
    index.add(names(20, "y"), unit(20, seed=8))  # past DELTA_MAX: graph grows
    index.save()
    assert {p.name for p in tmp_path.glob("hnsw-*.bin")} != files


def test_hnsw_removed_rows_stay_removed_after_reopening(tmp_path):
    vectors, keys = unit(60), names(60)
    index = Mixed(DIM, tmp_path)
    index.add(keys, vectors)
    index.save()
    index.remove([keys[5], keys[58]])  # one in the graph, one in the delta
    index.save()
    reopened = open_vectors(tmp_path)
    found = {key for key, _ in reopened.search(vectors[5], 60)}
    assert keys[5] not in found
    assert keys[58] not in found
    assert len(found) == 58


def test_read_rows_maps_the_rows_of_any_kind_without_a_graph(tmp_path):
    vectors, keys = unit(60), names(60)
    index = Mixed(DIM, tmp_path)
    index.add(keys, vectors)
    index.remove([keys[7]])
    index.save()
    rows = read_rows(tmp_path)
    assert type(rows) is FlatVectors
    assert len(rows) == 59
    assert keys[7] not in rows
    assert np.allclose(rows.vectors_of(keys[10:20]), index.vectors_of(keys[10:20]))
    assert rows.search(vectors[3], 1)[0][0] == keys[3]
    with pytest.raises(VectorIndexError):
        rows.save()  # bound to no folder: the HNSW index there is left alone
    assert isinstance(open_vectors(tmp_path), HnswVectors)


@pytest.mark.parametrize("on_disk", [False, True])
def test_a_flat_index_converts_to_hnsw_in_place(tmp_path, on_disk):
    vectors, keys = unit(300), names(300)
    flat = FlatVectors(DIM, tmp_path if on_disk else None)
    flat.add(keys, vectors)
    flat.remove([keys[7]])
    graph = HnswVectors.from_flat(flat)
    assert len(graph) == 299
    for i in (0, 150, 299):
        assert graph.search(vectors[i], 1)[0][0] == keys[i]
    assert keys[7] not in {key for key, _ in graph.search(vectors[7], 300)}
    graph.add(["new"], unit(1, seed=5))
    assert graph.search(unit(1, seed=5)[0], 1)[0][0] == "new"
    if on_disk:
        graph.save()
        reopened = open_vectors(tmp_path)
        assert reopened.kind == "hnsw"
        assert len(reopened) == 300
        assert reopened.search(vectors[150], 1)[0][0] == keys[150]


def saved_mixed(tmp_path, count=80):
    vectors, keys = unit(count), names(count)
    index = Mixed(DIM, tmp_path)
    index.add(keys, vectors)
    index.save()
    return vectors, keys


def test_hnsw_opened_without_its_graph_searches_exactly(tmp_path):
    vectors, keys = saved_mixed(tmp_path)
    index = Mixed.open(tmp_path, graph=False)
    assert not index.graph_loaded
    for q in unit(10, seed=4):
        assert [key for key, _ in index.search(q, 10)] == exact(vectors, keys, q, 10)
    allowed = frozenset(keys[::3])
    q = unit(1, seed=5)[0]
    hits = [key for key, _ in index.search(q, 5, allowed)]
    assert hits == exact(vectors, keys, q, 5, allowed)
    assert not index.graph_loaded
    assert Mixed.open(tmp_path).graph_loaded
    assert open_vectors(tmp_path).graph_loaded
    assert not open_vectors(tmp_path, graph=False).graph_loaded


def test_hnsw_without_its_graph_saves_a_delta_and_keeps_the_graph_file(tmp_path):
    vectors, keys = saved_mixed(tmp_path)
    files = sorted(p.name for p in tmp_path.glob("hnsw-*.bin"))
    index = Mixed.open(tmp_path, graph=False)
    index.add(["new"], unit(1, seed=6))  # under DELTA_MAX: no graph needed
    index.remove([keys[3]])
    index.save()
    assert not index.graph_loaded
    assert sorted(p.name for p in tmp_path.glob("hnsw-*.bin")) == files
    reopened = Mixed.open(tmp_path)  # the graph, and the removal marked in it
    assert reopened.search(unit(1, seed=6)[0], 1)[0][0] == "new"
    assert keys[3] not in {key for key, _ in reopened.search(vectors[3], 81)}
    assert len(reopened.search(vectors[3], 100)) == 80


def test_hnsw_without_its_graph_loads_it_when_the_delta_fills(tmp_path):
    vectors, keys = saved_mixed(tmp_path)
    index = Mixed.open(tmp_path, graph=False)
    index.remove([keys[10]])  # marked in the graph when it is loaded
    more = unit(Mixed.DELTA_MAX, seed=7)
    index.add(names(Mixed.DELTA_MAX, "m"), more)
    assert index.graph_loaded
    index.save()
    reopened = Mixed.open(tmp_path)
    assert len(reopened) == 80 - 1 + Mixed.DELTA_MAX
    assert keys[10] not in {key for key, _ in reopened.search(vectors[10], 200)}
    assert reopened.search(more[4], 1)[0][0] == "m00004"


def test_hnsw_saved_without_a_graph_row_count_still_opens(tmp_path):
    # Sidecars written before graph_rows existed: a change reads the graph.
    vectors, keys = saved_mixed(tmp_path)
    sidecar = json.loads((tmp_path / SIDECAR).read_text())
    del sidecar["graph_rows"]
    (tmp_path / SIDECAR).write_text(json.dumps(sidecar))
    index = Mixed.open(tmp_path, graph=False)
    assert not index.graph_loaded
    assert index.search(vectors[5], 1)[0][0] == keys[5]
    index.add(["new"], unit(1, seed=6))  # the delta's size needs the count
    assert index.graph_loaded
    index.save()
    assert json.loads((tmp_path / SIDECAR).read_text())["graph_rows"] == 80


@pytest.mark.parametrize("rows", [79, 81, 10_000])
def test_hnsw_graph_row_count_that_does_not_match_is_refused(tmp_path, rows):
    saved_mixed(tmp_path)
    sidecar = json.loads((tmp_path / SIDECAR).read_text())
    sidecar["graph_rows"] = rows
    (tmp_path / SIDECAR).write_text(json.dumps(sidecar))
    with pytest.raises(VectorIndexError):
        Mixed.open(tmp_path)


def test_reopening_keeps_the_loaded_graph_when_its_file_is_unchanged(
    tmp_path, monkeypatch
):
    vectors, keys = saved_mixed(tmp_path)
    ours = Mixed.open(tmp_path)  # a long-running reader, graph loaded
    theirs = Mixed.open(tmp_path, graph=False)  # another process writes
    theirs.add(["new"], unit(1, seed=6))
    theirs.remove([keys[4]])
    theirs.save()

    def refuse(self):
        raise AssertionError("the graph was read again")

    monkeypatch.setattr(HnswVectors, "_load_graph", refuse)
    again = open_vectors(tmp_path, previous=ours)
    assert again.graph_loaded
    assert len(again) == 80
    assert again.search(unit(1, seed=6)[0], 1)[0][0] == "new"
    found = {key for key, _ in again.search(vectors[4], 100)}
    assert keys[4] not in found
    assert len(found) == 80


def test_reopening_reads_the_graph_when_it_was_replaced(tmp_path):
    saved_mixed(tmp_path)
    ours = Mixed.open(tmp_path)
    theirs = Mixed.open(tmp_path)
    more = unit(Mixed.DELTA_MAX, seed=7)
    theirs.add(names(Mixed.DELTA_MAX, "m"), more)  # a full delta grows the graph
    theirs.save()
    again = Mixed.open(tmp_path, graph=False)
    assert not again._adopt_graph(ours)  # another graph file: read it
    again = open_vectors(tmp_path, previous=ours)
    assert again.graph_loaded
    assert again.search(more[3], 1)[0][0] == "m00003"


def test_reopening_refuses_a_graph_with_removals_the_saved_index_lacks(tmp_path):
    vectors, keys = saved_mixed(tmp_path)
    ours = Mixed.open(tmp_path)
    ours.remove([keys[9]])  # not saved: the folder still holds keys[9]
    again = Mixed.open(tmp_path, graph=False)
    assert not again._adopt_graph(ours)
    again = open_vectors(tmp_path, previous=ours)
    assert keys[9] in {key for key, _ in again.search(vectors[9], 1)}
