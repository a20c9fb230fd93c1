"""The keys of the lens, on ``?``."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

__all__ = ["KEYS", "HelpScreen"]

KEYS = """\
Everywhere
  1 history   2 memories   3 graph   4 recall   5 review
  ?  this help       ctrl+r  read the store again       q  quit
  tab  next pane     enter   open / choose              mouse  click, scroll
  tabs (a memory, review): tab to the tab row, then left/right; or click

History      up/down move through branches or the log; the diff follows
Memories     /  filter (query language)   enter  open   escape  all again
             the tree: places, kinds, tiers, tags (opened on demand)
A memory     tabs: Memory, Versions, Blame, Links   g  graph   t  add a tag
             enter on a link opens the other end    escape  back
Graph        up/down  move   left/right  parent/child   enter  centre here
             b/backspace  back   +/-  widen/narrow (1-3 hops)
             t  link types   o  open the memory
             ⊘ superseded   red: contradicting   +N links not drawn as lines
Recall       type: results follow (debounced); down/enter  the hits
Review       up/down  branch   m  merge (asks first)
             o/t/b  resolve the conflict: ours / theirs / both
             Dream tab: a  accept   x  reject (a reason asked)
             A  accept all   m  merge the accepted (both ask first)
             Writes carry intent `review`, by you.
"""
"""The help text (also in README.md and docs/lens.md)."""


class HelpScreen(ModalScreen[None]):
    """Lists the keys; any of Escape, q or ? closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "app.pop_screen", "Close"),
    ]

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 80; max-width: 100%; height: auto; max-height: 100%;
        border: thick $primary; background: $surface;
    }
    """

    def compose(self) -> ComposeResult:
        """Lays out the keys."""
        with VerticalScroll():
            yield Static(KEYS)
