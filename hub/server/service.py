"""What a hub answers, and how: the same in the hub and in-process.

An :class:`Answerer` keeps a store's
:class:`~ctx.hub.retrieval.index.projection.Projection` and answers
:data:`~ctx.hub.server.wire.AnyStoreAsk` after request, each with its own
reply type: recall, search, index status, reindex (which reports its
progress as it goes), learning, and ``ctx find`` and ``ctx code status``
over the code index (:mod:`ctx.hub.code`), which it keeps open with the
same embedder. It dispatches on the request's type. Every request
catches the index up first, exactly as a recall in its own process would, so
commits made by any process are seen.

Requests come from several threads (the hub's workers, ``ctx serve``'s HTTP
and MCP calls). The answerer's :class:`~ctx.hub.locking.ReadWriteLock`
(``ctx serve``: the workspace's) makes a recall or search two steps: the
catch-up of the index and the projection's set-up alone (writing; a few
milliseconds when nothing is new), then the ranking side by side with other
recalls (reading: Tantivy's searchers, the vectors, the embedder's session
and the memories' cache are safe to read from several threads). Everything
else (index status, reindex, learning, the code index) runs alone.

``config.toml`` is read again for each request; a changed embedder gets a
new projection. A recall never waits for the embedder: many new memories are
indexed by their text at once and their vectors left to the backlog (the
hub's :mod:`~ctx.hub.server.backfill`), whose size a recall and the index
status report as ``unembedded``. The hub's server
(:mod:`ctx.hub.server.listener`) keeps one per store it serves
(:mod:`ctx.hub.server.stores`), all of them sharing an embedder per
embedder configuration.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, assert_never

import msgspec

from ctx.engine import InvalidInputError, Store
from ctx.hub.config import HubConfig, load_config
from ctx.hub.locking import ReadWriteLock
from ctx.hub.retrieval.embedders import Embedder, make_embedder
from ctx.hub.retrieval.feedback import (
    LoggedHit,
    LoggedRecall,
    log_recall,
    new_recall_id,
    read_log,
)
from ctx.hub.retrieval.index.maintenance import index_status, reindex
from ctx.hub.retrieval.index.projection import Projection
from ctx.hub.retrieval.learning import learn
from ctx.hub.retrieval.packing import recall, search
from ctx.hub.retrieval.results import RecallResult
from ctx.hub.retrieval.sources import Source, open_sources
from ctx.hub.retrieval.tuning import DEFAULT_CALLER, LearnReport, tuned, tuning_of
from ctx.hub.server.wire import (
    AnyStoreAsk,
    CodeFindAsk,
    CodeFindReply,
    CodeStatusAsk,
    CodeStatusReply,
    IndexStatusAsk,
    IndexStatusReply,
    LearnAsk,
    LearnReply,
    RecallAsk,
    RecallReply,
    ReindexAsk,
    ReindexReply,
    Reply,
    SearchAsk,
    SearchReply,
)

if TYPE_CHECKING:  # loaded when code is searched (Answerer.code_index)
    from ctx.hub.code.index import CodeIndex
    from ctx.hub.code.results import FindResult

__all__ = ["Answerer"]


class Answerer:
    """Answers requests for one store, keeping its projection between them.

    The hub serves with one; a call of the hub's API (:mod:`ctx.hub.api`)
    that finds no hub running makes one for its single request
    (``one_shot``: vectors are searched exactly rather than by loading an
    HNSW graph, see :class:`Projection`).

    ``defer``: leave the vectors of a large catch-up to the backlog rather
    than wait for them (by default, for all but ``one_shot``): for the hub,
    whose backfill thread embeds them, and for a process that is about to
    start one. With no hub to come, a catch-up embeds before it answers.

    ``embedders``: returns the embedder a configuration names (default: a
    new one each time the configuration changes); the hub gives every store
    the same one per configuration.
    """

    def __init__(
        self,
        store: Store,
        clock: Callable[[], datetime],
        *,
        one_shot: bool = False,
        defer: bool | None = None,
        lock: ReadWriteLock | None = None,
        embedders: Callable[[Mapping[str, object]], Embedder] | None = None,
    ) -> None:
        self.store = store
        self.embedders = embedders
        self.clock = clock
        self.lock = lock or ReadWriteLock()
        """Reads (a recall's ranking) share it; anything else holds it alone."""
        self.one_shot = one_shot
        self.defer = not one_shot if defer is None else defer
        self.config: HubConfig | None = None
        self.projection: Projection | None = None
        self.code: CodeIndex | None = None

    def warm(self) -> None:
        """Loads the indexes and the embedder, and catches up HEAD."""
        with self.lock:
            projection, _ = self._projection()
            open_sources(projection)
            projection.embedder.embed(["warm up"])

    def projection_now(self) -> Projection:
        """Returns the projection, made again if ``config.toml`` changed."""
        return self._projection()[0]

    def _projection(self) -> tuple[Projection, HubConfig]:
        config = load_config(self.store.path)
        if self.projection is None or config != self.config:
            if self.embedders is None:
                self.projection = Projection.for_store(
                    self.store, config, exact=self.one_shot
                )
            else:
                embedder = self.embedders(config.embedder)
                self.projection = Projection(self.store, embedder, exact=self.one_shot)
            self.config = config
        self.projection.defer = self.defer
        return self.projection, config

    def answer(
        self,
        request: AnyStoreAsk,
        progress: Callable[[int, int], None] | None = None,
    ) -> Reply:
        """Returns the reply to ``request``, of the type its request names.

        Args:
            request: What is asked.
            progress: Called with (done, total) while a reindex indexes.

        Raises:
            CtxError: Whatever recall, search or the index raise for it.
        """
        pid = os.getpid()
        match request:
            case RecallAsk():
                return RecallReply(result=self._read(request), pid=pid)
            case SearchAsk():
                return SearchReply(result=self._read(request), pid=pid)
            case CodeFindAsk():
                with self.lock:
                    return CodeFindReply(found=self._find_code(request), pid=pid)
            case CodeStatusAsk():
                with self.lock:
                    return CodeStatusReply(
                        code=self.code_index().status(hub=True), pid=pid
                    )
            case IndexStatusAsk() | LearnAsk() | ReindexAsk():
                with self.lock:
                    return self._indexed(request, progress)
            case _:
                assert_never(request)

    def _indexed(
        self,
        request: IndexStatusAsk | LearnAsk | ReindexAsk,
        progress: Callable[[int, int], None] | None,
    ) -> Reply:
        """Answers a request about the memory index; the caller holds the lock."""
        projection, config = self._projection()
        try:
            match request:
                case IndexStatusAsk():
                    status = index_status(projection)
                    return IndexStatusReply(status=status, pid=os.getpid())
                case LearnAsk():
                    return LearnReply(learned=self._learn(projection, config, request))
                case ReindexAsk():
                    # Asked to rebuild, it embeds everything before it reports.
                    projection.progress, projection.defer = progress, False
                    try:
                        report = reindex(projection, re_embed=request.re_embed)
                    finally:
                        projection.progress, projection.defer = None, self.defer
                    return ReindexReply(report=report, pid=os.getpid())
                case _:
                    assert_never(request)
        finally:
            # The reply carries them; the next request starts with none.
            projection.notices.clear()
            projection.warnings.clear()

    def _read(self, request: RecallAsk | SearchAsk) -> RecallResult:
        """Answers a recall or search: caught up alone, ranked side by side."""
        with self.lock:
            projection, config = self._projection()
            try:
                sources = self._sources(projection, request)
                notices = tuple(projection.notices)
                warnings = tuple(projection.warnings)
            finally:
                # The reply carries them; the next request starts with none.
                projection.notices.clear()
                projection.warnings.clear()
        with self.lock.reading():
            result = self._recall(projection, config, request, sources)
            if isinstance(request, RecallAsk):
                result = self._logged(result, request)
            unembedded = len(projection.backlog(sources[0].view))
        return msgspec.structs.replace(
            result,
            notices=(*notices, *result.notices),
            warnings=(*warnings, *result.warnings),
            unembedded=unembedded,
        )

    def _learn(
        self, projection: Projection, config: HubConfig, request: LearnAsk
    ) -> LearnReport:
        """Runs a learning step for the request's caller."""
        if self.store.path is None:
            raise InvalidInputError(
                "A store in memory keeps no feedback to learn from.",
                hint="Learn on a store on disk.",
            )
        return learn(
            projection,
            read_log(self.store.path),
            request.agent or DEFAULT_CALLER,
            config.recall,
            self.clock(),
        )

    def _logged(self, result: RecallResult, request: RecallAsk) -> RecallResult:
        """Returns ``result`` with its recall id, after logging what it returned."""
        if self.store.path is None:
            return result
        recall_id = new_recall_id(self.clock())
        try:
            log_recall(
                self.store.path,
                LoggedRecall(
                    id=recall_id,
                    agent=request.agent or DEFAULT_CALLER,
                    branch=result.branch,
                    query=result.query,
                    now=result.now,
                    budget=result.budget,
                    hits=tuple(LoggedHit(hit.id, hit.tokens) for hit in result.hits),
                ),
            )
        except OSError as exc:
            # A store that cannot be written (read-only, a full disk) still
            # answers, as its indexes are built in memory then; only the
            # rating of this recall is lost, and the answer says so.
            why = exc.strerror or type(exc).__name__
            lost = f"This recall was not logged ({why}): feedback on it is not taken."
            return msgspec.structs.replace(result, notices=(*result.notices, lost))
        return msgspec.structs.replace(result, recall_id=recall_id)

    def close(self) -> None:
        """Lets go of the projection and the code index (their memory).

        The next request opens them again.
        """
        self.projection = None
        self.config = None
        self.code = None

    def code_index(self) -> CodeIndex:
        """Returns the store's code index, kept open with the same embedder."""
        if self.code is None:
            # Only a store whose code is searched pays for the code index
            # (about 25 ms to import); every hub and recall imports this.
            from ctx.hub.code.index import CodeIndex

            assert self.store.path is not None
            path = self.store.path

            def embedder() -> Embedder:
                if self.projection is not None:
                    return self.projection.embedder
                make = self.embedders or make_embedder
                return make(load_config(path).embedder)

            self.code = CodeIndex(path / "index" / "code", embedder)
        return self.code

    def _find_code(self, request: CodeFindAsk) -> FindResult:
        from ctx.hub.code.search import find

        assert self.store.path is not None
        code = self.code_index()
        steer = load_config(self.store.path).code.steer
        if steer.base_url:
            from ctx.hub.code.steer import steered_find

            return steered_find(
                code,
                request.query,
                steer,
                limit=request.limit,
                language=request.language,
                path=request.path,
                full=request.full,
            )
        return find(
            code,
            request.query,
            limit=request.limit,
            language=request.language,
            path=request.path,
            full=request.full,
        )

    def _sources(
        self, projection: Projection, request: RecallAsk | SearchAsk
    ) -> list[Source]:
        """Returns the branches a recall or search reads, the index caught up."""
        if isinstance(request, RecallAsk):
            return open_sources(
                projection,
                branch=request.branch,
                overlay=request.overlay,
                at=request.at_time or request.at,
            )
        return open_sources(projection, branch=request.branch)

    def _recall(
        self,
        projection: Projection,
        config: HubConfig,
        request: RecallAsk | SearchAsk,
        sources: list[Source],
    ) -> RecallResult:
        """Returns the recall or search of the branches ``sources`` reads.

        A recall uses its caller's learned weights and budget, if any.
        """
        now = request.now or self.clock()
        if isinstance(request, RecallAsk):
            if self.store.path is not None:
                tuning = tuning_of(self.store.path, request.agent or DEFAULT_CALLER)
                config = msgspec.structs.replace(
                    config, recall=tuned(config.recall, tuning)
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
        return search(
            projection,
            sources[0],
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
