"""The lens's screens: history, memories, a memory, graph, recall, review."""
