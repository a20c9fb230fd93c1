"""The hub: projections of commits into search indexes, and recall.

The public API is what every caller uses (the command line, the MCP
server, HTTP API and hooks, and the lens): a :class:`Workspace` finds
the store; :func:`recall`, :func:`search`, :func:`index_status` and
:func:`reindex` answer through a running hub or in-process;
:func:`run_hub`, :func:`stop_hub` and :func:`hub_status` run the hub;
:func:`format_prompt` renders a recall for a model's prompt;
:func:`create_key`, :func:`list_keys`, :func:`revoke_key` and
:func:`authenticate` keep the API keys of ``ctx serve``. The names are
listed once, in ``__init__.pyi``, and load on first use (``lazy_loader``),
so asking a running hub never loads the indexes.

Rooms, by role: ``retrieval`` is the search library (its ``index`` keeps
Tantivy and vector indexes caught up with any commit, its ``temporal`` reads
time in questions and memories, its ``embedders`` turn text into vectors,
and its own modules rank and pack memories for a question); ``server`` keeps
a hub running, and ``api`` is the calls on it; ``dream`` and ``code`` are
features built on the library; ``config`` reads ``config.toml``, ``keys``
the API keys and ``access`` who calls; ``state`` is the store's private
folder, where ``session_state`` keeps what waits between an agent's hook
calls and ``hook_log`` their failures. The doors that call the hub (the
command line, MCP, HTTP, hooks) are in :mod:`ctx.porcelain`.
See docs/architecture.md and docs/recall.md.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
