"""Text for people: every line a command prints goes through :func:`echo`.

Each line is made :func:`~ctx.hub.escapes.visible` first: the control and
bidi characters a memory may hold are shown as escapes (``\\x1b``,
``\\u202e``), never obeyed by the terminal. Only text output is shown this
way: ``--json`` escapes what JSON must, and data formats (``ctx export``,
``compose --format json``) and the store keep every character as it is.
"""

from __future__ import annotations

import click

from ctx.hub.escapes import visible

__all__ = ["echo", "visible"]


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
