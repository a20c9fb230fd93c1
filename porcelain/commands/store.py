"""Commands for the store itself: init, status, gc, fsck."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ctx import engine, hub
from ctx.engine import plural
from ctx.hub import calls
from ctx.porcelain._options import (
    CtxState,
    branch_name_option,
    echo_json,
    json_option,
    now,
    pass_state,
)
from ctx.porcelain.output import echo
from ctx.porcelain.render import render_status

__all__ = ["COMMANDS"]


@click.command()
@click.argument("folder", default=".", type=click.Path(file_okay=False))
@click.option(
    "--branch", default="main", show_default=True, help="Name of the first branch."
)
@click.option(
    "--with-code",
    is_flag=True,
    help="Add the code repository's remote origin as the store's origin: "
    "memory branches go under ctx/ there.",
)
@click.option(
    "--follow-code",
    is_flag=True,
    help="Work on the memory branch named as the code's current branch "
    "([branches] follow_code; docs/branches.md).",
)
@click.option(
    "--import",
    "import_",
    is_flag=True,
    help="Bring in the instruction files found (CLAUDE.md, AGENTS.md, "
    ".cursorrules, ...): pinned where they are rules, primed otherwise.",
)
@json_option
@pass_state
def init(
    state: CtxState,
    folder: str,
    branch: str,
    with_code: bool,
    follow_code: bool,
    import_: bool,
    as_json: bool,
) -> None:
    """Create a project store (.ctx/) in FOLDER (default: here)

    In a linked worktree (`git worktree add`) the store goes to the top of
    the main work tree, where every worktree of the checkout finds it.
    Lists the instructions the project already has (CLAUDE.md, AGENTS.md,
    GEMINI.md, .cursorrules, .cursor/rules/, .github/copilot-instructions.md
    and the hosts' own files in your home); --import primes them, one memory
    per section, again and again without duplicates, never changing them.
    With --with-code, the code's own remote carries the memory too: `ctx
    push` sends branch main to ctx/main there (docs/remotes.md).

    \b
    Example:
      ctx init
      ctx init --import
      ctx init --with-code
    """
    path = Path(state.explicit) if state.explicit else hub.new_store_path(Path(folder))
    if with_code:  # no code remote, or not the code's store: nothing is made
        engine.code_remote_url(Path(folder))
        engine.check_code_store(path, Path(folder))
    result = engine.init_store(path.absolute(), clock=now, branch=branch)
    write_config(path)
    followed = follow_code and hub.follow_code(path)
    added = None
    if with_code:
        state.explicit = result.path
        store = state.store(write=True)
        origin = next(
            (r for r in engine.list_remotes(store) if r.name == "origin"), None
        )
        if origin is None:
            added = engine.add_code_remote(store, "origin", Path(folder))
        elif (origin.url, origin.namespace) != (
            engine.code_remote_url(Path(folder)),
            engine.CODE_NAMESPACE,
        ):
            raise engine.ConflictError(
                f"The store at {result.path} already has a remote origin at "
                f"{origin.url}, not the code's.",
                hint="`ctx remote remove origin`, then `ctx remote add origin "
                "--with-code`, carries the memory on the code's remote.",
            )
    found = hub.find_instructions(Path(folder), Path.home())
    if as_json:
        imported = _import(state, result.path, found) if import_ and found else []
        remote = added.url if added is not None else None
        echo_json(
            hub.InitReport(
                path=result.path,
                created=result.created,
                remote=remote,
                found=found,
                imported=imported,
            )
        )
        return
    if not result.created:
        echo(f"Store already exists at {result.path}.")
        if followed:
            echo("It follows the code's branches from now on (docs/branches.md).")
    else:
        echo(f"Created an empty store at {result.path} (branch {branch}).")
        echo(NOT_COMMITTED)
    if added is not None:
        echo(f"Added remote origin at {added.url} (branches under ctx/).")
    elif (
        not with_code
        and "origin" in engine.code_remotes(Path(folder))
        and not _has_origin(Path(result.path))
    ):
        echo(_CODE_REMOTE_HINT)
    if follow_code and engine.code_work_tree(Path(folder)) is None:
        echo(
            f"Notice: {Path(folder).absolute()} is not inside a git work tree: the "
            "store follows the code's branches only where it is used in one.",
            err=True,
        )
    if found:
        _offer(state, result.path, found, import_)


def _offer(
    state: CtxState, store: str, found: list[hub.FoundInstructions], import_: bool
) -> None:
    """Lists the instruction files found and imports them if asked (or told yes).

    The question is asked only at a terminal: an agent that runs `ctx init`
    is never left waiting for an answer.
    """
    if not import_:
        _render_found(found)
        terminal = sys.stdin.isatty() and sys.stdout.isatty()
        import_ = terminal and click.confirm("Bring them in now?", default=False)
    if import_:
        _render_imported(_import(state, store, found))


