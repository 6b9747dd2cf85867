"""Close-match suggestions for misspelled names in error messages."""

from __future__ import annotations

from collections.abc import Iterable


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """` (did you mean 'x'?)` when a known name is close to `name`, else ``."""
    import difflib

    matches = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean {matches[0]!r}?)" if matches else ""
