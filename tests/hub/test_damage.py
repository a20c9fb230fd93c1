"""A damaged index is repaired from the commits, never a crash (issue 12).

Tantivy segments with bytes changed or cut short, vector rows that fail
their checksum or are not numbers, keys reordered, a state file of garbage:
recall and search answer as before with a notice, and only what was damaged
is made again.
"""

from __future__ import annotations

import json
import threading
import time
from datetime import UTC, datetime

import numpy as np
import pytest

from ctx import engine
from ctx.engine import Draft
from ctx.hub.config import HubConfig, RecallConfig
from ctx.hub.retrieval.index.lexical import LexicalIndex
from ctx.hub.retrieval.index.lexical_errors import LexicalIndexCorruptError
from ctx.hub.retrieval.index.maintenance import index_status, reindex
from ctx.hub.retrieval.index.projection import Projection
from ctx.hub.retrieval.index.rows import BLOCK, SIDECAR
from ctx.hub.retrieval.packing import recall, search
from ctx.hub.retrieval.sources import open_sources

HASHING = HubConfig(embedder={"kind": "hashing"})
NOW = datetime(2030, 1, 1, tzinfo=UTC)
COUNT = 200


class Counting:
    """Wraps an embedder, counting the memories it embeds (not queries)."""

    def __init__(self, inner):
        self.inner = inner
        self.texts = []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def embed(self, texts):
        self.texts += [t for t in texts if t.startswith(("memory ", "pelicans nest"))]
        return self.inner.embed(texts)


def counted(store, *, exact=True):
    projection = Projection.for_store(store, HASHING, exact=exact)
    projection.embedder = Counting(projection.embedder)
    return projection


@pytest.fixture
def filled(disk_store):
    """A store of COUNT memories (one about pelicans), indexed."""
    drafts = [Draft(text=f"memory {i} about turbines and rivers") for i in range(COUNT)]
    drafts[17] = Draft(text="pelicans nest on the lighthouse rocks")
    engine.remember_many(
        disk_store, drafts, engine.Intent(agent="tester", intent="import")
    )
    open_sources(Projection.for_store(disk_store, HASHING))
    return disk_store


def pelican_answers(projection):
    """Checks recall and search (BM25 and vectors) find the pelican memory."""
    sources = open_sources(projection)
    found = recall(
        projection, sources, "pelicans lighthouse", config=RecallConfig(), now=NOW
    )
    assert "pelicans" in found.hits[0].body
    listed = search(
        projection,
        sources[0],
        "pelicans",
        config=RecallConfig(vector=0, fuzzy=0),
        now=NOW,
        limit=5,
    )
    assert [hit.body for hit in listed.hits] == [
        "pelicans nest on the lighthouse rocks"
    ]
    view = open_sources(projection)[0].view
    best = projection.searcher(view).search_vectors(
        "nesting pelicans by a lighthouse", 1
    )
    assert view.catalog.entries[view.by_blob[best[0][0]]].path
    return found


def flip(path, *, at=0.5, length=64):
    """Inverts ``length`` bytes of a file from ``at`` (a share of its size).

    In place: the file never gets shorter, which would kill a process that
    has it mapped (SIGBUS), as Tantivy maps its files.
    """
    size = path.stat().st_size
    start = min(int(size * at), max(0, size - length))
    with path.open("r+b") as file:
        file.seek(start)
        data = file.read(length)
        file.seek(start)
        file.write(bytes(b ^ 0xFF for b in data))


def segment_files(folder, suffix):
    """The files of the index's live segments (not merged-away ones) by suffix."""
    [lexical] = folder.glob("lexical-*")
    meta = json.loads((lexical / "meta.json").read_text())
    ids = [s["segment_id"].replace("-", "") for s in meta["segments"]]
    files = [lexical / f"{i}{suffix}" for i in ids]
    assert files
    return files


def spoil(path):
    """Inverts every byte of a file but its footer (Tantivy's: about 94 bytes)."""
    flip(path, at=0.0, length=path.stat().st_size - 128)