def _import(
    state: CtxState, store: str, found: list[hub.FoundInstructions]
) -> list[hub.ImportedInstructions]:
    state.explicit = store
    ws = state.workspace()
    return hub.import_instructions(ws, found, ws.intent("import"))


def _render_found(found: list[hub.FoundInstructions]) -> None:
    echo(
        f"Found {plural(len(found), 'instruction file')}; `ctx init --import` "
        "brings them in (the files are not changed):"
    )
    width = max(len(f.path) for f in found)
    for f in found:
        area = "pinned" if f.pin else "primed"
        echo(f"  {f.path:<{width}}  {area}, {plural(f.sections, 'section')}")


def _has_origin(path: Path) -> bool:
    """Returns whether the store at ``path`` has a remote named origin already."""
    store = engine.Store.open(path, clock=now)
    try:
        return any(r.name == "origin" for r in engine.list_remotes(store))
    finally:
        store.close()


def _render_imported(imported: list[hub.ImportedInstructions]) -> None:
    for item in imported:
        f, where = item.found, f"{item.area}/{item.found.source}"
        if item.commit is None:
            echo(f"  {f.path} is already in {where}.")
        else:
            sections = plural(f.sections, "section")
            echo(
                f"  Imported {f.path} into {where} ({sections}) in {item.commit[:10]}."
            )


NOT_COMMITTED = """\
Leave .ctx/ out of the project's commits (add `.ctx/` to its .gitignore): it is
a git repository of its own, which ctx commits to; share memories by pushing
its branches (`ctx remote add origin --with-code` puts them on the code's own
remote, under ctx/). Its own .gitignore keeps the derived index and private
state out of any commit."""

_CODE_REMOTE_HINT = """\
The code's remote origin can carry this memory too, as branches under ctx/:
`ctx remote add origin --with-code`, then `ctx push`."""


_CONFIG = """\
# ctx store settings. The engine keeps everything else in git/.
[recall]
# Tokens a recall may return when --budget is not given.
budget = 1500
"""


def write_config(path: Path) -> None:
    """Writes the store's ``config.toml`` with its defaults unless it has one."""
    config = path / "config.toml"
    if not config.exists():
        config.write_text(_CONFIG, encoding="utf-8")


@click.command()
@branch_name_option
@json_option
@pass_state
def status(state: CtxState, branch: str | None, as_json: bool) -> None:
    """Show the branch, head, counts by kind and place, conflicts and size

    \b
    Example:
      ctx status
    """
    result = state.call(calls.status, calls.StatusRequest(branch=branch))
    if as_json:
        echo_json(result)
    else:
        for unreadable in result.unreadable:
            echo(f"Warning: {unreadable.warning()}", err=True)
        render_status(result)


@click.command()
@click.option(
    "--auto",
    is_flag=True,
    help="Only pack loose objects, and only if there are many (as `git gc "
    "--auto`; what a write starts in the background).",
)
@json_option
@pass_state
def gc(state: CtxState, auto: bool, as_json: bool) -> None:
    """Pack loose objects into one pack file

    \b
    Example:
      ctx gc
      ctx gc --auto
    """
    if auto:
        packs = engine.auto_pack(state.store())
        if as_json:
            echo_json(packs)
        else:
            echo(f"Packed {plural(packs.packed, 'loose object')}.")
        return
    report = engine.gc(state.store(write=True))
    if as_json:
        echo_json(report)
    else:
        packed = plural(report.loose_before - report.loose_after, "loose object")
        echo(
            f"Packed {packed}; {plural(report.packs_after, 'pack')}; "
            f"{plural(report.pruned, 'unreachable object')} pruned."
        )


@click.command()
@json_option
@pass_state
def fsck(state: CtxState, as_json: bool) -> None:
    """Verify every object, every branch's reachability and every memory

    Exits with 6 when a problem is found.

    \b
    Example:
      ctx fsck
    """
    report = engine.fsck(state.store())
    if as_json:
        echo_json(report)
    else:
        for problem in report.problems:
            echo(problem)
        verdict = "ok" if report.ok else plural(len(report.problems), "problem")
        echo(
            f"Checked {plural(report.objects, 'object')}, "
            f"{plural(report.commits, 'commit')}, "
            f"{plural(report.memories, 'memory')}: {verdict}."
        )
    if not report.ok:
        raise SystemExit(6)


COMMANDS = [init, status, gc, fsck]
