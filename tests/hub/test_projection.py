"""The projection: incremental catch-up, the lock, rebuilds, embedder changes."""

from __future__ import annotations

import fcntl
import shutil
import socket
import subprocess
import threading
import time
from datetime import UTC, datetime

import pytest

from ctx import engine
from ctx.engine import Draft, Store
from ctx.hub.config import HubConfig
from ctx.hub.retrieval.index.projection import (
    FORMAT,
    PENDING_MAX,
    REPLY_TO,
    Projection,
)
from ctx.hub.retrieval.index.reuse import REPLY_TO_FORMAT
from ctx.hub.retrieval.sources import open_sources

HASHING = HubConfig(embedder={"kind": "hashing"})


def remember(store, text, branch=None, allow_duplicate=False, **kw):
    who = engine.Intent(agent="tester", intent="observe")
    draft = Draft(text=text, **kw)
    done = engine.remember(
        store, draft, who, branch=branch, allow_duplicate=allow_duplicate
    )
    return done.ids[0]


def found(projection, text, branch=None):
    """Memory ids the BM25 channel finds for ``text`` on a branch's tip."""
    [source] = open_sources(projection, branch=branch)
    hits = projection.searcher(source.view).search_bm25(text, 500)
    return {source.view.by_blob[blob] for blob, _ in hits}


@pytest.fixture
def projection(disk_store):
    return Projection.for_store(disk_store, HASHING)


def test_a_new_commit_indexes_only_its_new_blob(disk_store, projection):
    for i in range(20):
        remember(disk_store, f"fact number {i} about turbines")
    open_sources(projection)
    assert projection.last_catch_up.indexed == 20
    new = remember(disk_store, "a fact about pelicans")
    assert found(projection, "pelicans") == {new}
    assert projection.last_catch_up.indexed == 1
    assert projection.last_catch_up.embedded == 1


def test_a_view_of_an_indexed_tip_indexes_nothing(disk_store, projection):
    remember(disk_store, "alpha")
    open_sources(projection)
    before = projection.last_catch_up
    open_sources(projection)
    assert projection.last_catch_up is before


def test_commits_by_another_store_object_are_seen(disk_store, projection, clock):
    remember(disk_store, "first thing")
    assert found(projection, "first")
    other = Store.open(disk_store.path, clock=clock)
    new = remember(other, "second thing written elsewhere")
    other.close()
    assert found(projection, "elsewhere") == {new}


def test_a_git_command_moving_the_branch_is_seen(disk_store, projection):
    keep = remember(disk_store, "kept memory about rivers")
    remember(disk_store, "dropped memory about rivers")
    assert len(found(projection, "rivers")) == 2
    subprocess.run(
        [
            "git",
            "--git-dir",
            str(disk_store.path / "git"),
            "update-ref",
            "refs/heads/main",
            "refs/heads/main~1",
        ],
        check=True,
    )
    assert found(projection, "rivers") == {keep}


def test_a_second_process_indexes_nothing_the_first_indexed(disk_store, projection):
    for i in range(5):
        remember(disk_store, f"shared memory {i}")
    open_sources(projection)
    second = Projection.for_store(disk_store, HASHING)
    open_sources(second)
    assert second.last_catch_up is None
    assert len(found(second, "shared")) == 5


def test_edits_in_a_one_branch_store_leave_no_stale_documents(disk_store, projection):
    memory_id = remember(disk_store, "the old wording")
    open_sources(projection)
    who = engine.Intent(agent="tester", intent="refine")
    engine.edit(disk_store, memory_id, who, body="the new wording")
    [source] = open_sources(projection)
    assert found(projection, "old") == set()
    assert projection.lexical.count() == len(source.view.blobs) == 1
    assert len(projection.vectors) == 1
    assert source.view.complete


def test_a_view_with_long_memories_needs_no_filter(disk_store, projection):
    # A long memory has a vector per passage: the view is still complete
    # when every memory has its vectors, so searches skip the filter.
    remember(disk_store, "a short one")
    long_id = remember(
        disk_store, "\n".join(f"line {i} of the kite log" for i in range(150))
    )
    [source] = open_sources(projection)
    assert len(projection.vectors) > projection.vectors.blob_count() == 2
    assert source.view.complete
    assert found(projection, "kite") == {long_id}


