"""Characters a terminal obeys, written as escapes so they are shown instead.

The one implementation is the engine's (:func:`ctx.engine.visible`, in
:mod:`ctx.engine.escapes`, whose docstring lists what it escapes), so that
the engine's composed context and every layer above it escape alike. The
command line's text output (:mod:`ctx.porcelain.output`), the lens, and
every block of memories injected into an agent's context
(:func:`ctx.hub.retrieval.prompt.format_prompt`) use it from here.
"""

from __future__ import annotations

from ctx.engine import visible

__all__ = ["visible"]
