"""The hub: projections of commits into search indexes (not built yet)."""