def test_branches_share_blobs_and_filter_by_their_live_set(disk_store, projection):
    base = remember(disk_store, "common knowledge about kites")
    engine.create_branch(disk_store, "agent")
    mine = remember(disk_store, "agent-only note about kites", branch="agent")
    assert found(projection, "kites", branch="agent") == {base, mine}
    assert found(projection, "kites") == {base}
    assert projection.lexical.count() == 2  # the shared blob is indexed once


def hold_lock(projection):
    lock = (projection.folder / "lock").open("rb")
    fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
    return lock


def test_a_busy_lock_scores_few_new_memories_in_memory(disk_store, projection):
    remember(disk_store, "indexed already")
    open_sources(projection)
    marks = projection.watermarks()
    new = remember(disk_store, "brand new memory about owls")
    lock = hold_lock(projection)
    try:
        other = Projection.for_store(disk_store, HASHING)
        [source] = open_sources(other)
        assert source.view.pending
        assert found(other, "owls") == {new}
        hits = other.searcher(source.view).search_vectors(
            "brand new memory about owls", 1
        )
        assert source.view.by_blob[hits[0][0]] == new
        assert other.watermarks() == marks  # nothing written meanwhile
    finally:
        lock.close()
    assert found(other, "owls") == {new}
    assert other.watermarks() != marks


def test_an_overlay_searches_the_pending_memories_of_both_branches(
    disk_store, projection
):
    from ctx.hub.config import RecallConfig
    from ctx.hub.retrieval.packing import recall

    remember(disk_store, "indexed already")
    open_sources(projection)
    engine.create_branch(disk_store, "side")
    ours = remember(disk_store, "owls nest in the old barn")
    theirs = remember(disk_store, "owls hunt at dusk", branch="side")
    lock = hold_lock(projection)
    try:
        other = Projection.for_store(disk_store, HASHING)
        sources = open_sources(other, overlay=["side"])
        assert all(source.view.pending for source in sources)
        result = recall(
            other,
            sources,
            "owls",
            config=RecallConfig(vector=0, fuzzy=0),
            now=datetime(2030, 1, 1, tzinfo=UTC),
        )
    finally:
        lock.close()
    assert {hit.id for hit in result.hits} == {ours, theirs}


@pytest.mark.parametrize("deleted", ["index", "lexical-*", "vectors-*"])
def test_a_kept_projection_rebuilds_an_index_deleted_under_it(
    disk_store, projection, deleted
):
    # As under a running hub: the index is deleted after the projection
    # opened it; the next view rebuilds it, with a notice, and loses nothing.
    owl = remember(disk_store, "owls nest in the old barn")
    assert found(projection, "owls") == {owl}
    assert projection.notices == []
    folder = projection.folder
    for path in [folder] if deleted == "index" else folder.glob(deleted):
        shutil.rmtree(path)
    assert found(projection, "owls") == {owl}
    assert len(projection.notices) == 1
    assert projection.notices[0].endswith("rebuilt it.")
    projection.notices.clear()
    kite = remember(disk_store, "kites fly over the barn")
    assert found(projection, "barn") == {owl, kite}
    assert projection.notices == []
    assert projection.lexical.count() == len(projection.vectors) == 2


def test_a_busy_lock_with_much_to_index_waits_for_it(disk_store, projection):
    who = engine.Intent(agent="tester", intent="import")
    drafts = [Draft(text=f"bulk memory {i}") for i in range(PENDING_MAX + 1)]
    engine.remember_many(disk_store, drafts, who)
    lock = hold_lock(projection)
    threading.Timer(0.3, lock.close).start()
    started = time.monotonic()
    [source] = open_sources(projection)
    assert time.monotonic() - started >= 0.25
    assert not source.view.pending
    assert len(found(projection, "bulk")) == PENDING_MAX + 1


