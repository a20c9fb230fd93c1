"""The hub's settings, read from a store's ``config.toml``.

``[recall]`` holds the default budget and the ranking constants: the weight of
each channel in reciprocal rank fusion, its ``k``, the weight of temporal
gravity and the damping of one-hop link expansion. ``[embedder]`` names the
embedder (``kind`` and that kind's options, see
:func:`ctx.hub.retrieval.embedders.make_embedder`). ``[hub]`` says whether a recall
that finds no running hub starts one, and when such a hub exits. ``[serve]``
says whether ``ctx serve`` asks for API keys on loopback too. ``[hooks]``
holds the budgets and the relevance floor of ``ctx hook``. ``[agents]`` says
whether each agent writes on a branch of its own. ``[code.steer]`` names
the optional chat model that steers ``ctx find``. ``[dream]`` says whether
the hub runs Dream in the background, and names its judge. ``[secrets]``
says what a write holding a secret does (refuse, redact, allow).
``[branches]`` says whether memory follows the code's branches. A missing
file or table gives the defaults; an unknown key or a value of the wrong
type is an error naming it.

The defaults were measured on LoCoMo and Cranfield by
``benchmarks/bench_quality.py`` (results in ``benchmarks/results/quality.md``).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Annotated, Literal

import msgspec

from ctx.engine import InvalidInputError

__all__ = [
    "CONFIG_FILE",
    "AgentsSettings",
    "BranchesSettings",
    "CodeSettings",
    "DreamSettings",
    "HooksSettings",
    "HubConfig",
    "HubSettings",
    "McpSettings",
    "RecallConfig",
    "RerankerSettings",
    "SecretsSettings",
    "ServeSettings",
    "SteerSettings",
    "load_config",
]

CONFIG_FILE = "config.toml"

_Weight = Annotated[float, msgspec.Meta(ge=0.0, le=100.0)]


class RerankerSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An optional reranker: a ``/v1/rerank`` endpoint (``[recall.reranker]``).

    Off unless ``url`` is set. The shape is the one local servers such as
    text-embeddings-inference and llama.cpp offer (see
    :mod:`ctx.hub.retrieval.rerank`).

    Attributes:
        url: The endpoint, e.g. ``http://127.0.0.1:8080/v1/rerank``.
        model: The model to name in the request, if the server wants one.
        top: How many of the best hits are reranked.
        weight: The reranker's share of a reranked hit's score (0..1); the
            fused score has the rest.
        timeout: Seconds to wait for the endpoint before ranking without it.
    """

    url: str = ""
    model: str = ""
    top: Annotated[int, msgspec.Meta(ge=2, le=200)] = 20
    weight: Annotated[float, msgspec.Meta(ge=0.0, le=1.0)] = 0.5
    timeout: Annotated[float, msgspec.Meta(gt=0.0, le=60.0)] = 2.0


class RecallConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Recall's defaults and ranking constants.

    Attributes:
        budget: Tokens a recall may return when none is given.
        k: The rank offset of reciprocal rank fusion: a hit at rank ``r`` of a
            channel adds ``weight / (k + r)``.
        bm25: Weight of the BM25 channel.
        vector: Weight of the vector channel.
        fuzzy: Weight of the fuzzy (typo and identifier) channel.
        tags: How much naming a tag adds: the fused score of a memory that
            carries a tag the query names (its value or the whole tag, e.g.
            "Caroline" for ``speaker:caroline``) is multiplied by ``1 + tags``.
        gravity: How much temporal closeness can add: a fused score is
            multiplied by ``1 + gravity * closeness`` (closeness in 0..1).
        expand: Damping of one-hop link expansion: a neighbour of a hit enters
            with the hit's score times this.
        depth: How many hits each channel contributes to the fusion.
        reranker: An optional reranker of the best hits (off by default).
        floor: The relevance (0..1) a hit must reach to count as relevant.
            A recall or search whose best hit is under it answers the hits
            that reach 0.94 of it (0.75 when the question names a name
            the store holds), marked weak; below that, nothing is relevant
            (docs/recall.md says which floor each caller uses).
        fall_off: A hit below the floor is dropped when its score is below
            this share of the best hit's score, or its relevance below this
            share of the best relevance.
        reviewed_only: Whether every recall (the command line, hooks, MCP,
            HTTP) reads only reviewed memory: ``reviewed_branch``, with no
            overlay of agents' branches (``ctx recall --reviewed-only`` for
            one recall).
        reviewed_branch: The branch reviewed memory is merged into.
    """

    budget: Annotated[int, msgspec.Meta(ge=1)] = 1500
    k: Annotated[float, msgspec.Meta(gt=0.0)] = 10.0
    bm25: _Weight = 1.0
    vector: _Weight = 1.5
    fuzzy: _Weight = 0.75
    tags: _Weight = 1.0
    gravity: _Weight = 1.0
    expand: Annotated[float, msgspec.Meta(ge=0.0, le=1.0)] = 0.5
    depth: Annotated[int, msgspec.Meta(ge=1, le=10_000)] = 100
    reranker: RerankerSettings = RerankerSettings()
    # Measured in benchmarks/results/relevance_floor.md (docs/recall.md).
    floor: Annotated[float, msgspec.Meta(ge=0.0, le=1.0)] = 0.45
    fall_off: Annotated[float, msgspec.Meta(ge=0.0, le=1.0)] = 0.25
    reviewed_only: bool = False
    reviewed_branch: str = "main"


class HubSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The running hub's settings.

    Attributes:
        autostart: Whether ``ctx recall`` and ``ctx search``, finding no hub
            for the store, start one in the background after answering (the
            next call is then answered by it).
        idle_minutes: How long a hub started that way waits for a request
            before it exits.
    """

    autostart: bool = True
    idle_minutes: Annotated[float, msgspec.Meta(gt=0.0, le=10_080.0)] = 15.0


class ServeSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The settings of ``ctx serve``, the HTTP and MCP server.

    Attributes:
        require_keys: Whether every request must present an API key, on
            loopback too. False lets a loopback server answer requests
            without a key as the store's owner, from any local user; a
            server bound to any other address always requires one (see
            :func:`ctx.hub.keys_required`).
    """

    require_keys: bool = True


class HooksSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What ``ctx hook`` gives an agent (see docs/hooks.md).

    Attributes:
        start_budget: Tokens of the context composed at ``session-start``
            (pinned, reference and working memories, then open questions).
            2,000 tokens are about 8,000 characters, within the host's
            10,000-character cap with room for what a stop queued.
        prompt_budget: Tokens a ``prompt-submit`` recall may add.
        subagent_budget: Tokens of the briefing at ``subagent-start``.
        floor: How close in meaning to the prompt a memory must be to be
            added at ``prompt-submit``: the vector channel's cosine
            similarity. Measured by ``benchmarks/bench_hook_floor.py`` with
            the default embedder (MiniLM) on two stores: idle and unrelated
            prompts reached at most 0.31, and 0.35 kept 17 of 20 relevant
            prompts and none of 24 unrelated ones. Another embedder has
            another scale (the hashing embedder cannot tell them apart):
            measure it again before changing embedders.
        lock_timeout: Seconds a hook's write waits for the store's lock
            before it gives up and reports it at the next prompt.
        timeout: Seconds a hook may run before it gives up and gives
            nothing (a hub that hangs, a slow disk); ``session-end`` takes
            at most one, as the host allows it 1.5.
    """

    start_budget: Annotated[int, msgspec.Meta(ge=100, le=2400)] = 2000
    prompt_budget: Annotated[int, msgspec.Meta(ge=1, le=2400)] = 800
    subagent_budget: Annotated[int, msgspec.Meta(ge=100, le=2400)] = 1000
    floor: Annotated[float, msgspec.Meta(ge=-1.0, le=1.0)] = 0.35
    lock_timeout: Annotated[float, msgspec.Meta(gt=0.0, le=60.0)] = 2.0
    timeout: Annotated[float, msgspec.Meta(gt=0.0, le=600.0)] = 10.0


class AgentsSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """How agents' calls (MCP, the HTTP API, hooks) use branches.

    Attributes:
        branch_per_agent: Whether an agent's writes that name no branch go to
            ``agent/<name>`` (created from the store's HEAD branch on first
            use; ``agent/<name>@<branch>`` from the code branch's memory
            where the store follows the code) and its recalls read that
            branch overlaid on HEAD's.
        review_writes: Whether agents' writes (hooks, MCP, the HTTP API) stay
            on ``agent/<name>`` until reviewed (``ctx review``) and merged
            into HEAD's branch; as ``branch_per_agent``, named for teams that
            read only reviewed memory (``[recall] reviewed_only``).
    """

    branch_per_agent: bool = False
    review_writes: bool = False


class BranchesSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Which memory branch a call that names none works on (docs/branches.md).

    Attributes:
        follow_code: Whether it is the one named as the code's current branch
            (in the git work tree the command runs in), created on its first
            write from the memory of its nearest code ancestor, whose memory
            it reads until then; ``ctx init --follow-code`` sets it. Off: the
            store's HEAD branch.
    """

    follow_code: bool = False


class McpSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What ``ctx mcp`` and ``ctx serve``'s ``/mcp`` offer (docs/agents.md).

    Attributes:
        tools: The tools listed: tool sets and tool names, comma-separated
            (``default``, ``all``, ``default,history,find``); ``ctx mcp
            --tools`` overrides it.
    """

    tools: str = "default"


class SteerSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``ctx find``'s optional steering through a chat model (docs/code.md).

    Off while ``base_url`` is empty. With it, a question is rewritten into
    sub-queries whose hits are fused, and a second call keeps only the hits
    the model names as relevant.

    Attributes:
        base_url: An OpenAI-compatible endpoint, e.g.
            ``http://127.0.0.1:11434/v1`` (``/chat/completions`` is added).
        model: The model's name.
        api_key_env: The environment variable that holds the bearer key.
        timeout: Seconds to wait for each answer.
        queries: Sub-queries asked for at most.
    """

    base_url: str = ""
    model: str = ""
    api_key_env: str | None = None
    timeout: Annotated[float, msgspec.Meta(gt=0.0, le=600.0)] = 20.0
    queries: Annotated[int, msgspec.Meta(ge=1, le=8)] = 3


class CodeSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The code index's settings (``[code]``): its optional steering."""

    steer: SteerSettings = SteerSettings()


class DreamSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Dream: the background tidying of memory (see docs/dream.md).

    Attributes:
        enabled: Whether the running hub runs Dream cycles in the background.
        interval: Seconds between two background cycles.
        budget: Memories one cycle examines.
        judge_url: An OpenAI-compatible (``.../v1``) or Ollama endpoint whose
            chat model confirms or rejects candidates; empty: no judge.
        judge_kind: ``openai`` or ``ollama``.
        judge_model: The chat model the judge asks.
        judge_timeout: Seconds one judgement may take.
        judge_key_env: The environment variable holding the endpoint's key.
    """

    enabled: bool = False
    interval: Annotated[float, msgspec.Meta(ge=1.0, le=86_400.0)] = 300.0
    budget: Annotated[int, msgspec.Meta(ge=1, le=1_000_000)] = 200
    judge_url: str = ""
    judge_kind: Literal["openai", "ollama"] = "openai"
    judge_model: str = ""
    judge_timeout: Annotated[float, msgspec.Meta(gt=0.0, le=600.0)] = 20.0
    judge_key_env: str = ""


class SecretsSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What a write whose new text holds a secret does (docs/security.md).

    Attributes:
        mode: ``refuse`` (nothing is written, the error names the kind of
            secret and where), ``redact`` (``[REDACTED:<kind>]`` is stored in
            its place) or ``allow`` (stored as given, nothing scanned; also
            what ``--allow-secret`` does for one command). A merge or pull
            is never refused: it reports the secrets it brought, unless
            ``allow``.
    """

    mode: Literal["refuse", "redact", "allow"] = "refuse"


class HubConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Everything the hub reads from ``config.toml``."""

    recall: RecallConfig = RecallConfig()
    hub: HubSettings = HubSettings()
    serve: ServeSettings = ServeSettings()
    hooks: HooksSettings = HooksSettings()
    agents: AgentsSettings = AgentsSettings()
    mcp: McpSettings = McpSettings()
    dream: DreamSettings = DreamSettings()
    embedder: dict[str, object] = {}
    code: CodeSettings = CodeSettings()
    secrets: SecretsSettings = SecretsSettings()
    branches: BranchesSettings = BranchesSettings()


def load_config(store_path: Path | None) -> HubConfig:
    """Returns the settings in ``<store_path>/config.toml`` (defaults if absent).

    Raises:
        InvalidInputError: The file is not valid TOML or holds an unknown key
            or a value of the wrong type.
    """
    if store_path is None:
        return HubConfig()
    path = store_path / CONFIG_FILE
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return HubConfig()
    except OSError as exc:
        raise InvalidInputError(f"Cannot read {path}: {exc.strerror}.") from exc
    try:
        return _decoded(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise InvalidInputError(
            f"{path} is not valid: {exc}.", hint="Fix or remove the setting."
        ) from exc


@functools.lru_cache(maxsize=16)
def _decoded(data: bytes) -> HubConfig:
    """Returns the settings a file's bytes hold, one copy for every caller.

    Its Structs are frozen; its one table (``embedder``) is only read.

    A recall reads the file several times (the hub's, the hook's): it is
    read each time, and decoded once while it says the same.
    """
    return msgspec.toml.decode(data, type=HubConfig)
