"""ctx's version, read by ``ctx --version`` and the installers' manifests."""

__all__ = ["VERSION"]

VERSION = "0.1.0"
"""ctx's version, as pyproject.toml says it (a test keeps the two equal):
``ctx --version`` answers from here, importing neither click nor package
metadata."""
