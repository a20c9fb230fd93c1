"""What every screen of the lens shares: its source, workers, errors."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from textual.screen import Screen
from textual.widgets import DataTable
from textual.worker import get_current_worker

from ctx.engine import CtxError, store_damage, visible

if TYPE_CHECKING:
    from ctx.lens.source import Source

__all__ = ["LensScreen", "error_text", "set_columns"]

T = TypeVar("T")


def set_columns(table: DataTable[Any], *columns: tuple[str, int]) -> None:
    """Adds columns of fixed widths (label, cells).

    Fixed, not fitted to the rows: the table is filled again on every
    refresh, and a width that follows the rows made the columns jump (and
    left them at their labels' width when a refresh came between a fill
    and the table's next idle moment).
    """
    for label, width in columns:
        table.add_column(label, width=width)


def error_text(exc: CtxError) -> str:
    """Returns an error as the command line prints it: ``Error:`` and ``Hint:``.

    An error may quote what it was given (a name, a query): its controls are
    shown as escapes, and it is notified as plain text, never as markup.
    """
    text = f"Error: {exc.message}"
    return visible(f"{text}\nHint: {exc.hint}" if exc.hint else text)


class LensScreen(Screen[None]):
    """A screen of the lens: it reads its source on worker threads.

    Subclasses implement :meth:`reload`, which the app calls on the refresh
    key, on its timer when the store changed, and after the lens wrote.
    """

    @property
    def source(self) -> Source:
        """Returns the app's source (store, branch, who writes)."""
        source: Source = getattr(self.app, "source")  # noqa: B009 (LensApp's)
        return source

    def reload(self) -> None:
        """Reads what the screen shows again."""

    def on_screen_resume(self) -> None:
        """Reads again when the screen comes back into view."""
        self.reload()

    def load(
        self,
        read: Callable[[], T],
        show: Callable[[T], None],
        *,
        group: str = "load",
        settle: float = 0.0,
    ) -> None:
        """Runs ``read`` on a worker thread, then ``show`` with its result.

        A newer load of the same group supersedes an older one: the older
        one's result is dropped. With ``settle``, the read waits that many
        seconds first and is skipped if superseded meanwhile (a key held
        down through a list reads only where it stops). A
        :class:`~ctx.engine.CtxError` becomes a notification with the
        command line's text, and so does a store's damage met on the way (bad
        bytes in an object or a branch file: ``ctx fsck`` finds them), as
        every command says it, not a traceback.
        """

        def job() -> None:
            worker = get_current_worker()
            if settle:
                time.sleep(settle)
                if worker.is_cancelled:
                    return
            try:
                result = read()
            except Exception as exc:  # only a store's damage is kept
                said = exc if isinstance(exc, CtxError) else store_damage(exc)
                if said is None:
                    raise  # a defect: the app shows it and exits 1
                if not worker.is_cancelled:
                    self.app.call_from_thread(self.report, said)
                return
            if not worker.is_cancelled:
                self.app.call_from_thread(_shown, show, result)

        self.run_worker(job, thread=True, exclusive=True, group=group)

    def report(self, exc: CtxError) -> None:
        """Shows an error in a notification."""
        self.notify(error_text(exc), severity="error", timeout=8, markup=False)


def _shown(show: Callable[[T], None], result: T) -> None:
    """Shows a worker's result, then moves what is alive out of the collector's way.

    At 100k memories the store's caches hold millions of objects, and each
    full collection of the cycle collector walked them all: 270-430 ms
    during which no key was handled. Freezing (``gc.freeze``) keeps the
    objects alive now out of later collections; they are still freed by
    their reference counts when dropped.
    """
    show(result)
    gc.freeze()
