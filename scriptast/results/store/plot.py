"""`results plot FIGURE`: the figure over time, one line a setup (or a value of the key
`--by` names), the reference it was held against as a band; the title names the model(s), the
setup and the figure, the time axis reads in dates or, for a short span, in minutes; drawn with
matplotlib (the optional extra `scriptast[plot]`), written as PNG or SVG."""

from __future__ import annotations

import calendar
import datetime
import time
from collections import defaultdict
from typing import Any

from scriptast.errors import InputError
from scriptast.results.store.database import Store
from scriptast.results.store.queries import RunFilter, where
from scriptast.results.store.rows import SETUP, Comparable

FORMATS = (".png", ".svg")


class Series:
    """One line: its label, and its points (time, value) with the band (lower, upper)."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.times: list[datetime.datetime] = []
        self.values: list[float] = []
        self.lower: list[float | None] = []
        self.upper: list[float | None] = []


class Plotted:
    """What a plot shows: its lines, the figure's unit, and the models and setups of its runs
    (for the title)."""

    def __init__(self, lines: list[Series], unit: str, models: list[str],
                 setups: list[str]) -> None:  # fmt: skip
        self.lines = lines
        self.unit = unit
        self.models = models
        self.setups = setups


def series(store: Store, figure: str, chosen: RunFilter, by: str | None = None) -> Plotted:
    """The figure's stored values, oldest first, one series a setup (`by`: a value of that
    SETUP key); InputError when no run has it."""
    clause, values = where(chosen)
    clause += (" AND" if clause else " WHERE") + " f.name = ?"
    rows = store.rows(
        f"SELECT r.finished_at, {', '.join('r.' + c for c in SETUP)}, f.value, f.unit, "
        "f.lower_bound, f.upper_bound FROM scriptast_runs r JOIN scriptast_figures f ON "
        f"f.run_id = r.id{clause} ORDER BY r.finished_at, r.id",
        [*values, figure],
    )
    if not rows:
        raise InputError(f"no stored run has the figure {figure!r}: 'scriptast results show "
                         "RUN_ID' lists a run's figures")  # fmt: skip
    lines: dict[str, Series] = defaultdict(lambda: Series(""))
    models: set[str] = set()
    setups: set[str] = set()
    for row in rows:
        finished, setup = row[0], Comparable(**dict(zip(SETUP, row[1 : 1 + len(SETUP)],
                                                        strict=True)))  # fmt: skip
        value, lower, upper = row[-4], row[-2], row[-1]
        models.add(setup.model or "?")
        setups.add(setup.words())
        label = setup.words() if by is None else f"{by} {getattr(setup, by)}"
        line = lines[label]
        line.label = label
        moment = calendar.timegm(time.strptime(finished, "%Y-%m-%dT%H:%M:%SZ"))
        line.times.append(datetime.datetime.fromtimestamp(moment, datetime.UTC))
        line.values.append(float(value))
        line.lower.append(lower)
        line.upper.append(upper)
    return Plotted([lines[label] for label in sorted(lines)], str(rows[-1][-3]),
                   sorted(models), sorted(setups))  # fmt: skip


def title(figure: str, plotted: Plotted) -> str:
    """`output_throughput of meta-llama/Llama-3.1-8B-Instruct on H100 x2, tp2`."""
    models = plotted.models[0] if len(plotted.models) == 1 else f"{len(plotted.models)} models"
    setups = plotted.setups[0] if len(plotted.setups) == 1 else f"{len(plotted.setups)} setups"
    return f"{figure} of {models} on {setups}"


def new_figure(width: float, height: float) -> Any:
    """An empty matplotlib Figure, drawn without a display (InputError naming the extra when
    matplotlib is missing)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib.figure import Figure
    except ImportError:
        raise InputError(
            "results plot needs matplotlib, the optional extra: pip install 'scriptast[plot]'"
        ) from None
    return Figure(figsize=(width, height), dpi=100)


def draw(figure: str, plotted: Plotted) -> Any:
    """A matplotlib Figure of the lines (InputError naming the extra when it is missing)."""
    drawn = new_figure(8, 4.5)
    from matplotlib import dates

    lines, unit = plotted.lines, plotted.unit
    axes = drawn.add_subplot()
    for line in lines:
        times = dates.date2num(line.times)  # type: ignore[no-untyped-call]
        (drawn_line,) = axes.plot(times, line.values, marker="o", label=line.label)
        if any(v is not None for v in (*line.lower, *line.upper)):
            low = [v if v is not None else min(line.values) for v in line.lower]
            high = [v if v is not None else max(line.values) for v in line.upper]
            axes.fill_between(times, low, high, alpha=0.15, color=drawn_line.get_color(),
                              label=f"{line.label} reference")  # fmt: skip
    axes.xaxis_date()
    locator = dates.AutoDateLocator()  # type: ignore[no-untyped-call]
    axes.xaxis.set_major_locator(locator)
    axes.xaxis.set_major_formatter(dates.ConciseDateFormatter(locator))  # type: ignore[no-untyped-call]
    axes.set_title(title(figure, plotted), fontsize=10)
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
