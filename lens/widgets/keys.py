"""The footer of keys, drawn again only when the keys it shows change."""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import Footer

__all__ = ["MODES", "KeyFooter", "mode_keys"]

MODES = ("history", "memories", "graph", "recall", "review")
"""The lens's screens, on the keys 1 to 5."""


def mode_keys(*, on: str = "", show: bool = True) -> list[Binding]:
    """Returns the keys 1 to 5, each showing one of :data:`MODES`.

    ``on``: where the action is (``app.`` from a screen's own bindings).
    """
    return [
        Binding(str(n), f"{on}mode('{mode}')", mode.title(), show=show)
        for n, mode in enumerate(MODES, start=1)
    ]


Shown = tuple[tuple[str, str, str, bool, str], ...]


class KeyFooter(Footer):
    """Textual's footer, which rebuilds itself only when its keys change.

    Textual's rebuilds its keys (a widget each, styled anew) every time the
    screen's bindings are refreshed: on every change of focus, and several
    times while a screen opens, where the keys shown were the same. Each
    rebuild cost 30-50 ms; opening the history rebuilt it six times.
    """

    def __init__(self) -> None:
        # Compact: at 80 columns the keys of the review screen and the help
        # and quit keys after them fit.
        super().__init__(compact=True)
        self._shown: Shown | None = None

    def _keys(self) -> Shown:
        return tuple(
            (binding.key, binding.action, binding.description, enabled, tooltip)
            for (_, binding, enabled, tooltip) in self.screen.active_bindings.values()
            if binding.show
        )

    async def recompose(self) -> None:
        """Rebuilds the keys, unless they are the ones shown."""
        if not self._bindings_ready or not self.is_attached:
            await super().recompose()
            return
        keys = self._keys()
        if keys != self._shown:
            self._shown = keys
            await super().recompose()
