# Dream's public names, each once: the lazy loader in __init__.py reads
# this file, and type checkers read it as the package's interface.

from .calls import DreamReview as DreamReview
from .calls import DreamStatus as DreamStatus
from .calls import ProposalView as ProposalView
from .calls import ReviewedMemory as ReviewedMemory
from .calls import accept as accept
from .calls import dream_status as dream_status
from .calls import loop as loop
from .calls import merge as merge
from .calls import reject as reject
from .calls import require_disk as require_disk
from .calls import review as review
from .calls import reviewed as reviewed
from .calls import run as run
from .cycle import CycleReport as CycleReport
from .cycle import run_cycle as run_cycle
from .detect import Detector as Detector
from .judge import Judge as Judge
from .queue import QueueStatus as QueueStatus
from .rules import Thresholds as Thresholds
from .rules import judge_pair as judge_pair
