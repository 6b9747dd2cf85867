"""A number as a tool prints it: plain (`512.3`, `-1`, `1.5e3`) or with thousands grouped by
commas (`5,530.7382`); anything else (`1.2.3`, `nan`, `inf`, `1e999`, which overflows) is no
figure. The token a score line holds is taken whole (VALUE), so that a value is never read from
the first digits of a longer word."""

from __future__ import annotations

import math
import re
from typing import TypeGuard

VALUE = r"([^\s%()]+)"
"""A score line's value: every character up to a space, a `%` or a parenthesis."""
_PLAIN = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_GROUPED = re.compile(r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?")


def read_number(text: str) -> float | None:
    """The finite number `text` is, or None.

    >>> read_number("5,530.7382"), read_number("1.2.3"), read_number("nan"), read_number("1e999")
    (5530.7382, None, None, None)
    """
    if _GROUPED.fullmatch(text):
        value = float(text.replace(",", ""))
    elif _PLAIN.fullmatch(text):
        value = float(text)
    else:
        return None
    return value if math.isfinite(value) else None


def is_finite(value: object) -> TypeGuard[int | float]:
    """A number a YAML or JSON file gave that can be computed with: an int or a float, finite,
    not a boolean."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def not_a_number(name: str, text: str, source: str, line: int | None) -> str:
    """What the record says of a value that is no number."""
    where = f"{source}:{line}" if line is not None else source
    shown = text if len(text) <= 40 else text[:40] + "\u2026"
    return f"{where}: {name} reads {shown!r}, which is not a finite number: not a figure"
