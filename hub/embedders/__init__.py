"""Embedders: texts to unit vectors, behind one small interface.

:class:`Embedder` is the interface; :func:`make_embedder` builds one from a
store's config. The default, :class:`MiniLMEmbedder`, is semantic and
offline (all-MiniLM-L6-v2, int8, on onnxruntime); :class:`HashingEmbedder`
needs nothing but numpy; :class:`OpenAIEmbedder` and :class:`OllamaEmbedder`
ask a server. Every failure is an :class:`EmbedderError`.

Submodules load on first use (PEP 562): importing this package costs neither
numpy nor onnxruntime.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctx.hub.embedders.base import Embedder, EmbedderError
    from ctx.hub.embedders.factory import DEFAULT_KIND, EMBEDDER_KINDS, make_embedder
    from ctx.hub.embedders.hashing import HashingEmbedder
    from ctx.hub.embedders.minilm import MiniLMEmbedder
    from ctx.hub.embedders.remote import OllamaEmbedder, OpenAIEmbedder
    from ctx.hub.embedders.wordpiece import WordPieceTokenizer

__all__ = [
    "DEFAULT_KIND",
    "EMBEDDER_KINDS",
    "Embedder",
    "EmbedderError",
    "HashingEmbedder",
    "MiniLMEmbedder",
    "OllamaEmbedder",
    "OpenAIEmbedder",
    "WordPieceTokenizer",
    "make_embedder",
]

_LAZY = {
    "DEFAULT_KIND": "ctx.hub.embedders.factory",
    "EMBEDDER_KINDS": "ctx.hub.embedders.factory",
    "Embedder": "ctx.hub.embedders.base",
    "EmbedderError": "ctx.hub.embedders.base",
    "HashingEmbedder": "ctx.hub.embedders.hashing",
    "MiniLMEmbedder": "ctx.hub.embedders.minilm",
    "OllamaEmbedder": "ctx.hub.embedders.remote",
    "OpenAIEmbedder": "ctx.hub.embedders.remote",
    "WordPieceTokenizer": "ctx.hub.embedders.wordpiece",
    "make_embedder": "ctx.hub.embedders.factory",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ctx.hub.embedders' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
