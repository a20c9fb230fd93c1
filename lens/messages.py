"""The messages screens send up to the app (messages up, attributes down)."""

from __future__ import annotations

from textual.message import Message

__all__ = ["OpenMemory", "ShowGraph", "StoreChanged"]


class OpenMemory(Message):
    """Asks the app to open a memory's page.

    Args:
        memory_id: The memory to open.
    """

    def __init__(self, memory_id: str) -> None:
        super().__init__()
        self.memory_id = memory_id


class ShowGraph(Message):
    """Asks the app to show the link graph around a memory.

    Args:
        memory_id: The memory to centre on.
    """

    def __init__(self, memory_id: str) -> None:
        super().__init__()
        self.memory_id = memory_id


class StoreChanged(Message):
    """Says that the lens wrote to the store: every screen reloads."""
