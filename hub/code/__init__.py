"""Code context: a source tree projected into search indexes (``ctx find``).

Rooms: ``files`` (which files, as git would choose them, and their content
ids), ``languages`` (grammars and node kinds), ``chunking`` (files cut along
their structure), ``index`` (the folder, kept current incrementally),
``lexical`` and ``vectors`` (its Tantivy index and vectors), ``search``
(find, symbols, the chunk at a line), ``steer`` (optional steering by a
chat model), ``deps`` (imports resolved to files),
``results`` (the Structs every caller gets), ``api`` (the calls on a
workspace). See docs/code.md.
"""
