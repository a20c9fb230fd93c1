"""``ctx doctor``: is ctx wired into the agents here, and does it answer?

The checks, in order, each ``ok``, ``warn`` or ``fail`` with a hint:

1. the store the working folder finds (project or user store);
2. ``ctx`` on the ``PATH`` (the plugins, and ``ctx install --command ctx``,
   run ``ctx hook`` and ``ctx mcp`` by name; ``ctx install`` writes a path);
3. the hub serving the store, or not (not running is fine: a recall starts
   one), and the hooks' last failure in their log, if recent;
4. for each host with files in the project or the user's home: its hooks
   (how many of ctx's events are wired), its MCP entry and (Claude Code)
   the skill; a host wired in one scope is shown in that scope only;
5. a hook run as a host runs it: ``ctx hook session-start`` with a recorded
   input must exit 0 and print nothing or a JSON object (its session's
   state is removed after, by ``session-end``);
6. ``ctx mcp`` started as a host starts it, answering ``list_tools`` within
   the timeout (through the MCP SDK's client, imported only here).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from ctx.engine import CtxError
from ctx.hub import Workspace
from ctx.porcelain.install.hosts import (
    HOSTS,
    PROGRAM,
    SCOPES,
    SERVER_NAME,
    Host,
    program_missing,
)
from ctx.porcelain.install.jsontext import JsonText
from ctx.porcelain.install.manifests import PACKAGE_NAME
from ctx.porcelain.install.settings import hook_programs, hooks_present, toml_server
from ctx.porcelain.install.skill import SKILL_TEXT

__all__ = ["Check", "DoctorReport", "doctor"]

TIMEOUT = 30.0
"""Seconds a spawned hook or MCP server may take: ``ctx mcp`` answers its
first call within about a second (docs/agents.md), more on a loaded machine."""


class Check(msgspec.Struct, frozen=True, kw_only=True):
    """One line of ``ctx doctor``.

    Attributes:
        name: What was checked (``store``, ``claude (project) hooks``, ...).
        status: ``ok``, ``warn`` or ``fail``.
        detail: What was found.
        hint: What to do, when something is wrong.
    """

    name: str
    status: str
    detail: str
    hint: str | None = None


class DoctorReport(msgspec.Struct, frozen=True, kw_only=True):
    """Every check of ``ctx doctor``.

    Attributes:
        ok: Whether no check failed.
        checks: The checks, in order.
    """

    ok: bool
    checks: tuple[Check, ...]


def doctor(
    store: str | None = None, *, spawn: bool = True, program: str = PROGRAM
) -> DoctorReport:
    """Checks the store, the hub, the hosts' wiring, a hook and ``ctx mcp``.

    Args:
        store: The store given explicitly (``--store``), passed on to the
            hook and server it starts.
        spawn: Whether to run a hook and start ``ctx mcp`` (checks 5 and 6).
        program: The ``ctx`` that install writes into hosts' files (a path):
            a hook counts as wired when it runs this one or ``ctx`` by name.
    """
    ws = Workspace.find(store)
    try:
        return _checks(ws, store, spawn, program)
    finally:
        ws.close()


def _checks(
    ws: Workspace, store: str | None, spawn: bool, program: str
) -> DoctorReport:
    """Makes the checks of :func:`doctor` in the workspace it opened."""
    checks: list[Check] = []
    which = "user store" if ws.user_store else "project store"
    if ws.on_disk:
        checks.append(_store(ws, which))
    else:
        checks.append(
            Check(
                name="store",
                status="warn",
                detail=f"no store yet (the {which} {ws.path} is made on first write)",
                hint="Run `ctx init` in the project for a store of its own.",
            )
        )
    exe = shutil.which("ctx")
    if exe:
        checks.append(Check(name="ctx on PATH", status="ok", detail=exe))
    else:
        checks.append(
            Check(
                name="ctx on PATH",
                status="warn",
                detail="`ctx` is not on the PATH: hosts run it only by the path "
                "`ctx install` writes",
                hint=f"Install the package {PACKAGE_NAME} as a program (`uv tool "
                f"install {PACKAGE_NAME}` or `pipx install {PACKAGE_NAME}`).",
            )
        )
    checks.append(_hub(ws))
    checks.append(_hook_log(ws))
    checks.extend(_hosts(program))
    if spawn:
        command = [exe] if exe else [sys.executable, "-m", "ctx.porcelain"]
        extra = ["--store", store] if store else []
        checks.append(_run_hook(command, extra))
        checks.append(_run_mcp(command, extra))
    return DoctorReport(
        ok=all(c.status != "fail" for c in checks), checks=tuple(checks)
    )


def _store(ws: Workspace, which: str) -> Check:
    """Says where the store is, and whether its settings and branch can be read."""
    name, detail = "store", f"{which} {ws.path}"
    try:
        ws.config()
    except CtxError as exc:
        return Check(name=name, status="fail", detail=f"{detail}: {exc.message}")
    try:
        with ws.lock:
            store = ws.store()
            store.commit(store.branch_tip(store.head_branch()))
    except Exception as exc:
        from ctx.engine import store_damage

        said = exc if isinstance(exc, CtxError) else store_damage(exc)
        if said is None:
            raise
        return Check(
            name=name,
            status="fail",
            detail=f"{detail}: {said.message}",
            hint="`ctx fsck` says more.",
        )
    return Check(name=name, status="ok", detail=detail)


def _hub(ws: Workspace) -> Check:
    if not ws.on_disk:
        return Check(name="hub", status="ok", detail="not running (no store yet)")
    from ctx.hub import hub_status

    try:
        status = hub_status(ws)
    except CtxError as exc:
        return Check(name="hub", status="warn", detail=exc.message, hint=exc.hint)
    if status.pid is None:
        from ctx.hub import may_start_hub

        try:
            starts = may_start_hub(ws)
        except CtxError:  # a config that does not load: its own check says so
            starts = False
        return Check(
            name="hub",
            status="ok",
            detail="not running (the first recall starts one)"
            if starts
            else "not running (none is started here: CTX_NO_HUB, "
            "CTX_HUB_AUTOSTART=0 or [hub] autostart = false; `ctx hub start` "
            "starts one)",
        )
    return Check(name="hub", status="ok", detail=f"running (pid {status.pid})")


FAILED = "ctx: memory unavailable"
"""How a hook's context begins the line that says it failed (hooks/runner.py)."""

