"""`results sweep` and `results plot --sweep`: the stored tasks of a bench sweep (the newest run
of each work dir), their setup keys and figures, the setups on the Pareto front of throughput
per GPU against per-user throughput or against latency, as a table, CSV, JSON or a drawn curve."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from typing import Any

import msgspec

from scriptast.errors import InputError
from scriptast.results.store.database import Store
from scriptast.results.store.queries import RunFilter, where

KEYS = ("tp", "pp", "ep", "concurrency", "max_batch_size", "gpu_count")
"""The setup keys a sweep varies, as the store keeps them."""
FIGURES = (
    ("per_gpu_output_throughput", "tokens/s/gpu"),
    ("per_user_output_throughput", "tokens/s/user"),
    ("avg_ttft", "ms"),
    ("avg_tpot", "ms"),
    ("request_latency_p50", "ms"),
    ("request_latency_p90", "ms"),
    ("request_latency_p99", "ms"),
)
"""The figures of trtllm-bench's report a sweep's table shows, in order."""
AGAINST = {
    "per-user": ("per_user_output_throughput", True),
    "latency": ("request_latency_p50", False),
}
"""What throughput per GPU is weighed against on the front: the figure, higher is better."""
THROUGHPUT = "per_gpu_output_throughput"


class SweepPoint(msgspec.Struct, frozen=True, kw_only=True):
    """One task of a sweep as stored: its run, work dir, verdict, setup and figures."""

    run_id: int
    work_dir: str
    verdict: str
    setup: dict[str, int | None]
    figures: dict[str, float]

    def label(self) -> str:
        """The setup in a few words: `tp2 pp1 c64 mbs256`."""
        short = {"tp": "tp", "pp": "pp", "ep": "ep", "concurrency": "c", "max_batch_size": "mbs"}
        return " ".join(f"{s}{self.setup[k]}" for k, s in short.items() if self.setup.get(k))


def latest_sweep(store: Store) -> str:
    """The sha256 of the sweep whose task was stored last; InputError when none was."""
    found = store.rows(
        "SELECT sweep FROM scriptast_runs WHERE sweep IS NOT NULL "
        "ORDER BY finished_at DESC, id DESC LIMIT 1"
    )
    if not found:
        raise InputError(
            f"no sweep in the results store {store.location.shown}: a sweep's tasks are stored "
            "by `scriptast run` of the work dirs `emit --requests FILE --array` wrote"
        )
    return str(found[0][0])


def sweep_points(store: Store, sweep: str | None) -> tuple[str, list[SweepPoint]]:
    """(what was asked for, the newest stored run of each of its work dirs, in setup order)."""
    wanted = sweep or latest_sweep(store)
    clause, values = where(RunFilter(sweep=wanted))
    columns = ("id", "work_dir", "verdict", *KEYS)
    rows = store.rows(
        f"SELECT {', '.join('r.' + c for c in columns)} FROM scriptast_runs r{clause} "
        "ORDER BY r.finished_at DESC, r.id DESC",
        values,
    )
    newest: dict[str, tuple[Any, ...]] = {}
    for row in rows:
        newest.setdefault(str(row[1]), row)
    if not newest:
        raise InputError(
            f"no stored task of sweep {wanted}: `scriptast results list --sweep ID` takes a job "
            "array's id or the start of a sweep's sha256"
        )
    figures = _figures(store, [int(row[0]) for row in newest.values()])
    points = [
        SweepPoint(
            run_id=int(row[0]),
            work_dir=str(row[1]),
            verdict=str(row[2]),
            setup=dict(zip(KEYS, row[3:], strict=True)),
            figures=figures.get(int(row[0]), {}),
        )
        for row in newest.values()
    ]
    points.sort(key=lambda p: (*(p.setup[k] or 0 for k in KEYS), p.work_dir))
    return wanted, points


def _figures(store: Store, run_ids: Sequence[int]) -> dict[int, dict[str, float]]:
    found: dict[int, dict[str, float]] = {}
    for start in range(0, len(run_ids), 500):
        chunk = list(run_ids[start : start + 500])
        for run_id, name, value in store.rows(
            "SELECT run_id, name, value FROM scriptast_figures WHERE run_id IN "
            f"({', '.join('?' * len(chunk))})",
            chunk,
        ):
            found.setdefault(int(run_id), {})[str(name)] = float(value)
    return found


def pareto(points: Sequence[SweepPoint], against: str) -> set[int]:
    """The run ids of the setups no other setup beats: at least as much throughput per GPU
    and at least as good on `against`, better on one. A task without both figures is never
    on the front, nor one that did not pass."""
    other, higher = AGAINST[against]
    scored = [
        (p.run_id, p.figures[THROUGHPUT], p.figures[other] if higher else -p.figures[other])
        for p in points
        if p.verdict == "PASSED" and THROUGHPUT in p.figures and other in p.figures
        and math.isfinite(p.figures[THROUGHPUT]) and math.isfinite(p.figures[other])
    ]  # fmt: skip
    front = set()
    for run_id, x, y in scored:
        beaten = any(
            (a >= x and b >= y) and (a > x or b > y)
            for other_id, a, b in scored
            if other_id != run_id
        )
        if not beaten:
            front.add(run_id)
    return front


def rows_of(points: Sequence[SweepPoint], against: str) -> tuple[list[str], list[list[str]]]:
    """The table's header and rows: the setup keys, the figures, the verdict and `*` on the
    front."""
    front = pareto(points, against)
    header = ["PARETO", *(k.upper() for k in KEYS), *(n for n, _ in FIGURES), "VERDICT", "WORK_DIR"]
    rows = [
        [
            "*" if p.run_id in front else "",
            *("-" if p.setup[k] is None else str(p.setup[k]) for k in KEYS),
            *(_number(p.figures.get(n)) for n, _ in FIGURES),
            p.verdict,
            p.work_dir,
        ]
        for p in points
    ]
    return header, rows


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.6g}"


def as_table(points: Sequence[SweepPoint], against: str, sweep: str) -> str:
    """The sweep as aligned columns, with a line on what the front weighs."""
    header, rows = rows_of(points, against)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
             for r in [header, *rows]]  # fmt: skip
    other = AGAINST[against][0]
    lines.append(
        f"sweep {sweep}: {len(points)} task(s); * on the Pareto front of {THROUGHPUT} against "
        f"{other}"
    )
    return "\n".join(lines) + "\n"


def as_csv(points: Sequence[SweepPoint], against: str) -> str:
    """One row a task, `pareto` 1 or 0, numbers as stored."""
    front = pareto(points, against)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["run_id", "work_dir", "verdict", *KEYS, *(n for n, _ in FIGURES), "pareto"])
    for p in points:
        writer.writerow([p.run_id, p.work_dir, p.verdict, *("" if p.setup[k] is None else
                         p.setup[k] for k in KEYS), *(repr(p.figures[n]) if n in p.figures
                         else "" for n, _ in FIGURES), int(p.run_id in front)])  # fmt: skip
    return out.getvalue()


def as_json(points: Sequence[SweepPoint], against: str, sweep: str) -> str:
    """The sweep, its front's axes and each task with `pareto`."""
    front = pareto(points, against)
    tasks = [{**msgspec.to_builtins(p), "pareto": p.run_id in front} for p in points]
    other, higher = AGAINST[against]
    document = {"sweep": sweep, "front": {"x": THROUGHPUT, "y": other, "y_higher_is_better":
                higher}, "tasks": tasks}  # fmt: skip
    return json.dumps(document, indent=2) + "\n"


