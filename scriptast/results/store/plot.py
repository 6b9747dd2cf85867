"""`results plot FIGURE`: the figure over time, one line a (GPU type, GPU count), the
reference it was held against as a band; drawn with matplotlib (the optional extra
`scriptast[plot]`), written as PNG or SVG."""

from __future__ import annotations

import calendar
import datetime
import time
from collections import defaultdict
from typing import Any

from scriptast.errors import InputError
from scriptast.results.store.database import Store
from scriptast.results.store.queries import RunFilter, where

FORMATS = (".png", ".svg")


class Series:
    """One line: its label, and its points (time, value) with the band (lower, upper)."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.times: list[datetime.datetime] = []
        self.values: list[float] = []
        self.lower: list[float | None] = []
        self.upper: list[float | None] = []


def series(store: Store, figure: str, chosen: RunFilter) -> tuple[list[Series], str]:
    """The figure's stored values, oldest first, one series a (GPU type, GPU count); its unit.
    InputError when no run has it."""
    clause, values = where(chosen)
    clause += (" AND" if clause else " WHERE") + " f.name = ?"
    rows = store.rows(
        "SELECT r.finished_at, r.gpu_type, r.gpu_count, f.value, f.unit, f.lower_bound, "
        "f.upper_bound FROM scriptast_runs r JOIN scriptast_figures f ON f.run_id = r.id"
        f"{clause} ORDER BY r.finished_at, r.id",
        [*values, figure],
    )
    if not rows:
        raise InputError(f"no stored run has the figure {figure!r}: 'scriptast results show "
                         "RUN_ID' lists a run's figures")  # fmt: skip
    lines: dict[str, Series] = defaultdict(lambda: Series(""))
    for finished, gpu_type, gpus, value, _unit, lower, upper in rows:
        label = f"{gpu_type or 'GPU'} x{gpus}" if gpus else (gpu_type or "GPU")
        line = lines[label]
        line.label = label
        moment = calendar.timegm(time.strptime(finished, "%Y-%m-%dT%H:%M:%SZ"))
        line.times.append(datetime.datetime.fromtimestamp(moment, datetime.UTC))
        line.values.append(float(value))
        line.lower.append(lower)
        line.upper.append(upper)
    return [lines[label] for label in sorted(lines)], str(rows[-1][4])


def draw(figure: str, lines: list[Series], unit: str) -> Any:
    """A matplotlib Figure of the lines (InputError naming the extra when it is missing)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib import dates
        from matplotlib.figure import Figure
    except ImportError:
        raise InputError(
            "results plot needs matplotlib, the optional extra: pip install 'scriptast[plot]'"
        ) from None
    drawn = Figure(figsize=(8, 4.5), dpi=100)
    axes = drawn.add_subplot()
    for line in lines:
        times = dates.date2num(line.times)  # type: ignore[no-untyped-call]
        (plotted,) = axes.plot(times, line.values, marker="o", label=line.label)
        if any(v is not None for v in (*line.lower, *line.upper)):
            low = [v if v is not None else min(line.values) for v in line.lower]
            high = [v if v is not None else max(line.values) for v in line.upper]
            axes.fill_between(times, low, high, alpha=0.15, color=plotted.get_color(),
                              label=f"{line.label} reference")  # fmt: skip
    axes.xaxis_date()
    axes.set_title(figure)
    axes.set_xlabel("finished (UTC)")
    axes.set_ylabel(f"{figure} ({unit})" if unit else figure)
    axes.legend()
    drawn.autofmt_xdate()
    return drawn


def save(drawn: Any, path: str) -> None:
    """Write the figure as the path's suffix says (.png or .svg)."""
    if not path.endswith(FORMATS):
        raise InputError(f"-o {path}: give a .png or .svg file")
    drawn.savefig(path, format=path.rsplit(".", 1)[1])