HOOK_LOG_DAYS = 7
"""How recent a hook's failure must be for ``ctx doctor`` to warn of it."""


def _hook_log(ws: Workspace) -> Check:
    """Says the hooks' last failure, from their log (docs/hooks.md).

    The store's log, and the lines the user's log holds of this store (a
    store that cannot be written logs there): the newer of the two.
    """
    import time

    from ctx.hub import cache_log_path, log_path, store_field

    name = "hook failures"
    found: list[tuple[float, str, Path]] = []
    unreadable: Exception | None = None
    own = None
    try:
        own = log_path(ws)
        found += _last_line(own)
    except (OSError, CtxError) as exc:
        unreadable = exc
    cache = cache_log_path()
    if ws.on_disk and cache != own:
        with contextlib.suppress(OSError):
            found += _last_line(cache, store_field(ws.path))
    if not found:
        if unreadable is not None:
            return Check(
                name=name, status="warn", detail=f"log not readable: {unreadable}"
            )
        return Check(name=name, status="ok", detail="none logged")
    when, line, where = max(found)
    if time.time() - when > HOOK_LOG_DAYS * 86400:
        return Check(name=name, status="ok", detail=f"none in {HOOK_LOG_DAYS} days")
    return Check(
        name=name,
        status="warn",
        detail=f"last: {line[:300]}",
        hint=f"The hooks' log is {where}.",
    )


def _last_line(path: Path, needle: str | None = None) -> list[tuple[float, str, Path]]:
    """Returns the last line of the log at ``path`` (holding ``needle``), if any.

    With when it was written: the time it begins with, else the file's.

    Raises:
        OSError: It cannot be read.
    """
    from datetime import datetime

    try:
        with path.open("rb") as file:
            size = path.stat().st_size
            file.seek(max(0, size - (65536 if needle else 4096)))
            lines = file.read().decode("utf-8", "replace").splitlines()
            modified = path.stat().st_mtime
    except FileNotFoundError:
        return []
    kept = [x for x in lines if needle is None or needle in x]
    if not kept:
        return []
    try:
        when = datetime.strptime(kept[-1][:24], "%Y-%m-%dT%H:%M:%S%z").timestamp()
    except ValueError:
        when = modified
    return [(when, kept[-1], path)]


