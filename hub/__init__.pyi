# The hub's public names, each once: the lazy loader in __init__.py reads
# this file, and type checkers read it as the package's interface.

from .access import Caller as Caller
from .access import ForbiddenError as ForbiddenError
from .access import Scope as Scope
from .api import code_status as code_status
from .api import (
    feedback as feedback,
)
from .api import find_code as find_code
from .api import hub_recall as hub_recall
from .api import (
    index_status as index_status,
)
from .api import (
    learn as learn,
)
from .api import (
    recall as recall,
)
from .api import (
    recall_weights as recall_weights,
)
from .api import (
    reindex as reindex,
)
from .api import (
    search as search,
)
from .code.languages import LANGUAGES as LANGUAGES
from .code.languages import SYMBOL_KINDS as SYMBOL_KINDS
from .code.results import CodeHit as CodeHit
from .code.results import CodeIndexReport as CodeIndexReport
from .code.results import CodeStatus as CodeStatus
from .code.results import CodeSymbol as CodeSymbol
from .code.results import Dependencies as Dependencies
from .code.results import FindResult as FindResult
from .code.results import SymbolList as SymbolList
from .code_api import code_chunk as code_chunk
from .code_api import code_deps as code_deps
from .code_api import code_index as code_index
from .code_api import code_symbols as code_symbols
from .code_api import watch_code as watch_code
from .code_branches import FollowingStore as FollowingStore
from .code_branches import follow_code as follow_code
from .code_branches import sync_at_start as sync_at_start
from .code_branches import sync_branches as sync_branches
from .code_remotes import add_code_remote as add_code_remote
from .code_remotes import code_store_path as code_store_path
from .code_remotes import new_store_path as new_store_path
from .config import (
    AgentsSettings as AgentsSettings,
)
from .config import (
    BranchesSettings as BranchesSettings,
)
from .config import (
    DreamSettings as DreamSettings,
)
from .config import (
    HooksSettings as HooksSettings,
)
from .config import (
    HubConfig as HubConfig,
)
from .config import (
    HubSettings as HubSettings,
)
from .config import (
    McpSettings as McpSettings,
)
from .config import (
    RecallConfig as RecallConfig,
)
from .config import (
    SecretsSettings as SecretsSettings,
)
from .config import (
    ServeSettings as ServeSettings,
)
from .config import (
    load_config as load_config,
)
from .credentials import git_credentials as git_credentials
from .credentials import remote_access as remote_access
from .dream import CycleReport as CycleReport
from .dream import DreamReview as DreamReview
from .dream import DreamStatus as DreamStatus
from .dream import ProposalView as ProposalView
from .dream.calls import MOST_HIDDEN as MOST_HIDDEN
from .dream.cited import note_cited as note_cited
from .golden import GoldenQuestion as GoldenQuestion
from .golden import GoldenReport as GoldenReport
from .golden import GoldenSuite as GoldenSuite
from .golden import QuestionResult as QuestionResult
from .golden import load_golden as load_golden
from .golden import run_golden as run_golden
from .hook_log import cache_log_path as cache_log_path
from .hook_log import log_line as log_line
from .hook_log import log_path as log_path
from .hook_log import store_field as store_field
from .instructions import FoundInstructions as FoundInstructions
from .instructions import ImportedInstructions as ImportedInstructions
from .instructions import InitReport as InitReport
from .instructions import find_instructions as find_instructions
from .instructions import import_instructions as import_instructions
from .keys import ApiKey as ApiKey
from .keys import AuthError as AuthError
from .keys import CreatedKey as CreatedKey
from .keys import RevokedKey as RevokedKey
from .keys import authenticate as authenticate
from .keys import create_key as create_key
from .keys import is_loopback as is_loopback
from .keys import keys_required as keys_required
from .keys import list_keys as list_keys
from .keys import revoke_key as revoke_key
from .redaction import drop_index as drop_index
from .redaction import pull as pull
from .redaction import redact as redact
from .retrieval.embedders.base import cpu_count as cpu_count
from .retrieval.feedback import (
    FeedbackResult as FeedbackResult,
)
from .retrieval.index.reports import (
    BranchIndex as BranchIndex,
)
from .retrieval.index.reports import (
    IndexStatus as IndexStatus,
)
from .retrieval.index.reports import (
    ReindexReport as ReindexReport,
)
from .retrieval.lexical_recall import lexical_recall as lexical_recall
from .retrieval.prompt import empty_answer as empty_answer
from .retrieval.prompt import (
    format_prompt as format_prompt,
)
from .retrieval.prompt import (
    recall_summary as recall_summary,
)
from .retrieval.results import WARMING as WARMING
from .retrieval.results import (
    ChannelScore as ChannelScore,
)
from .retrieval.results import (
    Explanation as Explanation,
)
from .retrieval.results import (
    Hit as Hit,
)
from .retrieval.results import (
    RecallResult as RecallResult,
)
from .retrieval.temporal.moment import moment_or_revision as moment_or_revision
from .retrieval.temporal.moment import parse_moment as parse_moment
from .retrieval.tuning import (
    LearnReport as LearnReport,
)
from .retrieval.tuning import (
    Tuning as Tuning,
)
from .retrieval.tuning import (
    WeightsReport as WeightsReport,
)
from .screen import SECRET_MODES as SECRET_MODES
from .screen import SecretFoundError as SecretFoundError
from .screen import SecretMode as SecretMode
from .screen import SecretScreen as SecretScreen
from .secrets import FoundSecret as FoundSecret
from .secrets import find_secrets as find_secrets
from .secrets import redact_secrets as redact_secrets
from .server.client import HubError as HubError
from .server.client import hub_silence as hub_silence
from .server.control import hub_status as hub_status
from .server.control import may_start_hub as may_start_hub
from .server.control import run_hub as run_hub
from .server.control import start_hub_later as start_hub_later
from .server.control import stop_hub as stop_hub
from .server.listener import serve as serve
from .server.private import HubFolderError as HubFolderError
from .server.private import socket_path as socket_path
from .server.routing import adopt_answerer as adopt_answerer
from .server.service import Answerer as Answerer
from .server.stores import Embedders as Embedders
from .server.wire import HookAsk as HookAsk
from .server.wire import HookReply as HookReply
from .server.wire import (
    HubReport as HubReport,
)
from .server.wire import (
    HubStarted as HubStarted,
)
from .server.wire import (
    HubStatus as HubStatus,
)
from .server.wire import (
    HubStopped as HubStopped,
)
from .server.wire import (
    OpenStore as OpenStore,
)
from .session_state import Block as Block
from .session_state import SessionState as SessionState
from .session_state import editing as editing
from .session_state import editing_if_writable as editing_if_writable
from .session_state import prune_sessions as prune_sessions
from .session_state import read_session as read_session
from .session_state import remove_session as remove_session
from .session_state import session_path as session_path
from .session_state import unique_latest as unique_latest
from .sessions import SessionReport as SessionReport
from .sessions import end_session as end_session
from .sessions import session_report as session_report
from .shown import Shown as Shown
from .shown import memory_shown as memory_shown
from .shown import note_composed as note_composed
from .shown import note_recall as note_recall
from .shown import session_shown as session_shown
from .shown import shown_during as shown_during
from .state import PRIVATE_FOLDER as PRIVATE_FOLDER
from .state import private_folder as private_folder
from .state import write_atomically as write_atomically
from .upkeep import pack_in_background as pack_in_background
from .workspace import STORE_FOLDER as STORE_FOLDER
from .workspace import Workspace as Workspace
from .workspace import local_now as local_now
