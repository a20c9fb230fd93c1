"""From a question to ranked memories in a budget.

- ``sources``: which commits a recall reads (a branch, overlays, a moment).
- ``ranking``: channels, fusion, tags, temporal gravity, link expansion.
- ``boost``: which tags a question names, and how far a named tag lifts a hit.
- ``packing``: recall (pinned first, packed into a token budget) and search.
- ``results``: the Structs they return.
"""