@pytest.mark.parametrize(
    "damage",
    [
        lambda folder: (folder / "state.json").write_text("{not json"),
        lambda folder: next(folder.glob("vectors-*/vectors.json")).unlink(),
        lambda folder: [
            p.write_bytes(b"garbage") for p in folder.glob("lexical-*/*.json")
        ],
        lambda folder: (folder / "state.json").write_text('{"format": 99}'),
    ],
    ids=["state", "vectors", "lexical", "format"],
)
def test_a_damaged_index_is_rebuilt_with_a_notice(disk_store, projection, damage):
    memory_id = remember(disk_store, "survives any damage")
    open_sources(projection)
    damage(projection.folder)
    again = Projection.for_store(disk_store, HASHING)
    assert any("rebuilt" in n for n in again.notices)
    assert found(again, "damage") == {memory_id}


def test_a_deleted_index_folder_is_rebuilt(disk_store, projection):
    import shutil

    memory_id = remember(disk_store, "comes back")
    open_sources(projection)
    shutil.rmtree(projection.folder)
    again = Projection.for_store(disk_store, HASHING)
    assert found(again, "comes") == {memory_id}


class Counting:
    """Wraps an embedder, counting the texts it embeds."""

    def __init__(self, inner):
        self.inner = inner
        self.texts = []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def embed(self, texts):
        self.texts += texts
        return self.inner.embed(texts)


def counted(store):
    projection = Projection.for_store(store, HASHING)
    projection.embedder = Counting(projection.embedder)
    return projection


def test_a_tag_edit_reuses_the_vector_of_the_same_text(disk_store):
    projection = counted(disk_store)
    memory_id = remember(disk_store, "vectors are cached by text", tags=("a:b",))
    [source] = open_sources(projection)
    before = projection.vectors.vectors_of(
        [source.view.catalog.entries[memory_id].blob]
    )
    engine.tag(disk_store, memory_id, ["c:d"], engine.Intent(agent="t", intent="tag"))
    [source] = open_sources(projection)
    blob = source.view.catalog.entries[memory_id].blob
    assert projection.last_catch_up.indexed == 1
    assert (projection.last_catch_up.embedded, projection.last_catch_up.reused) == (
        0,
        1,
    )
    assert projection.embedder.texts == ["vectors are cached by text"]
    assert (projection.vectors.vectors_of([blob]) == before).all()
    assert len(projection.vectors) == 1  # the old blob's vector was collected
    engine.edit(disk_store, memory_id, engine.Intent(agent="t", intent="e"), body="new")
    open_sources(projection)
    assert projection.last_catch_up.embedded == 1  # a new text is embedded


@pytest.mark.parametrize("reuse", [True, False])
def test_reindex_reuses_the_vectors_it_drops_unless_told(disk_store, reuse):
    for i in range(30):
        remember(disk_store, f"memory {i} about caching")
    projection = counted(disk_store)
    open_sources(projection)
    assert len(projection.embedder.texts) == 30
    projection.reindex(reuse_vectors=reuse)
    [source] = open_sources(projection)
    assert projection.last_catch_up.indexed == 30
    assert projection.last_catch_up.reused == (30 if reuse else 0)
    assert len(projection.embedder.texts) == (30 if reuse else 60)
    assert projection.searcher(source.view).search_vectors("memory 7 about caching", 1)


def test_an_old_format_index_is_rebuilt_keeping_its_vectors(disk_store, projection):
    remember(disk_store, "survives a format change")
    open_sources(projection)
    state = projection.folder / "state.json"
    written = state.read_text()
    assert f'"format":{FORMAT}' in written
    state.write_text(written.replace(f'"format":{FORMAT}', f'"format":{FORMAT - 1}'))
    again = counted(disk_store)
    assert any("rebuilt" in n for n in again.notices)
    [source] = open_sources(again)
    assert again.embedder.texts == []
    assert again.searcher(source.view).search_vectors("format change", 1)


