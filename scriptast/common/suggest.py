"""Close-match suggestions for misspelled names in error messages."""

from __future__ import annotations

from collections.abc import Iterable

LONGEST_COMPARED = 100
"""A longer name is no misspelling of a known one: it is not compared (the comparison's cost
grows with the product of the lengths)."""
LONGEST_SHOWN = 60


def shown(name: str) -> str:
    """`name` for an error line: quoted, and cut short when it is long."""
    if len(name) <= LONGEST_SHOWN:
        return repr(name)
    return f"{name[:LONGEST_SHOWN]!r}... ({len(name):,} characters)"


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """` (did you mean 'x'?)` when a known name is close to `name`, else ``."""
    import difflib

    if len(name) > LONGEST_COMPARED:
        return ""
    matches = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean {matches[0]!r}?)" if matches else ""
