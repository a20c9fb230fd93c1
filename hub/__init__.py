"""The hub: projections of commits into search indexes, and recall.

``ctx.hub.projection`` keeps Tantivy (``ctx.hub.lexical``) and vector
(``ctx.hub.vectors``) indexes caught up with any commit; ``ctx.hub.ranking``
fuses their channels with temporal gravity (``ctx.hub.temporal``,
``ctx.hub.gravity``) and link expansion; ``ctx.hub.recall`` packs the result
into a token budget. ``ctx.hub.embedders`` turns text into vectors;
``ctx.hub.config`` reads ``config.toml``. See docs/recall.md.
"""
