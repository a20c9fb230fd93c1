"""The hub: projections of commits into search indexes, and recall.

Rooms, by concept: ``index`` keeps Tantivy and vector indexes caught up with
any commit; ``temporal`` reads time in questions and memories; ``retrieval``
ranks and packs memories for a question; ``server`` keeps a hub running for
a store; ``embedders`` turns text into vectors; ``config`` reads
``config.toml``. See docs/architecture.md and docs/recall.md.
"""
