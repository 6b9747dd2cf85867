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
    """` (did you mean 'x'?)` when a known name is a misspelling away from `name`, else ``: at
    most one edit (a letter added, dropped, changed, or two swapped) in four letters, and at
    least one, so `partiton` finds `partition` and `nope` finds nothing (nor does a name of
    one or two letters: any other is as close)."""
    if not 3 <= len(name) <= LONGEST_COMPARED:
        return ""
    most = max(1, len(name) // 4)
    best: tuple[int, str] | None = None
    for candidate in known:
        if len(candidate) > LONGEST_COMPARED or abs(len(candidate) - len(name)) > most:
            continue
        distance = edits(name.lower(), candidate.lower())
        if distance <= most and (best is None or distance < best[0]):
            best = (distance, candidate)
    return f" (did you mean {best[1]!r}?)" if best else ""


def edits(first: str, second: str) -> int:
    """The optimal string alignment distance: letters added, dropped or changed, and two
    neighbours swapped, each one edit."""
    before: list[int] = []
    above = list(range(len(second) + 1))
    for i, letter in enumerate(first, 1):
        row = [i] + [0] * len(second)
        for j, other in enumerate(second, 1):
            row[j] = min(above[j] + 1, row[j - 1] + 1, above[j - 1] + (letter != other))
            if i > 1 and j > 1 and letter == second[j - 2] and first[i - 2] == other:
                row[j] = min(row[j], before[j - 2] + 1)
        before, above = above, row
    return above[-1]