def test_a_reply_to_is_embedded_before_the_text(disk_store):
    projection = counted(disk_store)
    asked = "What are your plans for the summer?"
    answer = remember(
        disk_store, "Researching adoption agencies.", meta={REPLY_TO: asked}
    )
    # same text, no context
    remember(disk_store, "Researching adoption agencies.", allow_duplicate=True)
    open_sources(projection)
    assert sorted(projection.embedder.texts) == [
        "Researching adoption agencies.",
        f"{asked}\nResearching adoption agencies.",
    ]
    assert found(projection, "summer plans") == set()  # BM25 does not see it
    [source] = open_sources(projection)
    best = projection.searcher(source.view).search_vectors("plans for the summer", 1)
    assert source.view.by_blob[best[0][0]] == answer


def test_a_rebuild_from_before_reply_to_embeds_those_memories_again(disk_store):
    remember(disk_store, "Researching adoption agencies.", meta={REPLY_TO: "Plans?"})
    remember(disk_store, "an ordinary memory")
    first = counted(disk_store)
    open_sources(first)
    state = first.folder / "state.json"
    written = state.read_text()
    old = REPLY_TO_FORMAT - 1
    state.write_text(written.replace(f'"format":{FORMAT}', f'"format":{old}'))
    again = counted(disk_store)
    open_sources(again)
    assert again.embedder.texts == ["Plans?\nResearching adoption agencies."]
    assert again.last_catch_up.reused == 1


def test_changing_the_embedder_rebuilds_the_vectors(disk_store, projection):
    remember(disk_store, "vectors depend on the embedder")
    open_sources(projection)
    assert projection.vectors.dimensions == 384
    small = HubConfig(embedder={"kind": "hashing", "dimensions": 64})
    again = Projection.for_store(disk_store, small)
    [source] = open_sources(again)
    assert again.vectors.dimensions == 64
    assert len(again.vectors) == 1
    assert again.embedder_name == "hashing-64@1"
    assert again.searcher(source.view).search_vectors("embedder", 1)


def closed_port_url():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_an_embedder_that_is_down_leaves_lexical_search_working(disk_store):
    down = HubConfig(
        embedder={
            "kind": "openai",
            "base_url": closed_port_url(),
            "model": "m",
            "timeout": 1.0,
        }
    )
    memory_id = remember(disk_store, "lexical still answers")
    projection = Projection.for_store(disk_store, down)
    [source] = open_sources(projection)
    assert found(projection, "lexical") == {memory_id}
    assert any("lexical only" in w for w in projection.warnings)
    assert not source.view.complete
    assert projection.watermarks() == {}  # retried on the next catch-up
    again = Projection.for_store(disk_store, down)
    open_sources(again)
    assert again.last_catch_up.indexed == 0  # the document is not added twice
    assert again.last_catch_up.embedded == 0
    # Once the embedder works, the vectors are built.
    healthy = Projection.for_store(disk_store, HASHING)
    [source] = open_sources(healthy)
    assert len(healthy.vectors) == 1


def test_an_in_memory_store_gets_in_memory_indexes(store):
    remember(store, "nothing on disk")
    projection = Projection.for_store(store, HASHING)
    assert projection.folder is None
    assert len(found(projection, "disk")) == 1
    assert projection.size_bytes() == 0


def test_a_past_commit_is_indexed_without_moving_watermarks(disk_store, projection):
    old = remember(disk_store, "original text about herons")
    first = disk_store.branch_tip("main")
    who = engine.Intent(agent="tester", intent="refine")
    engine.edit(disk_store, old, who, body="rewritten text about egrets")
    open_sources(projection)
    marks = projection.watermarks()
    [source] = open_sources(projection, at=first)
    hits = projection.searcher(source.view).search_bm25("herons", 5)
    assert [source.view.by_blob[b] for b, _ in hits] == [old]
    assert projection.watermarks() == marks


def test_at_a_date_reads_the_last_commit_made_by_then(disk_store, projection):
    remember(disk_store, "early memory")
    remember(disk_store, "late memory")
    tips = [e.commit for e in engine.log(disk_store, limit=3)]
    when = tips[1].time
    [source] = open_sources(projection, at=when)
    assert source.commit == tips[1].id
    with pytest.raises(engine.CommitNotFoundError):
        open_sources(projection, at=datetime(2000, 1, 1, tzinfo=UTC))


