"""The search library: from commits to indexes, and from a question to ranked memories.

It knows nothing of what is built on it (the hub's process, its calls, Dream,
the code index, the agents' doors): import-linter checks that.

Rooms:

- ``index/``: the projection of commits into a Tantivy index and vectors,
  caught up on demand; the searcher that ranking asks channel by channel.
- ``temporal/``: time phrases in questions and memories, and gravity.
- ``embedders/``: texts to vectors.

Modules:

- ``sources``: which commits a recall reads (a branch, overlays, a moment).
- ``ranking``: channels, fusion, tags, temporal gravity, link expansion.
- ``boost``: which tags a question names, and how far a named tag lifts a hit.
- ``packing``: recall (pinned first, packed into a token budget) and search.
- ``results``: the Structs they return.
- ``prompt`` and ``written``: the markdown block for a model's prompt, and
  who wrote each memory in it; ``rerank``: the optional reranker.
- ``feedback``, ``tuning``, ``learning``: the recall log and feedback, each
  caller's learned weights, and the learning step.
"""