DAMAGE = {
    "term-flipped": lambda f: [spoil(p) for p in segment_files(f, ".term")],
    "idx-flipped": lambda f: [spoil(p) for p in segment_files(f, ".idx")],
    "store-flipped": lambda f: [spoil(p) for p in segment_files(f, ".store")],
    "fast-flipped": lambda f: [spoil(p) for p in segment_files(f, ".fast")],
    "term-bytes": lambda f: [flip(p, length=16) for p in segment_files(f, ".term")],
    "term-truncated": lambda f: [
        p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])
        for p in segment_files(f, ".term")
    ],
    "fast-truncated": lambda f: [
        p.write_bytes(p.read_bytes()[:40]) for p in segment_files(f, ".fast")
    ],
}


def read_everything(folder):
    index = LexicalIndex.open(next(folder.glob("lexical-*")))
    index.count()
    index.verify()
    index.search("pelicans rivers turbines", limit=50)
    index.known_blobs()


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_lexical_segment_raises_a_ctx_error(filled, damage):
    folder = filled.path / "index"
    DAMAGE[damage](folder)
    with pytest.raises(LexicalIndexCorruptError) as caught:
        read_everything(folder)
    assert "\n" not in caught.value.message
    assert caught.value.hint == "Run `ctx reindex` to rebuild it."


@pytest.mark.parametrize("damage", list(DAMAGE))
@pytest.mark.parametrize("exact", [True, False], ids=["process", "hub"])
def test_a_damaged_lexical_segment_is_rebuilt_with_a_notice(filled, damage, exact):
    # A projection that had the index open when it was damaged (a hub), and
    # one that opens it after. A file cut short under a process that maps it
    # kills that process (SIGBUS, which Python cannot catch): only fresh
    # processes meet those.
    kept = None if "truncated" in damage else counted(filled, exact=exact)
    if kept is not None:
        pelican_answers(kept)
    DAMAGE[damage](filled.path / "index")
    fresh = counted(filled, exact=exact)
    for projection in (fresh, kept):
        if projection is None:
            continue
        pelican_answers(projection)
        assert any("rebuilt it" in n for n in projection.notices), damage
        assert projection.embedder.texts == []  # the vectors were kept
        projection.notices.clear()
        pelican_answers(projection)
        assert projection.notices == []
    status = index_status(fresh)
    assert status.documents == status.vectors == COUNT


@pytest.mark.parametrize("damage", ["term-flipped", "idx-flipped"])
def test_a_search_by_tag_repairs_a_damaged_index_as_any_search(filled, damage):
    # The tag narrows what is ranked by reading the index: there too, a
    # damaged index is rebuilt, not a crash.
    # (A hub's projection, that had the index open when it was damaged.)
    kept = counted(filled, exact=False)
    [source] = open_sources(kept)
    DAMAGE[damage](filled.path / "index")
    found = search(
        kept, source, "pelicans", config=RecallConfig(), now=NOW, tag="area:birds"
    )
    assert found.hits == ()
    assert any("rebuilt it" in n for n in kept.notices), damage


# -- vectors ---------------------------------------------------------------


def data_file(folder):
    sidecar = json.loads(next(folder.glob(f"vectors-*/{SIDECAR}")).read_text())
    return next(folder.glob(f"vectors-*/{sidecar['data']}")), sidecar


def write_row(path, row, value, dimensions):
    data = np.memmap(path, dtype=np.float32, mode="r+")
    data[row * dimensions : (row + 1) * dimensions] = value
    data.flush()
    del data


