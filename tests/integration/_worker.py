"""A writer process for the integration tests, run as a script.

Every mode opens the store, prints ``ready``, optionally waits for a start
file (a barrier shared by all workers), then works. A line is printed only
after the call it reports has returned, and stdout is flushed at once, so a
line the parent reads is a write the engine acknowledged.

Modes:
    remember STORE AGENT --count N [--branch B [--new-branch]]
        N calls of remember(); prints ``<id> <text>`` per write (N < 0: forever).
        With --new-branch, first creates branch B from the HEAD branch.
    batch STORE AGENT --count N --tag TAG
        One remember_many() of N drafts; prints ``done <commit>``.
    branch STORE AGENT NAME...
        create_branch() for each NAME; prints ``created NAME`` or
        ``exists NAME``.
    cli - AGENT -- ARG...
        Runs the ``ctx`` command line (the function the console script
        calls) with ARG..., so that it too can start at the barrier. It opens
        no store beforehand: the command finds or creates its own.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from ctx.engine import (
    ConflictError,
    Draft,
    Intent,
    Store,
    create_branch,
    remember,
    remember_many,
)


def _clock() -> datetime:
    return datetime.now(UTC)


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _wait_for(start: str | None) -> None:
    if start is None:
        return
    deadline = time.monotonic() + 60
    while not os.path.exists(start):
        if time.monotonic() > deadline:
            raise SystemExit("the start file never appeared")
        time.sleep(0.001)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["remember", "batch", "branch", "cli"])
    parser.add_argument("store")
    parser.add_argument("agent")
    parser.add_argument("names", nargs="*")
    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--branch")
    parser.add_argument("--new-branch", action="store_true")
    parser.add_argument("--tag", default="batch")
    parser.add_argument("--start", help="Wait until this file exists.")
    argv = sys.argv[1:]
    passthrough: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, passthrough = argv[:cut], argv[cut + 1 :]
    args = parser.parse_args(argv)

    if args.mode == "cli":
        from ctx.porcelain.main import main as ctx_main

        _say("ready")
        _wait_for(args.start)
        sys.argv = ["ctx", *passthrough]
        ctx_main()
        return

    store = Store.open(Path(args.store), clock=_clock)
    intent = Intent(agent=args.agent, intent="observe", confidence=0.5)
    _say("ready")
    _wait_for(args.start)

    if args.mode == "remember":
        if args.new_branch:
            create_branch(store, args.branch)
        n = 0
        while args.count < 0 or n < args.count:
            text = f"{args.agent} note {n}"
            result = remember(store, Draft(text=text), intent, branch=args.branch)
            _say(f"{result.ids[0]} {text}")
            n += 1
    elif args.mode == "batch":
        drafts = [
            Draft(text=f"{args.tag} item {i}", context="bulk")
            for i in range(args.count)
        ]
        result = remember_many(store, drafts, intent, branch=args.branch)
        assert result.commit is not None
        _say(f"done {result.commit.id}")
    else:
        for name in args.names:
            try:
                create_branch(store, name)
            except ConflictError:
                _say(f"exists {name}")
            else:
                _say(f"created {name}")
    store.close()


if __name__ == "__main__":
    main()
