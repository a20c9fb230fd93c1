"""The lens: a terminal UI over history, blame and links (not built yet)."""
