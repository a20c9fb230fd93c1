"""The hub: projections of commits into search indexes.

Built so far, each usable on its own: ``ctx.hub.embedders`` (MiniLM ONNX,
hashing, OpenAI-compatible and Ollama embedders), ``ctx.hub.temporal`` (time
expressions in queries and memory text), ``ctx.hub.lexical`` (Tantivy BM25
and fuzzy channels) and ``ctx.hub.vectors`` (exact and HNSW vector search).
The projection of commits into them and recall are still to come.
"""
