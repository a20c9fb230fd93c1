"""Builds an embedder from the ``embedder`` table of a store's config.

Examples of configs::

    {}                                              # MiniLM, the default
    {"kind": "minilm"}
    {"kind": "e5", "threads": 2}                    # needs ctx-memory[e5]
    {"kind": "hashing", "dimensions": 384}
    {"kind": "openai", "base_url": "https://api.openai.com",
     "model": "text-embedding-3-small", "api_key_env": "OPENAI_API_KEY"}
    {"kind": "ollama", "base_url": "http://127.0.0.1:11434",
     "model": "nomic-embed-text"}

Unknown kinds and unknown keys are errors, so that a typo cannot silently
change which vectors a store gets.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from ctx.hub.retrieval.embedders.base import Embedder, EmbedderError

# Each builder imports its own module: a store on the hashing embedder does
# not pay for http.client, nor one on MiniLM for the remote adapters.

__all__ = ["DEFAULT_KIND", "EMBEDDER_KINDS", "make_embedder"]

#: The kind used when a config names none.
DEFAULT_KIND = "minilm"


class _Options:
    """Typed access to one config table, remembering which keys were read."""

    def __init__(
        self, kind: str, config: Mapping[str, object], threads: int | None = None
    ) -> None:
        self._kind = kind
        self._config = config
        self._read = {"kind"}
        self.threads = threads
        """The model's threads where the config names none (None: its own)."""

    def _get(self, key: str) -> object:
        self._read.add(key)
        return self._config.get(key)

    def text(self, key: str, default: str | None = None) -> str | None:
        """Returns a string option, or ``default`` when it is absent."""
        value = self._get(key)
        if value is None:
            return default
        if not isinstance(value, str) or not value:
            raise self._wrong(key, "a non-empty string", value)
        return value

    def required_text(self, key: str) -> str:
        """Returns a string option that must be present."""
        value = self.text(key)
        if value is None:
            raise EmbedderError(
                f'The "{self._kind}" embedder needs "{key}" in its config.'
            )
        return value

    def integer(self, key: str) -> int | None:
        """Returns a positive whole-number option, or None when absent."""
        value = self._get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise self._wrong(key, "a positive whole number", value)
        return value

    def number(self, key: str) -> float | None:
        """Returns a positive number option, or None when absent."""
        value = self._get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise self._wrong(key, "a positive number", value)
        return float(value)

    def check_all_read(self) -> None:
        """Raises EmbedderError for a key that no option read."""
        unknown = sorted(set(self._config) - self._read)
        if unknown:
            names = ", ".join(f'"{key}"' for key in unknown)
            raise EmbedderError(
                f'The "{self._kind}" embedder has no option {names}.',
                hint=f"Its options are: {', '.join(sorted(self._read - {'kind'}))}.",
            )

    def _wrong(self, key: str, what: str, value: object) -> EmbedderError:
        return EmbedderError(
            f'The "{self._kind}" embedder\'s "{key}" must be {what}, not {value!r}.'
        )


def _minilm(options: _Options, environ: Mapping[str, str]) -> Embedder:
    from ctx.hub.retrieval.embedders.minilm import BATCH_SIZE, MiniLMEmbedder

    threads = options.integer("threads") or options.threads
    batch_size = options.integer("batch_size")
    return MiniLMEmbedder(threads=threads, batch_size=batch_size or BATCH_SIZE)


def _e5(options: _Options, environ: Mapping[str, str]) -> Embedder:
    from ctx.hub.retrieval.embedders.e5 import MultilingualE5Embedder

    threads = options.integer("threads") or options.threads
    batch_size = options.integer("batch_size")
    return MultilingualE5Embedder(threads=threads, batch_size=batch_size or 32)


def _hashing(options: _Options, environ: Mapping[str, str]) -> Embedder:
    from ctx.hub.retrieval.embedders.hashing import HashingEmbedder

    return HashingEmbedder(options.integer("dimensions") or 384)


def _openai(options: _Options, environ: Mapping[str, str]) -> Embedder:
    from ctx.hub.retrieval.embedders.remote import OpenAIEmbedder

    base_url = options.required_text("base_url")
    model = options.required_text("model")
    api_key = options.text("api_key")
    variable = options.text("api_key_env")
    if variable is not None:
        api_key = environ.get(variable)
        if not api_key:
            raise EmbedderError(
                f"The environment variable {variable} holds no API key.",
                hint=f"Set {variable}, or change api_key_env in the store's config.",
            )
    dimensions = options.integer("dimensions")
    timeout = options.number("timeout")
    return OpenAIEmbedder(base_url, model, api_key, dimensions, timeout or 30.0)


def _ollama(options: _Options, environ: Mapping[str, str]) -> Embedder:
    from ctx.hub.retrieval.embedders.remote import OllamaEmbedder

    base_url = options.text("base_url", "http://127.0.0.1:11434")
    model = options.required_text("model")
    timeout = options.number("timeout")
    assert base_url is not None  # it has a default
    return OllamaEmbedder(base_url, model, timeout or 60.0)


_BUILDERS: dict[str, Callable[[_Options, Mapping[str, str]], Embedder]] = {
    "e5": _e5,
    "hashing": _hashing,
    "minilm": _minilm,
    "ollama": _ollama,
    "openai": _openai,
}

#: The kinds :func:`make_embedder` knows, sorted.
EMBEDDER_KINDS = tuple(sorted(_BUILDERS))


def make_embedder(
    config: Mapping[str, object],
    *,
    environ: Mapping[str, str] | None = None,
    threads: int | None = None,
) -> Embedder:
    """Returns the embedder that a config describes.

    Nothing is loaded and no server is contacted here: models load and
    servers are asked on the first embed.

    Args:
        config: ``kind`` (default ``"minilm"``) and that kind's options:
            ``threads``/``batch_size`` for minilm and e5, ``dimensions`` for
            hashing,
            ``base_url``/``model``/``api_key``/``api_key_env``/``dimensions``/
            ``timeout`` for openai, ``base_url``/``model``/``timeout`` for
            ollama.
        environ: Where ``api_key_env`` is looked up; the process environment
            by default.
        threads: The threads of a model run here (minilm, e5) whose config
            names none: ``ctx serve --workers`` shares the cores among its
            processes. None: the kind's own default.

    Raises:
        EmbedderError: The kind is unknown, or an option is unknown, missing
            or of the wrong type.
    """
    kind = config.get("kind", DEFAULT_KIND)
    builder = _BUILDERS.get(kind) if isinstance(kind, str) else None
    if builder is None:
        raise EmbedderError(
            f"There is no embedder of kind {kind!r}.",
            hint=f"Choose one of: {', '.join(EMBEDDER_KINDS)}.",
        )
    assert isinstance(kind, str)
    options = _Options(kind, config, threads)
    embedder = builder(options, os.environ if environ is None else environ)
    options.check_all_read()
    return embedder
