"""The link graph drawn: a neighbourhood as a tree of boxes and lines."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from ctx.engine import Neighbourhood
from ctx.lens.render import LINK_STYLE, LINK_STYLES
from ctx.lens.widgets.graph_layout import TYPE_MARKS, Layout, Placed, lay_out

__all__ = ["GraphView"]

_CONNECTOR = 7
_MIN_LABEL = 12
_MAX_LABEL = 36


def _connector(child: Placed, first: bool, last: bool) -> tuple[str, str]:
    corner = "─" if first and last else "┬" if first else "└" if last else "├"
    mark = TYPE_MARKS.get(child.edge or "", "???")
    body = f"{mark}─▶" if child.outward else f"◀{mark}─"
    return corner + body + " ", LINK_STYLES.get(child.edge or "", LINK_STYLE)


class GraphView(Widget, can_focus=True):
    """Draws a :class:`~ctx.engine.Neighbourhood`, one memory highlighted.

    Attributes:
        selected: The index, in row order, of the highlighted memory.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "move(-1)", "Up", show=False),
        Binding("down,j", "move(1)", "Down", show=False),
        Binding("left,h", "towards(True)", "Parent", show=False),
        Binding("right,l", "towards(False)", "Child", show=False),
    ]
    """The widget's own, not its screen's: the scrolling container around a
    drawing taller than the screen binds the same keys, nearer the focus,
    and would scroll instead of moving the highlight."""

    DEFAULT_CSS = """
    GraphView { height: auto; width: 1fr; }
    """

    selected: reactive[int] = reactive(0)
    """The highlighted memory's index in row order."""

    class Highlighted(Message):
        """Posted when another memory is highlighted.

        Args:
            memory_id: The memory now highlighted.
        """

        def __init__(self, memory_id: str) -> None:
            super().__init__()
            self.memory_id = memory_id

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.layout_: Layout | None = None

    def show(self, hood: Neighbourhood) -> None:
        """Draws ``hood``, highlighting the memory highlighted before, if drawn."""
        before = self.highlighted
        self.layout_ = lay_out(hood)
        order = self.layout_.order
        self.selected = order.index(before) if before in order else 0
        self.refresh(layout=True)
        self.post_message(self.Highlighted(order[self.selected]))

    @property
    def highlighted(self) -> str | None:
        """Returns the highlighted memory's id (None before a drawing)."""
        if self.layout_ is None or not self.layout_.order:
            return None
        return self.layout_.order[self.selected]

    def action_move(self, step: int) -> None:
        """Highlights the memory ``step`` rows below (above, if negative)."""
        self.move(step)

    def action_towards(self, parent: bool) -> None:
        """Highlights the parent, or the first child."""
        self.towards(parent)

    def move(self, step: int) -> None:
        """Highlights the memory ``step`` rows below (above, if negative)."""
        if self.layout_ is not None and self.layout_.order:
            last = len(self.layout_.order) - 1
            self.selected = max(0, min(last, self.selected + step))

    def towards(self, parent: bool) -> None:
        """Highlights the highlighted memory's parent, or its first child."""
        current = self.highlighted
        if self.layout_ is None or current is None:
            return
        place = self.layout_.placed[current]
        target = place.parent if parent else next(iter(place.children), None)
        if target is not None:
            self.selected = self.layout_.order.index(target)

    def watch_selected(self, old: int, new: int) -> None:
        """Redraws and tells the screen which memory is highlighted."""
        self.refresh()
        current = self.highlighted
        if current is not None and old != new:
            self.post_message(self.Highlighted(current))
            assert self.layout_ is not None
            self.scroll_visible_row(self.layout_.placed[current].row)

    def scroll_visible_row(self, row: int) -> None:
        """Scrolls the container so that ``row`` of the drawing is in view."""
        container = self.parent
        if isinstance(container, Widget) and container.is_scrollable:
            height = container.scrollable_content_region.height
            top = container.scroll_y
            if row < top or row >= top + height:
                container.scroll_to(y=max(0, row - height // 2), animate=False)

    def _label_width(self) -> int:
        assert self.layout_ is not None
        columns = self.layout_.columns
        free = self.size.width - _CONNECTOR * (columns - 1)
        return max(_MIN_LABEL, min(_MAX_LABEL, free // max(columns, 1)))

    def _label(self, place: Placed, width: int, selected: bool) -> Text:
        node = place.node
        mark = "◉ " if place.column == 0 else "⊘ " if place.superseded else "• "
        extra = f" +{place.extra}" if place.extra else ""
        title = f"{mark}{(node.kind or '?')[:3]} {node.title}"
        room = width - 1 - len(extra)
        if len(title) > room:
            title = title[: max(room - 1, 0)] + "…"
        style = "bold" if place.column == 0 else ""
        if place.superseded:
            style += " strike dim"
        if place.contradicted:
            style += " red"
        if node.kind is None:
            style += " italic dim"
        if selected:
            style += " reverse"
        out = Text(title, style=style.strip())
        out.append(extra, style="cyan")
        out.pad_right(width - out.cell_len)
        return out

    def render(self) -> Text:
        """Returns the drawing, one line per row."""
        if self.layout_ is None:
            return Text("")
        layout = self.layout_
        width = self._label_width()
        at = {(p.row, p.column): p for p in layout.placed.values()}
        connectors: dict[tuple[int, int], tuple[str, str]] = {}
        for place in layout.placed.values():
            kids = [layout.placed[k] for k in place.children]
            if not kids:
                continue
            for row in range(kids[0].row, kids[-1].row + 1):
                connectors[(row, place.column)] = ("│" + " " * (_CONNECTOR - 1), "")
            for i, kid in enumerate(kids):
                connectors[(kid.row, place.column)] = _connector(
                    kid, i == 0, i == len(kids) - 1
                )
        highlighted = self.highlighted
        lines = []
        for row in range(layout.rows):
            line = Text(no_wrap=True, overflow="crop")
            for column in range(layout.columns):
                here = at.get((row, column))
                if here is None:
                    line.append(" " * width)
                else:
                    selected = here.node.id == highlighted
                    line.append_text(self._label(here, width, selected))
                if column < layout.columns - 1:
                    text, style = connectors.get((row, column), (" " * _CONNECTOR, ""))
                    line.append(text, style=style)
            line.rstrip()
            lines.append(line)
        return Text("\n").join(lines)