def _hosts(program: str) -> list[Check]:
    checks: list[Check] = []
    for host in HOSTS.values():
        found = [_host(host, scope, program) for scope in SCOPES]
        # A host wired in one scope needs nothing in the other: only the
        # scopes that hold ctx's entries (or a file that fails) are shown.
        wired = [c for c in found if any(x.status != "warn" for x in c)]
        for scope_checks in wired or found:
            checks.extend(scope_checks)
        if (twice := _both_scopes(host, program)) is not None:
            checks.append(twice)
    if not checks:
        checks.append(
            Check(
                name="agents",
                status="warn",
                detail="no agent host is wired to ctx here or in your home",
                hint="Run `ctx install claude` (or codex, gemini, cursor).",
            )
        )
    return checks


def _host(host: Host, scope: str, program: str) -> list[Check]:
    files = host.files(scope, Path.cwd(), Path.home())
    paths = [p for p in (files.hooks, files.mcp) if p is not None and p.is_file()]
    if not paths:
        return []
    label = f"{host.name} ({scope})"
    hint = f"Run `ctx install {host.name}{' --user' if scope == 'user' else ''}`."
    checks = []
    try:
        if files.hooks is not None and host.events:
            checks.append(_hooks(host.hook_commands(program), files.hooks, label, hint))
        checks.append(_server(host, files.mcp, label, hint))
        if files.skill is not None:
            checks.append(_skill(files.skill, label, hint))
    except CtxError as exc:
        # The message is install's: here nothing was to be written anyway.
        detail = exc.message.removesuffix("; nothing was written.") + "."
        checks.append(Check(name=label, status="fail", detail=detail, hint=exc.hint))
    return checks


def _same_file(first: Path, second: Path) -> bool:
    """Whether two scopes' files are one (the project is the home folder)."""
    try:
        return first.samefile(second)
    except OSError:
        return False


def _both_scopes(host: Host, program: str) -> Check | None:
    """Returns a warning when the host's hooks are in both scopes, else None.

    Codex runs the hooks of every file that has them, side by side: each
    moment's context came twice (Claude Code and Gemini CLI run one command
    once, but two paths to ``ctx`` are two commands).
    """
    if not host.events:
        return None
    commands = host.hook_commands(program)
    holding, programs = [], []
    for scope in SCOPES:
        path = host.files(scope, Path.cwd(), Path.home()).hooks
        try:
            text = path.read_text("utf-8") if path and path.is_file() else None
            doc = JsonText(path, text) if path and text else None
            if path and doc and hooks_present(doc, commands):
                holding.append(path)
                programs.append(hook_programs(doc, commands))
        except (OSError, UnicodeDecodeError, CtxError):
            return None  # the scope's own check says what is wrong
    if (
        len(holding) < len(SCOPES)
        or _same_file(*holding)
        or (host.name != "codex" and len(set(map(frozenset, programs))) == 1)
    ):
        return None
    return Check(
        name=f"{host.name} hooks",
        status="warn",
        detail=f"in both {' and '.join(map(str, holding))}: each may run twice",
        hint=f"Keep one: `ctx uninstall {host.name}` (this project's) "
        f"or `ctx uninstall {host.name} --user`.",
    )


def _hooks(commands: list[tuple[str, str]], path: Path, label: str, hint: str) -> Check:
    doc = JsonText(path, path.read_text("utf-8") if path.is_file() else None)
    found = hooks_present(doc, commands)
    detail = f"{found} of {len(commands)} hooks in {path}"
    # A hook that runs a ctx no longer there (a checkout moved or deleted)
    # fails at every prompt, though it is in its place.
    gone = sorted(p for p in hook_programs(doc, commands) if program_missing(p))
    if gone:
        return Check(
            name=f"{label} hooks",
            status="fail",
            detail=f"{detail}, run by {', '.join(gone)}, which is not there",
            hint=hint,
        )
    if found == len(commands):
        return Check(name=f"{label} hooks", status="ok", detail=detail)
    return Check(name=f"{label} hooks", status="warn", detail=detail, hint=hint)


_URL_KEYS = ("url", "httpUrl", "serverUrl")
"""Where a host reads a remote server's address: ``url`` (Claude Code,
Cursor, Gemini CLI's SSE, Codex), ``httpUrl`` (Gemini CLI's streamable HTTP),
``serverUrl`` (Windsurf)."""


def _url(entry: object) -> str | None:
    if not isinstance(entry, dict):
        return None
    return next((v for k in _URL_KEYS if isinstance(v := entry.get(k), str)), None)


