"""Code context: a source tree projected into search indexes (``ctx find``).

Rooms: ``files`` (which files, as git would choose them, and their content
ids), ``languages`` (grammars and node kinds), ``chunking`` (files cut along
their structure), ``manifest`` (what the index holds, read whole or in
outline), ``reading`` (a re-index's reading of what changed), ``index``
(the folder, kept current incrementally, and its embedding backlog),
``lexical`` and ``vectors`` (its Tantivy index and vectors), ``search``
(find, symbols, the chunk at a line), ``identifiers`` (find's channel of
the chunks that define an identifier a query names), ``steer`` (optional steering by a
chat model), ``deps`` (imports resolved to files),
``results`` (the Structs every caller gets). The calls on a workspace
are :mod:`ctx.hub.code_api`, beside the hub's own calls. See docs/code.md.
"""
