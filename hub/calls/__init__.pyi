# The calls room's public names, each once: the lazy loader in __init__.py
# reads this file, and type checkers read it as the room's interface.

from .handlers import defused as defused
from .markup import MARKER as MARKER
from .markup import Command as Command
from .markup import Parsed as Parsed
from .markup import defuse as defuse
from .markup import parse_commands as parse_commands
from .markup import wrap_context as wrap_context
from .table import CALLS as CALLS
from .table import GRAPH as GRAPH
from .table import KEYS as KEYS
from .table import TOOL_SETS as TOOL_SETS
from .table import Call as Call
from .table import decode as decode
from .table import invoke as invoke
from .table import structured as structured
from .table import tool_names as tool_names
