"""The one way the commands print: every text goes through :func:`echo`, which writes out
the control, invisible and bidi characters that names and values from data may hold
(:func:`toolkit.core.values.wording.visible`), so a key such as ``"\\x1b[2J\\x1b]0;title\\x07"``
never clears the screen or sets the window title, and ``user\\u202egnp.exe`` never reads as
``userexe.png``. Nothing is read as markup either: the commands print plain text."""

from __future__ import annotations

import click

from toolkit.core.values.wording import visible, visible_json

__all__ = ["echo"]


def echo(text: str, *, err: bool = False, as_json: bool = False) -> None:
    """Print ``text`` (to standard error with ``err``) with every character a terminal
    would obey or a reader could not see written out: as Python escapes it in text for
    people (line breaks and tabs kept), as a JSON escape in JSON text (``as_json``: the
    same JSON value)."""
    click.echo(visible_json(text) if as_json else visible(text, keep_lines=True), err=err)
