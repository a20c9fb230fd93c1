"""The user's hub, run in the background by a recall that found none.

``python -m ctx.porcelain.background_hub STORE [--idle MINUTES]
[--autostarted]``: what :func:`ctx.hub.server.client.start_hub` starts, so
that the hub never needs the command line. It opens STORE first and serves
every store it is asked about. ``ctx hub start`` is the same server in the
foreground. It lives with the doors since it hands the hooks' answerer
(:func:`~ctx.porcelain.hooks.relayed_answer`) to the hub it runs.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from collections.abc import Sequence
from typing import Any


def _exit(*_: Any) -> None:
    sys.exit(0)  # unwinds through serve(), which removes its socket


def main(argv: Sequence[str] | None = None) -> int:
    """Serves the store until stopped or idle; returns the exit code."""
    # An entry point may set the process's BLAS threads (see ctx.porcelain.main).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    parser = argparse.ArgumentParser(prog="python -m ctx.porcelain.background_hub")
    parser.add_argument("store", help="the store folder to open first")
    parser.add_argument("--idle", type=float, metavar="MINUTES", default=None)
    parser.add_argument("--autostarted", action="store_true", help="by a recall")
    args = parser.parse_args(argv)
    from ctx.engine import CtxError
    from ctx.hub import HubStarted, Workspace, run_hub
    from ctx.porcelain.hooks import relayed_answer  # the entry point wires the hooks in

    def ready(started: HubStarted) -> None:
        sys.stdout.write(
            f"Hub listening on {started.socket} (pid {started.pid}), "
            f"{started.store} open.\n"
        )
        sys.stdout.flush()

    signal.signal(signal.SIGTERM, _exit)
    workspace = Workspace.find(args.store)
    try:
        with contextlib.suppress(KeyboardInterrupt):
            run_hub(
                workspace,
                idle_minutes=args.idle,
                ready=ready,
                autostarted=args.autostarted,
                hooks=relayed_answer,
            )
    except CtxError as exc:
        sys.stderr.write(f"Error: {exc.message}\n")
        return exc.exit_code
    finally:
        workspace.close()
    sys.stdout.write("Hub stopped.\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