@pytest.mark.parametrize("value", [np.nan, np.inf], ids=["nan", "inf"])
def test_rows_that_are_not_numbers_are_embedded_again(filled, value):
    projection = counted(filled)
    keys = projection.vectors.keys()
    path, sidecar = data_file(projection.folder)
    rows = [3, 150]
    for row in rows:
        write_row(path, row, value, sidecar["dimensions"])
    # A process that answers one question checks no checksum: the search
    # meets the rows, and they are repaired.
    pelican_answers(projection)
    assert any("Vectors were damaged" in n for n in projection.notices)
    damaged_blocks = {row // BLOCK for row in rows}
    assert 0 < len(projection.embedder.texts) <= BLOCK * len(damaged_blocks)
    assert len(projection.vectors) == COUNT
    again = counted(filled, exact=False)
    assert again.notices == []  # repaired for good
    assert set(again.vectors.keys()) == set(keys)


def test_a_changed_byte_in_the_vectors_is_found_at_hub_start(filled):
    projection = Projection.for_store(filled, HASHING)
    path, _ = data_file(projection.folder)
    data = bytearray(path.read_bytes())
    data[100 * 384 * 4 + 8] ^= 0x01  # row 100: still a finite number
    path.write_bytes(bytes(data))
    before = projection.vectors.vectors_of(projection.vectors.keys()[:BLOCK])
    hub = counted(filled, exact=False)
    assert any("failed their checksum" in n for n in hub.notices)
    pelican_answers(hub)
    assert len(hub.embedder.texts) == BLOCK  # row 100's block, nothing else
    after = hub.vectors.vectors_of(projection.vectors.keys()[:BLOCK])
    assert (after == before).all()  # the first block was not touched
    assert counted(filled, exact=False).notices == []


def test_reordered_keys_are_found_and_only_their_blocks_embedded(filled):
    projection = Projection.for_store(filled, HASHING)
    file = next(projection.folder.glob(f"vectors-*/{SIDECAR}"))
    sidecar = json.loads(file.read_text())
    keys = sidecar["keys"]
    keys[5], keys[6] = keys[6], keys[5]
    file.write_text(json.dumps(sidecar))
    hub = counted(filled, exact=False)
    assert any("failed their checksum" in n for n in hub.notices)
    pelican_answers(hub)
    assert len(hub.embedder.texts) == BLOCK  # the first block only
    status = index_status(hub)
    assert status.documents == status.vectors == COUNT


def test_a_garbage_state_file_reuses_the_intact_vectors(filled):
    folder = Projection.for_store(filled, HASHING).folder
    (folder / "state.json").write_text("{not json")
    projection = counted(filled)
    assert any("rebuilt" in n for n in projection.notices)
    pelican_answers(projection)
    assert projection.embedder.texts == []
    assert projection.last_catch_up.reused == COUNT


def test_a_garbage_state_file_and_a_damaged_block_embed_only_that_block(filled):
    folder = Projection.for_store(filled, HASHING).folder
    path, sidecar = data_file(folder)
    write_row(path, 70, 0.5, sidecar["dimensions"])  # finite, but not saved
    (folder / "state.json").write_text("garbage")
    projection = counted(filled)
    pelican_answers(projection)
    assert len(projection.embedder.texts) == BLOCK
    assert projection.last_catch_up.reused == COUNT - BLOCK


# -- a rebuild keeps the vectors it replaces ----------------------------------


def test_a_rebuild_resumed_by_another_process_copies_the_old_vectors(filled):
    first = counted(filled)
    first.progress = lambda done, total: None
    # The first rebuild stops after resetting: as if killed right there.
    first.reindex()
    state = json.loads((first.folder / "state.json").read_text())
    assert state["reuse"]
    second = counted(filled)
    report = reindex(second)
    assert (report.embedded, report.reused) == (0, COUNT)
    assert second.embedder.texts == []
    state = json.loads((first.folder / "state.json").read_text())
    assert state["reuse"] == {}  # complete: nothing more to copy


def test_a_reindex_racing_another_process_embeds_nothing_and_says_what_it_did(
    filled,
):
    ours = counted(filled)
    theirs = counted(filled)
    open_sources(theirs)
    raced = threading.Event()

    def race() -> None:
        open_sources(theirs)  # a hub's recall, between reset and catch-up
        raced.set()

    view = ours.view

    def view_after_the_race(commit, *, branch=None):
        if not raced.is_set() and not getattr(view_after_the_race, "started", False):
            view_after_the_race.started = True
            threading.Thread(target=race, daemon=True).start()
            time.sleep(0.5)
        return view(commit, branch=branch)

    ours.view = view_after_the_race
    report = reindex(ours)
    assert raced.wait(30)
    assert ours.embedder.texts == theirs.embedder.texts == []
    assert (report.embedded, report.reused) == (0, COUNT)
    assert (report.documents, report.vectors) == (COUNT, COUNT)


def test_a_full_disk_builds_the_index_in_memory_with_a_notice(disk_store, monkeypatch):
    # Tantivy says a full disk in words ("os error 28"); `ctx reindex`, the
    # hint for a damaged index, would meet it again. The answer comes from
    # indexes in memory, as for a read-only store, and says why.
    drafts = [Draft(text=f"memory {i} about turbines and rivers") for i in range(20)]
    drafts[7] = Draft(text="pelicans nest on the lighthouse rocks")
    engine.remember_many(
        disk_store, drafts, engine.Intent(agent="tester", intent="import")
    )

    def full(path):
        path.mkdir(parents=True)  # made, then the disk is full
        raise LexicalIndexCorruptError(
            f"Cannot open the lexical index in {path} (An IO error occurred: 'No "
            "space left on device (os error 28)').",
        )

    monkeypatch.setattr(LexicalIndex, "open", staticmethod(full))
    (disk_store.path / "index").mkdir()
    (disk_store.path / "index" / "state.json").write_text("{not json")
    projection = Projection.for_store(disk_store, HASHING)
    pelican_answers(projection)
    assert projection.folder is None
    assert projection.notices == [
        f"No space left on the disk of {disk_store.path / 'index'}: the index is "
        "built in memory."
    ]
    # The folders the attempt made are gone: one more each recall, else.
    assert not list((disk_store.path / "index").glob("lexical-*"))


def test_a_full_disk_during_a_catch_up_scores_the_new_memories_in_memory(
    filled, monkeypatch
):
    # The index exists; new memories come; the disk is full when they would
    # be written: they are scored in memory for now, with a notice.
    import errno

    from ctx.hub.retrieval.index.rows import index_error

    engine.remember_many(
        filled,
        [Draft(text="albatrosses glide over the harbour cranes")],
        engine.Intent(agent="tester", intent="observe"),
    )

    def full(self, view, blobs):
        try:
            raise OSError(errno.ENOSPC, "No space left on device")
        except OSError as exc:
            raise index_error("Cannot write the vector index at x.") from exc

    monkeypatch.setattr(Projection, "_index", full)
    projection = Projection.for_store(filled, HASHING)
    sources = open_sources(projection)
    found = recall(
        projection, sources, "albatrosses harbour", config=RecallConfig(), now=NOW
    )
    assert "albatrosses" in found.hits[0].body
    assert projection.notices == [
        f"No space left on the disk of {filled.path / 'index'}: 1 new memory "
        "indexed in memory for now."
    ]
    # Many: by their words alone, not embedded again at every recall.
    engine.remember_many(
        filled,
        [Draft(text=f"heron {i} wades in the estuary") for i in range(70)],
        engine.Intent(agent="tester", intent="observe"),
    )
    embedded = []
    projection = Projection.for_store(filled, HASHING)
    real = projection.embedder.embed
    monkeypatch.setattr(
        projection.embedder,
        "embed",
        lambda texts: embedded.extend(texts) or real(texts),
    )
    sources = open_sources(projection)
    found = recall(projection, sources, "heron estuary", config=RecallConfig(), now=NOW)
    assert "heron" in found.hits[0].body
    assert projection.notices[-1].endswith(
        "71 new memories indexed in memory for now, by words only."
    )
    assert len(embedded) <= 1  # the question alone


def test_a_writer_killed_on_a_nearly_full_disk_counts_as_a_full_disk(
    tmp_path, monkeypatch
):
    # Tantivy's writer thread died on the full disk and says only that.
    from types import SimpleNamespace

    from ctx.hub.retrieval.index import stored

    killed = LexicalIndexCorruptError(
        "Cannot index blob x (An index writer was killed.)"
    )
    room = {"free": 10 << 20}
    monkeypatch.setattr(
        stored.os,
        "statvfs",
        lambda _: SimpleNamespace(f_bavail=room["free"] // 4096, f_frsize=4096),
    )
    assert not stored.disk_full(killed, tmp_path)  # room left: damage, as before
    room["free"] = 4096
    assert stored.disk_full(killed, tmp_path)
    assert not stored.disk_full(ValueError("x"), tmp_path)  # not an index error
