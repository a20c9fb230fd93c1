"""The lens's own widgets: the link graph drawn."""
