"""The MCP surface: what ``tools/list`` costs a session, and recall over stdio.

Usage::

    .venv/bin/python benchmarks/bench_mcp_surface.py --before HEAD,09785c4

What it measures, for the working tree and, beside it in the same run, for
``ctx mcp`` as committed at each ``--before`` revision (a copy of its
sources ahead on PYTHONPATH; results in ``benchmarks/results/mcp_surface.md``):

1. The tool list as the SDK client receives it from ``ctx mcp`` over stdio,
   by default and with ``--tools all`` (a revision without the option lists
   every tool by default): the characters of the names, descriptions and
   input schemas, and of the whole list (output schemas and annotations
   too), each also as tokens counted as characters / 4.
2. ``recall`` p50 / p95 in-process (the call's handler with a hub's
   answerer, as ``ctx mcp`` answers) beside MCP over stdio (``ctx mcp`` with
   ``CTX_NO_HUB=1``, answering itself; the working tree's and the earlier
   commit's), interleaved query by query, on bench_recall's store of
   ``--size`` memories (hashing vectors). The working tree is asked twice:
   by the SDK client as it is, which checks each structured answer against
   the tool's output schema (``jsonschema``), and by one that does not
   (:func:`unchecked`), to show what of the gap is the client's own check.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import bench_agents as ba  # sets CTX_NO_HUB=1 for this process
import bench_recall as br
from _bench_common import ahead_on_path, frozen_copy, machine_lines

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "mcp_surface.md"
BUDGET_TOKENS = 4_000  # the default list's names, descriptions, input schemas
NOW_TREE = "working tree"
ALL_TOOLS = 35


def tokens(chars: int) -> str:
    return f"{chars:,} ({chars / 4:,.0f})"


def stdio(store: Path, env: dict[str, str], *args: str) -> Any:
    from mcp import StdioServerParameters

    argv = ["--store", str(store), "mcp", *args]
    return StdioServerParameters(command=ba.CTX, args=argv, env=env)


async def tool_list(store: Path, env: dict[str, str], *args: str) -> dict[str, Any]:
    """The sizes of the tool list ``ctx mcp ARGS`` gives the SDK client."""
    from mcp import Client

    async with Client(stdio(store, env, *args)) as client:
        tools = (await client.list_tools()).tools
    whole = [t.model_dump(by_alias=True, exclude_none=True) for t in tools]
    read = [{k: t[k] for k in ("name", "description", "inputSchema")} for t in whole]
    return {
        "tools": len(tools),
        "read": len(json.dumps(read, separators=(",", ":"))),
        "whole": len(json.dumps(whole, separators=(",", ":"))),
        "output": sum(len(json.dumps(t.get("outputSchema", {}))) for t in whole),
    }


async def lists(store: Path, envs: dict[str, dict[str, str]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, env in envs.items():
        out[name] = {"default": await tool_list(store, env)}
        if out[name]["default"]["tools"] < ALL_TOOLS:
            out[name]["all"] = await tool_list(store, env, "--tools", "all")
    return out


UNCHECKED = "MCP stdio, working tree, the client not checking the answer"


def unchecked(client: Any) -> Any:
    """Returns ``client`` with its check of answers against output schemas off.

    The SDK client validates every structured answer against the tool's
    output schema with ``jsonschema``; a host may or may not. Only this
    client's session is changed.
    """

    async def no_check(name: str, result: Any) -> None:
        return None

    client.session.validate_tool_result = no_check
    return client


async def recall_latency(
    store: Path, envs: dict[str, dict[str, str]], args: argparse.Namespace
) -> dict[str, Any]:
    """recall in-process and through each ``ctx mcp`` over stdio, interleaved."""
    from contextlib import AsyncExitStack

    from mcp import Client

    queries = [{"query": q, "now": ba.NOW} for q in br.make_queries(args.queries)]
    ws = ba.workspace(store, hub_answerer=True)
    paths = [ba.Route(ba.HUB_IN, ba.in_process(ws))]
    try:
        async with AsyncExitStack() as stack:
            for name, env in envs.items():
                client = await stack.enter_async_context(Client(stdio(store, env)))
                await client.call_tool("recall", queries[0])  # its answerer loaded
                paths.append(ba.Route(f"MCP stdio, {name}", ba.over_mcp(client)))
                if name == NOW_TREE:
                    bare = await stack.enter_async_context(Client(stdio(store, env)))
                    await bare.call_tool("recall", queries[0])
                    paths.append(ba.Route(UNCHECKED, ba.over_mcp(unchecked(bare))))
            inputs = queries[: args.warmup] + queries
            await ba.interleave(paths, "recall", inputs, args.warmup)
    finally:
        ws.close()
    return {p.name: ba.pct(p.times["recall"]) for p in paths}


def render(args: argparse.Namespace, found: dict[str, Any]) -> str:
    out = [
        "# The MCP surface: the tool list's size, and recall over stdio\n",
        "Generated by `benchmarks/bench_mcp_surface.py`; do not edit by hand. "
        f"Command: `{found['command']}`.\n",
        *found["machine"],
        "",
        "## 1. The tool list\n",
        "Characters of compact JSON as the SDK client receives `tools/list` "
        "from `ctx mcp` over stdio, tokens counted as characters / 4 in "
        "brackets. *Read* is what a model reads of each tool (name, "
        "description, input schema); *whole* is the list with output schemas "
        f"and annotations. The budget for the default list's read part is "
        f"{BUDGET_TOKENS:,} tokens (a commit before `--tools` listed every "
        "tool by default).\n",
        "| ctx | list | tools | read | whole | output schemas | budget |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, sizes in found["lists"].items():
        for which, s in sizes.items():
            met = ""
            if which == "default":
                met = "met" if s["read"] / 4 < BUDGET_TOKENS else "missed"
            out.append(
                f"| {name} | {which} | {s['tools']} | {tokens(s['read'])} | "
                f"{tokens(s['whole'])} | {tokens(s['output'])} | {met} |"
            )
    inside = found["recall"][ba.HUB_IN][0]
    out += [
        "",
        f"## 2. recall, {args.size:,} memories (ms)\n",
        f"{args.queries} queries after {args.warmup} untimed, each made on "
        "every path in turn; in-process is the call's handler with a hub's "
        "answerer (as `ctx mcp` answers its own calls). The goal: MCP over "
        "stdio within 5 ms of in-process (p50).\n",
        "| path | p50 / p95 | minus in-process (p50) | goal |",
        "|---|---|---|---|",
    ]
    for name, (p50, p95) in found["recall"].items():
        gap = p50 - inside
        goal = "" if name == ba.HUB_IN else "met"
        if goal and gap > ba.GOAL_RECALL_MS:
            goal = "missed"
        out.append(f"| {name} | {p50:.2f} / {p95:.2f} | {gap:+.2f} | {goal} |")
    return "\n".join(out) + "\n"


async def run(args: argparse.Namespace) -> dict[str, Any]:
    opened = br.ensure_store(args.size, "hashing")
    if not (br.store_dir(args.size, "hashing") / "build.json").exists():
        br.build(opened)
    store = Path(opened.path)
    opened.close()
    envs = {NOW_TREE: ba.NO_HUB}
    for rev in filter(None, (args.before or "").split(",")):
        src, commit = frozen_copy(rev)
        envs[f"commit {commit}"] = {**ba.NO_HUB, "PYTHONPATH": ahead_on_path(src)}
    ba.progress("tool lists")
    found = {"lists": await lists(store, envs)}
    ba.progress("recall, interleaved")
    found["recall"] = await recall_latency(store, envs, args)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--before", help="measure ctx mcp as committed at REV too (REV,REV...)"
    )
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    command = "python benchmarks/bench_mcp_surface.py " + " ".join(
        f"--{k} {v}" for k, v in vars(args).items() if v and k != "no_write"
    )
    started = datetime.now(UTC)
    began = time.perf_counter()
    ba.progress(f"{args.size:,} memories")
    br.compile_ctx()
    found = asyncio.run(run(args))
    minutes = (time.perf_counter() - began) / 60
    found["command"] = command
    found["machine"] = machine_lines(started, ba.LOADS, [("Run", f"{minutes:.1f} min")])
    text = render(args, found)
    print(text)
    if not args.no_write:
        RESULTS.write_text(text)


if __name__ == "__main__":
    main()
