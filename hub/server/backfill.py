"""The hub's background embedding: the backlog a recall did not wait for.

A recall never waits for the embedder (docs/recall.md, "The embedding
backlog"): a catch-up that meets many memories without a vector indexes their
text and answers, and the hub makes their vectors here, newest first, in
steps of :data:`STEP` memories. Each step reads its texts holding the hub's
lock (the projection is not made for threads), embeds them without it (so
requests are answered meanwhile), then takes the lock again to add the
vectors, which :meth:`~ctx.hub.retrieval.index.projection.Projection.add_vectors` makes
durable under the index's own lock before it returns: a hub killed at any
point loses at most the step it was embedding.

When no memory waits, it embeds the code index's backlog (``ctx code
index`` never waits for the embedder either: docs/code.md) the same way,
:data:`CODE_STEP` chunks at a time: it picks them under the hub's lock
(:meth:`~ctx.hub.code.index.CodeIndex.next_backlog`), embeds them without
it, and stores them under the hub's lock and the code index's own
(:meth:`~ctx.hub.code.index.CodeIndex.add_vectors`), durably. With no
backlog left, it builds the code vectors' search graph when one is wanted
(:class:`~ctx.hub.code.vectors.Graph`), without the lock.
"""

from __future__ import annotations

import sys
import threading
import traceback
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ctx.engine import CtxError
from ctx.hub.retrieval.embedders import EmbedderError
from ctx.hub.retrieval.index.documents import UNTOLD
from ctx.hub.retrieval.index.projection import Projection
from ctx.hub.retrieval.index.view import LiveView
from ctx.hub.retrieval.sources import open_sources

if TYPE_CHECKING:
    from ctx.hub.code.index import CodeIndex
    from ctx.hub.server.service import Answerer

__all__ = [
    "CODE_STEP",
    "STEP",
    "Backfill",
    "Backlog",
    "next_backlog",
    "owed",
    "tell_languages",
]

STEP = 256
"""Memories embedded per step (a long one as its passages): a step's save
(about 15 ms of fsyncs) costs under 3% of its embedding even for short
memories, and a newer memory waits at most one step."""

CODE_STEP = 128
"""Code chunks embedded per step: chunks are long (MiniLM reads 256 tokens of
each, about 7 a second on two cores), so a step is about 20 s of work there,
and what a killed hub loses."""

_IDLE_S = 30.0  # with nothing to embed, look again this often (or when woken)


@dataclass(frozen=True)
class Backlog:
    """One step of the backlog: the memories to embed, as passages.

    Attributes:
        blobs: The memories' blobs, newest first.
        keys: The vector key of each text (a long memory has several).
        texts: What is embedded: each memory's text, or each of its passages.
    """

    projection: Projection
    blobs: list[str]
    keys: list[str]
    texts: list[str]


def _views(projection: Projection) -> Iterator[LiveView]:
    """Yields the view of HEAD, then of every other indexed branch.

    Each is caught up first, as a recall would.
    """
    store = projection.store
    head = store.head_branch()
    for branch in [head, *sorted(set(projection.watermarks()) - {head})]:
        if branch in store.branches():
            [source] = open_sources(projection, branch=branch)
            yield source.view


def tell_languages(projection: Projection) -> int:
    """Tells the languages a deferring catch-up left untold; returns how many.

    One step (:meth:`~ctx.hub.retrieval.index.projection.Projection.tell_untold`) of
    the first view of :func:`_views` that has any.
    """
    for view in _views(projection):
        if told := projection.tell_untold(view):
            return told
    return 0


def owed(projection: Projection) -> bool:
    """Returns whether the index holds a document without its vector or language.

    Read without the hub's lock, as recalls read the index side by side:
    every request wakes the backfill, and the step that looks for work
    catches up each branch's view under the lock, alone, which held every
    other request back for that time. Nothing owed, nothing is caught up.
    A document a view no longer holds still counts: the step then looks, as
    it always did.
    """
    try:
        return projection.unembedded() > 0 or bool(
            projection.lexical.in_language(UNTOLD, limit=1)
        )
    except CtxError:
        return True  # the step under the lock finds out what is wrong


