"""The search indexes: projections of commits, rebuildable at any time.

- ``projection``: catches the indexes up to any commit, for a live view;
  ``stored``: the indexes of the index folder, opened, shared with other
  processes and repaired when damaged (``errors``); ``documents``: what the
  indexes see of a memory.
- ``view``: a commit's live view (its memories, the filter of every search).
- ``searcher``: one view and its indexes, asked by ranking for each channel.
- ``lexical`` (with ``lexical_writer``, ``lexical_errors`` and ``coverage``) and
  ``terms``: the Tantivy index (BM25, fuzzy, tags, coverage) and the
  words of a query it searches for.
- ``vectors``, ``rows`` and ``hnsw``: vectors flat (exact, memory-mapped rows)
  or in an HNSW graph past the crossover, with checksums; ``reuse``: the
  vectors a rebuild copies instead of embedding.
- ``folder``: ``.ctx/index/`` on disk, its state file and its lock.
- ``maintenance``: reindex and index status.
"""