def draw_curve(points: Sequence[SweepPoint], against: str, sweep: str) -> Any:
    """The figure: each task a point labelled with its setup, the Pareto front a line."""
    from scriptast.results.store.plot import new_figure

    other, _ = AGAINST[against]
    drawn = [p for p in points if THROUGHPUT in p.figures and other in p.figures]
    if not drawn:
        raise InputError(
            f"no task of sweep {sweep} has both {THROUGHPUT} and {other}: nothing to draw"
        )
    figure = new_figure(9, 6)
    axes = figure.add_subplot()
    front = pareto(drawn, against)
    for p in drawn:
        on = p.run_id in front
        axes.scatter(p.figures[other], p.figures[THROUGHPUT], color="tab:red" if on else
                     "tab:blue", zorder=3)  # fmt: skip
        axes.annotate(p.label() or p.work_dir, (p.figures[other], p.figures[THROUGHPUT]),
                      textcoords="offset points", xytext=(4, 4), fontsize=8)  # fmt: skip
    line = sorted((p.figures[other], p.figures[THROUGHPUT]) for p in drawn if p.run_id in front)
    if line:
        axes.plot([x for x, _ in line], [y for _, y in line], color="tab:red",
                  label="Pareto front", zorder=2)  # fmt: skip
        axes.legend()
    axes.set_xlabel(f"{other} ({dict(FIGURES)[other]})")
    axes.set_ylabel(f"{THROUGHPUT} ({dict(FIGURES)[THROUGHPUT]})")
    axes.set_title(f"sweep {sweep[:12]}: {len(drawn)} setups")
    axes.grid(True, alpha=0.3)
    figure.tight_layout()
    return figure
