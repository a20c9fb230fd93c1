"""Text for people: every line a command prints goes through :func:`echo`.

Each line is made :func:`~ctx.engine.visible` first: the control and
bidi characters a memory may hold are shown as escapes (``\\x1b``,
``\\u202e``), never obeyed by the terminal. Only text output is shown this
way: ``--json`` escapes what JSON must, and data formats (``ctx export``,
``compose --format json``) and the store keep every character as it is.
"""

from __future__ import annotations

import click

from ctx.engine import visible

__all__ = ["byte_size", "echo", "visible"]


def byte_size(count: int) -> str:
    """Returns a size for people in binary units, one for every command.

    ``61.5 KiB``: 1,024 bytes to the KiB, as ``du -h`` counts.
    """
    size = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError  # the loop returns at GiB


def echo(
    text: str = "", *, err: bool = False, nl: bool = True, fg: str | None = None
) -> None:
    """Prints ``text`` for people (stdout, or stderr with ``err``), made visible.

    Args:
        text: What to print; its control and bidi characters are escaped.
        err: Print on stderr.
        nl: End with a newline.
        fg: A colour for the whole line (click's names), added after escaping.
    """
    shown = visible(text)
    click.echo(click.style(shown, fg=fg) if fg else shown, err=err, nl=nl)
