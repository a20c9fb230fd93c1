"""The link graph drawn: a neighbourhood as a tree of boxes and lines."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ctx.engine import Neighbourhood, visible
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


class GraphView(ScrollView, can_focus=True):
    """Draws a :class:`~ctx.engine.Neighbourhood`, one memory highlighted.

    It scrolls itself, one row per line, and draws only the rows in view:
    a new drawing or a moved highlight does not lay the screen out again.

    Attributes:
        selected: The index, in row order, of the highlighted memory.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "move(-1)", "Up", show=False),
        Binding("down,j", "move(1)", "Down", show=False),
        Binding("left,h", "towards(True)", "Parent", show=False),
        Binding("right,l", "towards(False)", "Child", show=False),
    ]
    """They move the highlight (which scrolls into view), where a scrolling
    widget's would scroll."""

    DEFAULT_CSS = """
    GraphView { height: 1fr; width: 1fr; overflow-x: hidden; }
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
        self._at: dict[tuple[int, int], Placed] = {}
        self._connectors: dict[tuple[int, int], tuple[str, str]] = {}
        self._strips: dict[int, Strip] = {}
        """Each row drawn, kept until the drawing, the highlight or the width
        changes: a key that moves the highlight redraws two rows, not all."""

    def show(self, hood: Neighbourhood) -> None:
        """Draws ``hood``, highlighting the memory highlighted before, if drawn."""
        before = self.highlighted
        self.layout_ = lay_out(hood)
        self._grid()
        order = self.layout_.order
        self.selected = order.index(before) if before in order else 0
        self.virtual_size = Size(0, self.layout_.rows)
        self.refresh()
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
        """Redraws the two rows and tells the screen which memory is highlighted."""
        layout = self.layout_
        if layout is None or not layout.order:
            return
        for index in (old, new):
            if index < len(layout.order):
                row = layout.placed[layout.order[index]].row
                self._strips.pop(row, None)
                self.refresh_line(row)
        current = layout.order[new]
        if old != new:
            self.post_message(self.Highlighted(current))
            self.scroll_visible_row(layout.placed[current].row)

    def scroll_visible_row(self, row: int) -> None:
        """Scrolls so that ``row`` of the drawing is in view (to the middle)."""
        height = self.scrollable_content_region.height
        top = self.scroll_y
        if row < top or row >= top + height:
            self.scroll_to(y=max(0, row - height // 2), animate=False)

    def _label_width(self) -> int:
        assert self.layout_ is not None
        columns = self.layout_.columns
        free = self.scrollable_content_region.width - _CONNECTOR * (columns - 1)
        return max(_MIN_LABEL, min(_MAX_LABEL, free // max(columns, 1)))

    def _label(self, place: Placed, width: int, selected: bool) -> Text:
        node = place.node
        mark = "◉ " if place.column == 0 else "⊘ " if place.superseded else "• "
        extra = f" +{place.extra}" if place.extra else ""
        title = visible(f"{mark}{(node.kind or '?')[:3]} {node.title}")
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

    def _grid(self) -> None:
        """Places the labels and the connectors of the drawing, row by column."""
        assert self.layout_ is not None
        layout = self.layout_
        self._at = {(p.row, p.column): p for p in layout.placed.values()}
        self._connectors = {}
        for place in layout.placed.values():
            kids = [layout.placed[k] for k in place.children]
            if not kids:
                continue
            for row in range(kids[0].row, kids[-1].row + 1):
                self._connectors[(row, place.column)] = (
                    "│" + " " * (_CONNECTOR - 1),
                    "",
                )
            for i, kid in enumerate(kids):
                self._connectors[(kid.row, place.column)] = _connector(
                    kid, i == 0, i == len(kids) - 1
                )
        self._strips.clear()

    def _row(self, row: int) -> Text:
        assert self.layout_ is not None
        columns = self.layout_.columns
        width = self._label_width()
        highlighted = self.highlighted
        line = Text(no_wrap=True, overflow="crop")
        for column in range(columns):
            here = self._at.get((row, column))
            if here is None:
                line.append(" " * width)
            else:
                selected = here.node.id == highlighted
                line.append_text(self._label(here, width, selected))
            if column < columns - 1:
                text, style = self._connectors.get(
                    (row, column), (" " * _CONNECTOR, "")
                )
                line.append(text, style=style)
        line.rstrip()
        return line

    def render(self) -> Text:
        """Returns the drawing, one line per row (what :meth:`render_line` draws)."""
        if self.layout_ is None:
            return Text("")
        return Text("\n").join(self._row(row) for row in range(self.layout_.rows))

    def render_line(self, y: int) -> Strip:
        """Returns line ``y`` in view: a row of the drawing, drawn once per change."""
        width = self.scrollable_content_region.width
        base = self.rich_style
        row = y + self.scroll_offset.y
        if self.layout_ is None or row >= self.layout_.rows:
            return Strip.blank(width, base)
        strip = self._strips.get(row)
        if strip is None:
            text = self._row(row)
            text.style = base
            strip = Strip(text.render(self.app.console)).crop_extend(0, width, base)
            self._strips[row] = strip
        return strip

    def on_resize(self, event: events.Resize) -> None:
        """Draws every row again at the new width."""
        self._strips.clear()
