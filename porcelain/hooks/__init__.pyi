# The hooks' public names, each once: the lazy loader in __init__.py reads
# this file, and type checkers read it as the package's interface.

from .blocks import MAX_CONTEXT as MAX_CONTEXT
from .events import EVENTS as EVENTS
from .events import find_event as find_event
from .relayed import relayed_answer as relayed_answer
from .runner import run_hook as run_hook
