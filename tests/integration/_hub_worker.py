"""A process that writes or recalls in a loop, for the hub's integration tests.

Usage: _hub_worker.py STORE write|recall|reindex COUNT TAG

``write`` remembers COUNT memories tagged ``TAG`` and prints each id once the
write returned; ``recall`` runs COUNT recalls (each catching the index up)
and prints, for each, the live memories, the hits, and the hits of a
search for every match; ``reindex`` rebuilds the index (``--re-embed`` if
TAG is ``re-embed``), making each batch durable at once, and prints
``progress DONE TOTAL`` after each, and waits COUNT ms, so that a test can kill it
in the middle of the rebuild and know it did. The store's config must pick the hashing
embedder.
"""

from __future__ import annotations

import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from ctx.engine import Draft, Intent, Store, remember
from ctx.hub.config import load_config
from ctx.hub.retrieval.index import projection as projection_module
from ctx.hub.retrieval.index.maintenance import reindex
from ctx.hub.retrieval.index.projection import Projection
from ctx.hub.retrieval.packing import recall, search
from ctx.hub.retrieval.sources import open_sources


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _reindex(store, config, milliseconds, tag):
    projection_module._SAVE_EVERY_S = 0.0  # every batch durable: a kill loses none

    def progress(done, total):
        _say(f"progress {done} {total}")
        time.sleep(milliseconds / 1000)  # the test kills it in here

    projection = Projection.for_store(store, config, progress=progress)
    report = reindex(projection, re_embed=tag == "re-embed")
    _say(f"done {report.embedded} {report.reused}")


def main() -> None:
    path, mode, count, tag = (
        Path(sys.argv[1]),
        sys.argv[2],
        int(sys.argv[3]),
        sys.argv[4],
    )
    store = Store.open(path, clock=lambda: datetime.now(UTC))
    config = load_config(path)
    who = Intent(agent=tag, intent="observe")
    if mode == "reindex":
        _reindex(store, config, count, tag)
        count = 0
    for i in range(count):
        if mode == "write":
            text = f"note {i} from {tag} about shared turbines"
            result = remember(store, Draft(text=text, tags=(f"by:{tag}",)), who)
            _say(result.ids[0])
        else:
            projection = Projection.for_store(store, config)
            sources = open_sources(projection)
            found = recall(
                projection,
                sources,
                "turbines",
                config=config.recall,
                now=datetime.now(UTC),
                budget=100_000,
            )
            listed = search(
                projection,
                sources[0],
                "turbines",
                config=config.recall,
                now=datetime.now(UTC),
                limit=10_000,
            )
            _say(f"{found.live_memories} {len(found.hits)} {len(listed.hits)}")
    store.close()


if __name__ == "__main__":
    main()
