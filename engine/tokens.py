"""The one token estimator used everywhere: characters / 4, rounded up.

Every budget, footer and count in ctx uses these two functions, so numbers
compare: a real tokenizer would differ by model, and this needs no download.
"""

from __future__ import annotations

from ctx.engine.model import Memory

__all__ = ["estimate_tokens", "memory_tokens"]


def estimate_tokens(text: str) -> int:
    """Returns the estimated tokens of ``text`` (at least 1 for any text)."""
    return (len(text) + 3) // 4 if text else 0


def memory_tokens(memory: Memory) -> int:
    """Returns the estimated tokens of a memory's title and body."""
    title = memory.title + "\n" if memory.title else ""
    return estimate_tokens(title + memory.body)
