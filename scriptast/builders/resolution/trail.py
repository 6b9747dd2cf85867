"""The resolution trail: each resolved value with its source, the warnings, and the table."""

from __future__ import annotations

import msgspec


class TrailEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One resolved value and where it came from."""

    field: str
    value: str
    source: str


class Trail:
    """What resolution notes as it goes, in order: values with their sources, and warnings."""

    def __init__(self) -> None:
        self.entries: list[TrailEntry] = []
        self.warnings: list[str] = []

    def add(self, field: str, value: object, source: str) -> None:
        self.entries.append(TrailEntry(field=field, value=str(value), source=source))

    def warn(self, message: str) -> None:
        self.warnings.append(message)


def explain_table(entries: tuple[TrailEntry, ...]) -> str:
    """The trail as an aligned table: field, value, source."""
    rows = [("field", "value", "source"), *((e.field, e.value, e.source) for e in entries)]
    field_width = max(len(row[0]) for row in rows)
    value_width = min(max(len(row[1]) for row in rows), 40)
    lines = [f"{f.ljust(field_width)}  {v.ljust(value_width)}  {s}" for f, v, s in rows]
    lines.insert(1, "-" * (field_width + value_width + 10))
    return "\n".join(lines) + "\n"
