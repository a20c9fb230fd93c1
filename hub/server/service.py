"""What a hub answers, and how: the same in the hub and in-process.

An :class:`Answerer` keeps a store's
:class:`~ctx.hub.index.projection.Projection` and answers
:class:`~ctx.hub.server.wire.Request` after request: recall, search, index
status, reindex (which reports its progress as it goes), and ``ctx find``
over the code index (:mod:`ctx.hub.code`), which it keeps open with the
same embedder. Every request
catches the index up first, exactly as a recall in its own process would, so
commits made by any process are seen. ``config.toml`` is read again for each
request; a changed embedder gets a new projection. The hub's server
(:mod:`ctx.hub.server.listener`) serves one over the store's socket; it is
not made for threads, so the server answers one request at a time.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime

import msgspec

from ctx.engine import Store
from ctx.hub.code.index import CodeIndex
from ctx.hub.code.results import FindResult
from ctx.hub.config import HubConfig, load_config
from ctx.hub.embedders import Embedder, make_embedder
from ctx.hub.index.maintenance import index_status, reindex
from ctx.hub.index.projection import Projection
from ctx.hub.retrieval.packing import recall, search
from ctx.hub.retrieval.results import RecallResult
from ctx.hub.retrieval.sources import open_sources
from ctx.hub.server.wire import Reply, Request

__all__ = ["Answerer"]


class Answerer:
    """Answers requests for one store, keeping its projection between them.

    The hub serves with one; a call of the hub's API (:mod:`ctx.hub.api`)
    that finds no hub running makes one for its single request
    (``one_shot``: vectors are searched exactly rather than by loading an
    HNSW graph, see :class:`Projection`).
    """

    def __init__(
        self,
        store: Store,
        clock: Callable[[], datetime],
        *,
        one_shot: bool = False,
    ) -> None:
        self.store = store
        self.clock = clock
        self.one_shot = one_shot
        self.config: HubConfig | None = None
        self.projection: Projection | None = None
        self.code: CodeIndex | None = None

    def warm(self) -> None:
        """Loads the indexes and the embedder, and catches up HEAD."""
        projection, _ = self._projection()
        open_sources(projection)
        projection.embedder.embed(["warm up"])

    def _projection(self) -> tuple[Projection, HubConfig]:
        config = load_config(self.store.path)
        if self.projection is None or config != self.config:
            self.projection = Projection.for_store(
                self.store, config, exact=self.one_shot
            )
            self.config = config
        return self.projection, config

    def answer(
        self,
        request: Request,
        progress: Callable[[int, int], None] | None = None,
    ) -> Reply:
        """Returns the reply to ``request``.

        Args:
            request: What is asked.
            progress: Called with (done, total) while a reindex indexes.

        Raises:
            CtxError: Whatever recall, search or the index raise for it.
        """
        if request.op in ("ping", "stop"):
            return Reply(store=str(self.store.path), pid=os.getpid())
        if request.op == "code_find":
            return Reply(found=self._find_code(request), pid=os.getpid())
        projection, config = self._projection()
        try:
            if request.op == "index_status":
                return Reply(status=index_status(projection), pid=os.getpid())
            if request.op == "reindex":
                projection.progress = progress
                try:
                    report = reindex(projection, re_embed=request.re_embed)
                finally:
                    projection.progress = None
                return Reply(report=report, pid=os.getpid())
            result = self._recall(projection, config, request)
            notices = tuple(projection.notices)
            return Reply(
                result=msgspec.structs.replace(result, notices=notices),
                pid=os.getpid(),
            )
        finally:
            # The reply carries them; the next request starts with none.
            projection.notices.clear()
            projection.warnings.clear()

    def _find_code(self, request: Request) -> FindResult:
        from ctx.hub.code.search import find

        if self.code is None:
            assert self.store.path is not None

            def embedder() -> Embedder:
                if self.projection is not None:
                    return self.projection.embedder
                return make_embedder(load_config(self.store.path).embedder)

            self.code = CodeIndex(self.store.path / "index" / "code", embedder)
        steer = load_config(self.store.path).code.steer
        if steer.base_url:
            from ctx.hub.code.steer import steered_find

            return steered_find(
                self.code,
                request.query,
                steer,
                limit=request.limit,
                language=request.language,
                path=request.path,
                full=request.full,
            )
        return find(
            self.code,
            request.query,
            limit=request.limit,
            language=request.language,
            path=request.path,
            full=request.full,
        )

    def _recall(
        self, projection: Projection, config: HubConfig, request: Request
    ) -> RecallResult:
        now = request.now or self.clock()
        if request.op == "recall":
            sources = open_sources(
                projection,
                branch=request.branch,
                overlay=request.overlay,
                at=request.at_time or request.at,
            )
            return recall(
                projection,
                sources,
                request.query,
                config=config.recall,
                now=now,
                budget=request.budget,
                include_superseded=request.include_superseded,
                explain=request.explain,
            )
        [source] = open_sources(projection, branch=request.branch)
        return search(
            projection,
            source,
            request.query,
            config=config.recall,
            now=now,
            limit=request.limit,
            kind=request.kind,
            tag=request.tag,
            context=request.context,
            fuzzy=request.fuzzy,
            explain=request.explain,
        )
