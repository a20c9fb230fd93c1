"""The ctx engine: memories as commits in a git object store.

Everything the command line does is a call to one of these names. The engine
never prints and never reads the environment or the wall clock: the clock is
given to :class:`Store`, identity to each write as an :class:`Intent`.

The public names are listed once, in ``__init__.pyi``; they load on first
use (``lazy_loader``), so a command pays only for the parts it touches:
``ctx remember`` never imports the merge machinery.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
