"""The figures a log reader has read, by name: each value read as the tool prints it (a value
that is no finite number is never a figure, only a note), and a figure printed with more than
one value keeps every value with its line and is judged on its worse one (for a bench report
printed again, on its last: the second report replaces the first). The same value printed again
is the same figure."""

from __future__ import annotations

from typing import Literal

import msgspec

from scriptast.common.numbers import not_a_number, read_number
from scriptast.contract.measured import MOST_PRINTED, Figure, Printed, Source

Keep = Literal["worst", "last"]


class FigureBook:
    """Figures by name, in the order they were first printed, and the values no number."""

    def __init__(self, keep: Keep) -> None:
        self.keep = keep
        self.found: dict[str, Figure] = {}
        self.unreadable: list[str] = []

    def add(self, name: str, text: str, unit: str, source: Source, *,
            higher: bool | None = True, samples: int | None = None) -> None:  # fmt: skip
        """Take one printed value of the figure `name`."""
        value = read_number(text)
        if value is None:
            if len(self.unreadable) < MOST_PRINTED:
                self.unreadable.append(not_a_number(name, text, source.file, source.line))
            return
        figure = Figure(name=name, value=value, unit=unit, source=source,
                        higher_is_better=higher, samples=samples)  # fmt: skip
        before = self.found.get(name)
        if before is None:
            self.found[name] = figure
            return
        printed = before.printed or (Printed(value=before.value, source=before.source),)
        if any(seen.value == value for seen in printed):
            return  # the same value again (a report logged twice) says nothing new
        chosen = figure if self.keep == "last" or _worse(figure, before) else before
        seen = Printed(value=value, source=source)
        if len(printed) < MOST_PRINTED:
            printed += (seen,)
        elif chosen is figure:
            printed = (*printed[:-1], seen)
        self.found[name] = msgspec.structs.replace(chosen, printed=printed)

    def figures(self) -> list[Figure]:
        """The figures read, in the order they were first printed."""
        return list(self.found.values())


def _worse(figure: Figure, before: Figure) -> bool:
    """`figure` is worse than `before` by its direction (none: the later counts)."""
    if figure.higher_is_better is None:
        return True
    if figure.higher_is_better:
        return figure.value < before.value
    return figure.value > before.value
