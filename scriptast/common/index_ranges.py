"""Sorted indices written as ranges (`0-3,5,7-9`), as sbatch's `--array` takes them and as
scriptast says which lines or tasks it means."""

from __future__ import annotations

from collections.abc import Sequence


def index_ranges(indices: Sequence[int]) -> str:
    """`0-3,5,7-9`: sorted indices as sbatch's `--array` takes them."""
    parts: list[str] = []
    start = previous = indices[0]
    for index in [*indices[1:], None]:
        if index is not None and index == previous + 1:
            previous = index
            continue
        parts.append(str(start) if start == previous else f"{start}-{previous}")
        if index is not None:
            start = previous = index
    return ",".join(parts)
