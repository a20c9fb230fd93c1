"""Dream: memory that tidies itself, on its own branch (docs/dream.md).

Dream reads a branch and proposes fixes as commits on ``dream/<branch>``:
duplicates, updates, links, contradictions, recurrences and tiers. ``rules``
says what a pair of memories (or one alone) is; ``detect`` finds each
memory's candidates with the indexes and the temporal parser; ``queue``
keeps the back-off and the workers' claims in the store's private state;
``judge`` asks an optional chat model; ``cycle`` runs one cycle; ``calls``
are what the command line asks (run, status, review, accept, reject,
merge). What lives in git (the proposals, their review, the merge) is the
engine's (:mod:`ctx.engine.dream`).

The names are listed once, in ``__init__.pyi``, and load on first use.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