def test_index_size_counts_only_the_current_generation(disk_store, projection):
    for i in range(30):
        remember(disk_store, f"memory {i} about sizes")
    open_sources(projection)
    before = projection.size_bytes()
    projection.reindex()
    open_sources(projection)
    assert len(list(projection.folder.glob("lexical-*"))) == 2  # old one kept a while
    assert projection.size_bytes() < 1.5 * before


def test_a_growing_flat_index_becomes_hnsw(disk_store, monkeypatch):
    from ctx.hub.retrieval.index import projection as module
    from ctx.hub.retrieval.index.hnsw import HnswVectors

    monkeypatch.setattr(module, "CROSSOVER", 10)
    ids = [remember(disk_store, f"memory {i} about herons") for i in range(12)]
    projection = Projection.for_store(disk_store, HASHING)
    [source] = open_sources(projection)
    assert isinstance(projection.vectors, HnswVectors)
    assert len(projection.vectors) == 12
    again = Projection.for_store(disk_store, HASHING)
    [source] = open_sources(again)
    assert isinstance(again.vectors, HnswVectors)
    hits = again.searcher(source.view).search_vectors("memory 3 about herons", 1)
    assert source.view.by_blob[hits[0][0]] == ids[3]


def test_an_exact_projection_leaves_the_hnsw_graph_on_disk(disk_store, monkeypatch):
    from ctx.hub.retrieval.index import projection as module
    from ctx.hub.retrieval.packing import recall

    monkeypatch.setattr(module, "CROSSOVER", 10)
    birds = "avocet bittern curlew dunlin eider fulmar gannet heron ibis jay kite loon"
    for bird in birds.split():
        remember(disk_store, f"a {bird} seen on the estuary at dawn")
    open_sources(Projection.for_store(disk_store, HASHING))  # builds the graph
    graphs = sorted(disk_store.path.glob("index/vectors-*/hnsw-*.bin"))
    loaded = Projection.for_store(disk_store, HASHING)
    exact = Projection.for_store(disk_store, HASHING, exact=True)
    assert loaded.vectors.graph_loaded
    assert not exact.vectors.graph_loaded
    new = remember(disk_store, "a new memory about egrets")  # a catch-up: the delta
    answers = {}
    for name, projection in (("loaded", loaded), ("exact", exact)):
        for query in ("dunlin at dawn", "egrets"):
            result = recall(
                projection,
                open_sources(projection),
                query,
                config=HASHING.recall,
                now=datetime.now(UTC),
            )
            answers[name, query] = [hit.id for hit in result.hits]
    assert answers["loaded", "egrets"][0] == new
    for query in ("dunlin at dawn", "egrets"):  # equal scores may swap places
        exact_ids, loaded_ids = answers["exact", query], answers["loaded", query]
        assert exact_ids[0] == loaded_ids[0]
        assert sorted(exact_ids) == sorted(loaded_ids)
    assert not exact.vectors.graph_loaded
    assert sorted(disk_store.path.glob("index/vectors-*/hnsw-*.bin")) == graphs


def test_a_loaded_graph_is_kept_when_another_process_appends(disk_store, monkeypatch):
    from ctx.hub.retrieval.index import projection as module
    from ctx.hub.retrieval.index.hnsw import HnswVectors

    monkeypatch.setattr(module, "CROSSOVER", 10)
    for i in range(12):
        remember(disk_store, f"a wader number {i} on the mudflat")
    hub = Projection.for_store(disk_store, HASHING)
    open_sources(hub)  # builds the graph and keeps it
    assert hub.vectors.graph_loaded
    new = remember(disk_store, "a spoonbill on the mudflat")
    other = Projection.for_store(disk_store, HASHING, exact=True)
    open_sources(other)  # another process catches up: a delta, same graph

    def refuse(self):
        raise AssertionError("the graph was read again")

    monkeypatch.setattr(HnswVectors, "_load_graph", refuse)
    built = hub.last_catch_up
    [source] = open_sources(hub)
    assert hub.vectors.graph_loaded
    assert hub.last_catch_up is built  # the other process indexed it
    hits = hub.searcher(source.view).search_vectors("a spoonbill on the mudflat", 1)
    assert source.view.by_blob[hits[0][0]] == new
