"""The hub: projections of commits into search indexes, and recall.

``ctx.hub.projection`` keeps Tantivy (``ctx.hub.lexical``) and vector
(``ctx.hub.vectors``) indexes caught up with any commit; ``ctx.hub.ranking``
fuses their channels with temporal gravity (``ctx.hub.temporal``,
``ctx.hub.gravity``) and link expansion; ``ctx.hub.recall`` packs the result
into a token budget. ``ctx.hub.embedders`` turns text into vectors;
``ctx.hub.config`` reads ``config.toml``. See docs/recall.md.

Importing the hub sets ``OPENBLAS_NUM_THREADS=1`` unless it is set already
(and takes effect only if numpy is not loaded yet): on a small machine,
OpenBLAS threads and onnxruntime's fight over the cores, which doubled the
cost of embedding a query (DESIGN.md, "Measured facts"). A vector search is
one matrix-vector product, which a second thread barely speeds up.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
