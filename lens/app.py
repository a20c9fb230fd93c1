"""The lens app: five screens on number keys, a help page, a refresh timer.

Only the history, the first screen, is imported with the app: each other
screen's module (and what it needs: recall's indexes, Dream's numpy) is
imported, and the screen built, when it is first shown.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.screen import Screen

from ctx.engine import BranchInfo, CtxError, store_damage
from ctx.lens.messages import OpenMemory, ShowGraph, StoreChanged
from ctx.lens.screens.base import LensScreen, error_text
from ctx.lens.screens.help import HelpScreen
from ctx.lens.screens.history import HistoryScreen
from ctx.lens.source import Source
from ctx.lens.widgets.keys import mode_keys

if TYPE_CHECKING:
    from ctx.lens.screens.graph import GraphScreen

__all__ = ["POLL_SECONDS", "LensApp"]

POLL_SECONDS = 5.0
"""How often the lens looks whether another process moved a branch: reading
the branch tips costs well under a millisecond, and a person switching
windows expects what an agent wrote meanwhile to be there."""


class LensApp(App[None]):
    """The terminal UI over a store.

    Args:
        source: The store, the branch shown, who writes.
        poll_seconds: How often to look for changes made by other processes
            (``None``: never; the refresh key still works).
    """

    TITLE = "ctx lens"
    CSS = """
    VerticalScroll > Static { width: 1fr; }
    """
    ENABLE_COMMAND_PALETTE = False

    BINDINGS: ClassVar[list[BindingType]] = [
        *mode_keys(),
        Binding("question_mark", "help", "Help"),
        Binding("ctrl+r", "reload", "Refresh", show=False),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(
        self, source: Source, *, poll_seconds: float | None = POLL_SECONDS
    ) -> None:
        super().__init__()
        self.source = source
        self.poll_seconds = poll_seconds
        self._graph: GraphScreen | None = None
        self.tips: tuple[tuple[str, str], ...] | None = None
        screens: dict[str, Callable[[], Screen[None]]] = {
            "history": HistoryScreen,
            "memories": _memories,
            "graph": lambda: self.graph,
            "recall": _recall,
            "review": _review,
        }
        for mode, make in screens.items():
            self.add_mode(mode, make)

    @property
    def graph(self) -> GraphScreen:
        """Returns the graph screen (made on first use; other screens centre it)."""
        if self._graph is None:
            from ctx.lens.screens.graph import GraphScreen

            self._graph = GraphScreen()
        return self._graph

    def on_mount(self) -> None:
        """Opens the history and starts the refresh timer.

        The tips the timer compares with are read now, as the screens first
        read the store: taken at the first tick, a write made before it was
        the tips' baseline, and never shown until a second one.
        """
        self.switch_mode("history")
        if self.poll_seconds is not None:
            self._poll(first=True)
            self.set_interval(self.poll_seconds, self._poll)

    def _poll(self, *, first: bool = False) -> None:
        def job() -> None:
            try:
                branches = self.source.branches()
                shown = self.source.branch
                # The branch shown, deleted by another process: the store's
                # default is shown instead, or every screen says it is unknown.
                gone = shown not in {b.name for b in branches}
                head = self.source.read(lambda s: s.head_branch()) if gone else None
            except Exception as exc:  # only a store's damage is kept
                if isinstance(exc, CtxError) or store_damage(exc) is not None:
                    return  # shown by the screens' own reads
                raise
            self.call_from_thread(self._seen, branches, first, head)

        self.run_worker(job, thread=True, exclusive=True, group="poll")

    def _seen(
        self, branches: list[BranchInfo], first: bool = False, head: str | None = None
    ) -> None:
        tips = tuple((b.name, b.tip) for b in branches)
        gone = self.source.branch
        if head is not None and head != gone:
            self.source.branch = head
            self.notify(
                f"Branch {gone} is gone (deleted elsewhere): showing {head}, "
                "the store's default.",
                severity="warning",
                timeout=10,
                markup=False,
            )
            self.action_reload()
        elif not first and self.tips is not None and tips != self.tips:
            self.action_reload()
        self.tips = tips

    def action_mode(self, mode: str) -> None:
        """Shows one of the five screens."""
        self.switch_mode(mode)

    def action_help(self) -> None:
        """Shows the keys."""
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_reload(self) -> None:
        """Reads the store again for the screen shown."""
        if isinstance(self.screen, LensScreen):
            self.screen.reload()

    def on_open_memory(self, message: OpenMemory) -> None:
        """Opens a memory's page on top of the screen shown."""
        from ctx.lens.screens.memory import MemoryScreen

        self.push_screen(MemoryScreen(message.memory_id))

    def on_show_graph(self, message: ShowGraph) -> None:
        """Shows the link graph around a memory."""
        self.switch_mode("graph")
        while len(self.screen_stack) > 1:
            self.pop_screen()
        self.graph.centre_on(message.memory_id)

    def on_store_changed(self, message: StoreChanged) -> None:
        """Reads again after a write from the lens."""
        self.action_reload()

    def report(self, exc: CtxError) -> None:
        """Shows an error in a notification."""
        self.notify(error_text(exc), severity="error", timeout=8, markup=False)


def _memories() -> Screen[None]:
    from ctx.lens.screens.memories import MemoriesScreen

    return MemoriesScreen()


def _recall() -> Screen[None]:
    from ctx.lens.screens.recall import RecallScreen

    return RecallScreen()


def _review() -> Screen[None]:
    from ctx.lens.screens.review import ReviewScreen

    return ReviewScreen()
