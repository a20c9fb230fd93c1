"""The calls every door makes: one request, one answer and one handler each.

``requests`` holds the request Structs (the input schemas), ``handlers``
the function that answers each (the caller's reach checked, the intent
written), ``dream_calls`` Dream's, and ``calls`` the one table
(:data:`~ctx.porcelain.api.calls.CALLS`) that names them: the MCP server's
tools and the HTTP API's routes (:mod:`ctx.porcelain.agents`) are built
from it, and the hooks' ``<ctx:*>`` commands (:mod:`ctx.porcelain.hooks`)
are made through it.
"""
