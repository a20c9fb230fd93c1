"""The typed calls every door makes: one request, one answer and one function each.

Each call is a request Struct (its input schema) and the function that
answers it (the caller's reach checked, the intent written, the workspace's
lock held), side by side in the module of its concept: ``memories``,
``links``, ``recalls``, ``history``, ``code``, ``admin`` (keys) and
``dream_calls``; ``base`` holds what they share. ``table`` is the one table
(:data:`CALLS`) that names them with the Struct each answers with and a
description written for a model. The command line calls these functions;
the MCP server's tools and the HTTP API's routes (:mod:`ctx.porcelain.agents`)
are built from the table, and the hooks' ``<ctx:*>`` commands
(:mod:`ctx.porcelain.hooks`) are made through it: ``markup`` finds them in
an agent's answer, and makes every spelling of a tag inert in what a call
gives back (:func:`defuse`).

A door imports the room's names from its face (``from ctx.hub.calls
import invoke``), never from its modules. The names are listed once, in
``__init__.pyi``, and load on first use.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
