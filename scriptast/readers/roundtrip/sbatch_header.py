"""Where a script's `#SBATCH` lines are: those sbatch reads (before the first command) and those
after it, which sbatch ignores."""

from __future__ import annotations

import msgspec


class Header(msgspec.Struct, frozen=True, kw_only=True):
    """`#SBATCH` lines before the first command as (line number, stripped line), the first
    command's line (None: the script has none) and the `#SBATCH` lines after it; 1-based."""

    directives: tuple[tuple[int, str], ...]
    first_command: int | None
    late: tuple[int, ...]


def scan_header(text: str) -> Header:
    """The header of `text` (a `#!` first line is skipped); lines are split at `\\n` only."""
    directives: list[tuple[int, str]] = []
    offset = 0
    number = 1
    first_command: int | None = None
    while offset <= len(text):
        end = text.find("\n", offset)
        end = len(text) if end < 0 else end
        stripped = text[offset:end].strip()
        if not (number == 1 and stripped.startswith("#!")):
            if stripped.startswith("#SBATCH"):
                directives.append((number, stripped))
            elif stripped and not stripped.startswith("#"):
                first_command = number
                break
        offset = end + 1
        number += 1
    late = _late(text, offset) if first_command is not None else ()
    return Header(directives=tuple(directives), first_command=first_command, late=late)


def _late(text: str, offset: int) -> tuple[int, ...]:
    """Line numbers of `#SBATCH` lines from `offset` on (found by search: the rest of a long
    script is not split into lines)."""
    late = []
    found = text.find("#SBATCH", offset)
    while found >= 0:
        start = text.rfind("\n", 0, found) + 1
        if not text[start:found].strip():
            late.append(text.count("\n", 0, found) + 1)
        found = text.find("#SBATCH", found + 1)
    return tuple(late)
