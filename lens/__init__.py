"""The lens: a terminal UI over history, memories, the link graph, recall, review.

``ctx lens`` runs :func:`run_lens`; tests and benchmarks build a
:class:`LensApp` on a :class:`Source` and drive it with Textual's Pilot.
Importing this package imports Textual (about 0.4 s): only ``ctx lens``
does, never the other commands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctx.lens.app import LensApp
from ctx.lens.source import REVIEW_INTENT, Source

if TYPE_CHECKING:
    from ctx.hub import Workspace

__all__ = ["REVIEW_INTENT", "LensApp", "Source", "run_lens"]


def run_lens(workspace: Workspace, branch: str | None = None) -> int:
    """Runs the lens on ``workspace`` until the user quits; returns its exit code.

    Bad input (no store, an unknown branch) raises before the terminal is
    taken over, so the command line reports it as every command does. The
    code is 1 when the app ended on an error it could not show (Textual
    prints it), else 0.
    """
    app = LensApp(Source.open(workspace, branch))
    app.run()
    return app.return_code or 0
