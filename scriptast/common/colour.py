"""Colour for what a person reads on a terminal: on only when the stream is a terminal, NO_COLOR
is unset (the no-color convention) and TERM is not `dumb`; a pipe or a file gets plain text."""

from __future__ import annotations

import os
from typing import TextIO

GREEN, RED, YELLOW, BOLD_RED = "32", "31", "33", "1;31"


def wants_colour(stream: TextIO) -> bool:
    """Whether text written to `stream` may be coloured."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def paint(text: str, code: str) -> str:
    """`text` in the ANSI colour `code`."""
    return f"\x1b[{code}m{text}\x1b[0m"