def next_backlog(projection: Projection, limit: int = STEP) -> Backlog | None:
    """Returns the newest ``limit`` memories without a vector, or None.

    Those of HEAD first, then of every other indexed branch (:func:`_views`).
    """
    for view in _views(projection):
        if blobs := projection.backlog(view)[:limit]:
            keys, texts = projection.backlog_passages(view, blobs)
            return Backlog(projection, blobs, keys, texts)
    return None


class Backfill:
    """Embeds a hub's backlog on a thread of its own until told to stop.

    Args:
        answerer: The hub's answerer (its projection is the one filled).
        lock: The lock the hub holds while it answers a request.
        stopping: Set when the hub stops, or drops the answerer's store.
    """

    def __init__(
        self,
        answerer: Answerer,
        lock: AbstractContextManager[Any],
        stopping: threading.Event,
    ) -> None:
        self.answerer = answerer
        self.lock = lock
        self.stopping = stopping
        self.wake = threading.Event()
        self.busy = False
        self.thread = threading.Thread(
            target=self.run, name="hub-backfill", daemon=True
        )

    def start(self) -> None:
        """Starts the thread."""
        self.thread.start()

    def run(self) -> None:
        """Embeds step after step; sleeps when nothing is left (or it fails)."""
        while not self.stopping.is_set():
            try:
                worked = self.step()
            except Exception:  # the thread must outlive any one step
                traceback.print_exc(file=sys.stderr)
                worked = False
            if not worked:
                self.busy = False
                self.wake.wait(_IDLE_S)
                self.wake.clear()

    def step(self) -> bool:
        """Embeds one step of the backlog; returns whether there was one.

        An embedder that fails (an endpoint down) ends the step: the next
        request wakes the thread to try again.
        """
        loaded = self.answerer.projection
        if loaded is not None and not owed(loaded):
            job = None  # the usual wake, after a request that left nothing
        else:
            with self.lock:
                if self.stopping.is_set():
                    return False  # its store was dropped: reopen nothing
                try:
                    # Languages first: a German memory is searched as English
                    # until told, and telling is quick once the detector loads.
                    if tell_languages(self.answerer.projection_now()):
                        return True
                    job = next_backlog(self.answerer.projection_now())
                except CtxError:
                    job = None
        if job is None:
            return self.code_step()
        self.busy = True
        try:
            rows = job.projection.embedder.embed(job.texts)
        except EmbedderError:
            return False
        with self.lock:
            if self.answerer.projection is job.projection:  # config unchanged
                job.projection.add_vectors(job.keys, rows)
        return True

    def code_step(self) -> bool:
        """Embeds one step of the code index's backlog; returns whether it had one."""
        if self.answerer.store.path is None:
            return False
        with self.lock:
            if self.stopping.is_set():
                return False
            code = self.answerer.code_index()
            try:
                job = code.next_backlog(CODE_STEP)
            except (CtxError, OSError):
                return False
        if job is None:
            return self.graph_step(code)
        self.busy = True
        keys, texts = job
        try:
            embedder = code.embedder
            rows = embedder.embed(texts)
        except EmbedderError:
            return False
        with self.lock:
            code.add_vectors(keys, rows, embedder)
        return True

    def graph_step(self, code: CodeIndex) -> bool:
        """Builds the code vectors' search graph if one is wanted (module doc)."""
        from ctx.hub.code.vectors import Graph

        with self.lock:
            vectors = code.graph_wanted()
        if vectors is None:
            return False
        self.busy = True
        graph = Graph.build(vectors)  # seconds to a minute: without the lock
        with self.lock:
            code.adopt_graph(graph)
        return True