def _server(host: Host, path: Path, label: str, hint: str) -> Check:
    text = path.read_text("utf-8") if path.is_file() else None
    if host.mcp_format == "toml":
        entry = toml_server(path, text)
    else:
        servers = JsonText(path, text).data.get("mcpServers")
        entry = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    name = f"{label} mcp"
    detail = f"server {SERVER_NAME!r} in {path}"
    if entry is None:
        return Check(name=name, status="warn", detail=f"no {detail}", hint=hint)
    command = entry.get("command") if isinstance(entry, dict) else None
    url = _url(entry)
    if command is None and url is not None:
        return Check(name=name, status="ok", detail=f"{detail} at {url}")
    # A server the host cannot start fails every session, though it is named.
    if not isinstance(command, str) or not command.strip():
        return Check(
            name=name, status="fail", detail=f"{detail} has no command", hint=hint
        )
    if program_missing(command):
        return Check(
            name=name,
            status="fail",
            detail=f"{detail} runs {command}, which is not there",
            hint=hint,
        )
    return Check(name=name, status="ok", detail=detail)


def _skill(path: Path, label: str, hint: str) -> Check:
    name = f"{label} skill"
    if not path.is_file():
        return Check(name=name, status="warn", detail=f"no {path}", hint=hint)
    if path.read_text("utf-8") != SKILL_TEXT:
        return Check(
            name=name,
            status="ok",
            detail=f"{path} (edited since ctx wrote it)",
        )
    return Check(name=name, status="ok", detail=str(path))


_HOOK_INPUT = {
    "session_id": "ctx-doctor",
    "transcript_path": "",
    "hook_event_name": "SessionStart",
    "source": "startup",
}


def _run_hook(command: list[str], extra: list[str]) -> Check:
    name = "hook session-start"
    payload = {**_HOOK_INPUT, "cwd": str(Path.cwd())}

    def run(event: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [*command, "hook", event, *extra],
            input=json.dumps(payload).encode(),
            capture_output=True,
            timeout=TIMEOUT,
            check=False,
            # A session's start starts the hub; a check starts nothing.
            env={**os.environ, "CTX_HUB_AUTOSTART": "0"},
        )

    try:
        done = run("session-start")
        run("session-end")
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Check(name=name, status="fail", detail=f"did not run: {exc}")
    out = done.stdout.decode("utf-8", "replace").strip()
    if done.returncode != 0:
        return Check(
            name=name,
            status="fail",
            detail=f"exited {done.returncode}",
            hint="See the store's private/hooks.log.",
        )
    try:
        answer = json.loads(out) if out else {}
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        return Check(
            name=name,
            status="fail",
            detail="printed something that is not a JSON object",
            hint="Something on the PATH prints before ctx runs; check your shell.",
        )
    given = answer.get("hookSpecificOutput", {}).get("additionalContext", "")
    failed = [x for x in given.splitlines() if x.startswith(FAILED)]
    if failed:
        return Check(
            name=name, status="warn", detail=failed[0], hint="See `hook failures`."
        )
    return Check(
        name=name, status="ok", detail=f"exit 0, {len(given)} characters of context"
    )


def _run_mcp(command: list[str], extra: list[str]) -> Check:
    name = "mcp"
    try:
        count = _list_tools(command, extra)
    except Exception as exc:  # any failure of the server is the finding
        return Check(
            name=name,
            status="fail",
            detail=f"`ctx mcp` did not answer: {exc}".strip(),
            hint="Run `ctx mcp` in a shell to see its error.",
        )
    return Check(name=name, status="ok", detail=f"`ctx mcp` answers ({count} tools)")


def _list_tools(command: list[str], extra: list[str]) -> int:
    import tempfile

    import anyio
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=command[0],
        args=[*command[1:], "mcp", *extra],
        env=dict(os.environ),
    )

    async def ask(errlog: Any) -> int:
        with anyio.fail_after(TIMEOUT):
            async with Client(stdio_client(params, errlog=errlog)) as client:
                return len((await client.list_tools()).tools)

    # The server's stderr goes to a file (not ours, which may be no file),
    # whose last line explains a failure.
    with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:
        try:
            run: Callable[..., int] = anyio.run
            return run(ask, errlog)
        except Exception as exc:
            errlog.seek(0)
            lines = errlog.read().strip().splitlines()
            # A ctx error ends with its hint: the error is the line before.
            said = [x for x in lines if not x.startswith("Hint: ")][-1:] or lines[-1:]
            if said and lines[-1].startswith("Hint: ") and said[0] != lines[-1]:
                said = [f"{said[0]} {lines[-1]}"]
            raise ServerError(
                said[0] if said else f"{type(exc).__name__} {exc}"
            ) from exc


class ServerError(Exception):
    """``ctx mcp`` did not answer; the message is its last line of stderr."""
