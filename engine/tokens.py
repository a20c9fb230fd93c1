"""The one token estimator used everywhere: characters / 4, rounded up.

Every budget, footer and count in ctx uses these functions, so numbers
compare: a real tokenizer would differ by model, and this needs no download.
A recall prints a line naming each memory (id, kind, date, path) above its
title and body, and counts it: :func:`recall_tokens` is what one memory
costs there, and what ``ctx status`` counts, so the two agree.
"""

from __future__ import annotations

from ctx.engine.model import Memory

__all__ = ["HEADER_TOKENS", "estimate_tokens", "memory_tokens", "recall_tokens"]

HEADER_TOKENS = 16
"""Tokens counted for the line naming each memory in a recall (id, kind, date, path)."""


def estimate_tokens(text: str) -> int:
    """Returns the estimated tokens of ``text`` (at least 1 for any text)."""
    return (len(text) + 3) // 4 if text else 0


def memory_tokens(memory: Memory) -> int:
    """Returns the estimated tokens of a memory's title and body."""
    title = memory.title + "\n" if memory.title else ""
    return estimate_tokens(title + memory.body)


def recall_tokens(memory: Memory) -> int:
    """Returns what a memory costs in a recall: its text and its header line."""
    return memory_tokens(memory) + HEADER_TOKENS
