"""What the command line says on stderr: `error: ...` (one line, then exit) and `warning: ...`."""

from __future__ import annotations

import contextlib
import sys
from typing import NoReturn


def _colour(text: str, code: str) -> str:
    """ANSI colour on a terminal, unless NO_COLOR is set."""
    from scriptast.common.colour import paint, wants_colour

    return paint(text, code) if wants_colour(sys.stderr) else text


def one_line(text: str) -> str:
    """A message as one printable line: newlines and other controls escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def fail(message: str, code: int = 1) -> NoReturn:
    """`error: <message>` on stderr, as one line, and exit."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        sys.stderr.write(f"{_colour('error:', '1;31')} {one_line(message)}\n")
        sys.stderr.flush()
    raise SystemExit(code)


def warn(message: str) -> None:
    """`warning: <message>` on stderr."""
    sys.stderr.write(f"{_colour('warning:', '1;33')} {message}\n")
