"""`results compare`: each figure per setup (model, workflow, partition, GPU type, the GPUs the
job asked for, nodes, tp/pp/ep, concurrency, max batch size, quantization), one side's runs
against the other's (an aggregate of each, the difference in %, a verdict against a tolerance), or
each key's newest run against the median of its earlier PASSED runs (the history baseline).
Only runs whose steps all succeeded (PASSED, REGRESSED) carry figures worth comparing."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from scriptast.results.store.database import Store
from scriptast.results.store.queries import RunFilter, where
from scriptast.results.store.rows import SETUP, Comparable

MEASURED = ("PASSED", "REGRESSED")
AGGREGATES: dict[str, Callable[[Sequence[float]], float]] = {
    "mean": statistics.fmean,
    "median": statistics.median,
    "min": min,
    "max": max,
}
Key = tuple[Any, ...]
"""The SETUP values, then the figure name."""


class Side(msgspec.Struct, frozen=True, kw_only=True):
    """One side of a comparison: its aggregate, and how many runs made it."""

    value: float
    runs: int


class Comparison(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One figure of one (model, GPU type, GPU count): both sides, the difference in % of the
    base, and the verdict: ok, improved, REGRESSED (worse than the tolerance, the way the
    figure regresses), changed (a figure with no better way, beyond the tolerance), or why it
    was not judged."""

    model: str | None
    gpu_type: str | None
    gpu_count: int | None
    figure: str
    unit: str
    setup: str = ""
    """The setup in words (`GPU x2, tp2`): runs compare only within one."""
    base: Side | None = None
    target: Side | None = None
    difference: float | None = None
    verdict: str
    baseline_runs: tuple[int, ...] = ()
    target_run: int | None = None
    """History: the run held against its baseline."""


def judged(difference: float, higher_is_better: bool | None, tolerance: float) -> str:
    """A difference in % against the tolerance in %."""
    if higher_is_better is None:
        return "changed" if abs(difference) > tolerance else "ok"
    worse = -difference if higher_is_better else difference
    if worse > tolerance:
        return "REGRESSED"
    return "improved" if worse < -tolerance else "ok"


def _difference(base: float, target: float) -> float:
    if base == 0:
        return 0.0 if target == 0 else float("inf") if target > 0 else float("-inf")
    return (target - base) / abs(base) * 100.0


_FIGURES = (
    f"SELECT r.id, {', '.join('r.' + c for c in SETUP)}, f.name, f.value, f.unit, "
    "f.higher_is_better FROM scriptast_runs r JOIN scriptast_figures f ON f.run_id = r.id"
)


def _common(key: Key) -> dict[str, Any]:
    """A comparison's setup fields, from its key."""
    setup = Comparable(**dict(zip(SETUP, key[: len(SETUP)], strict=True)))
    return {"model": setup.model, "gpu_type": setup.gpu_type, "gpu_count": setup.gpu_count,
            "setup": setup.words()}  # fmt: skip


def _values(store: Store, chosen: RunFilter, figure: str | None) -> list[tuple[Any, ...]]:
    clause, values = where(msgspec.structs.replace(chosen, verdicts=MEASURED))
    if figure is not None:
        clause += (" AND" if clause else " WHERE") + " f.name = ?"
        values.append(figure)
    return store.rows(_FIGURES + clause, values)


def compare_sides(store: Store, base: RunFilter, target: RunFilter, *, aggregate: str,
                  tolerance: float, figure: str | None = None,
                  group_by: Sequence[str] = SETUP) -> list[Comparison]:  # fmt: skip
    """Each figure both sides measured, aggregated on each side and judged, per group: the
    whole setup, or the keys `group_by` names (the others then pooled, as ReFrame's
    `--performance-compare=...:mean:group-by` does)."""
    combine = AGGREGATES[aggregate]
    kept = [SETUP.index(column) for column in group_by]
    sides: list[dict[Key, list[float]]] = []
    facts: dict[Key, tuple[str, bool | None]] = {}
    for chosen in (base, target):
        found: dict[Key, list[float]] = defaultdict(list)
        for row in _values(store, chosen, figure):
            name, value, unit, higher = row[-4:]
            setup = row[1 : 1 + len(SETUP)]
            key = (*(setup[i] if i in kept else None for i in range(len(SETUP))), name)
            found[key].append(float(value))
            facts[key] = (unit, None if higher is None else bool(higher))
        sides.append(found)
    out = []
    for key in sorted(set(sides[0]) | set(sides[1]), key=_order):
        unit, higher = facts[key]
        before, after = sides[0].get(key), sides[1].get(key)
        common: dict[str, Any] = {**_common(key), "figure": key[-1], "unit": unit}
        if not before or not after:
            missing = "the base" if not before else "the target"
            said = f"not judged: no run of {missing} has it"
            out.append(Comparison(**common, verdict=said, base=_side(combine, before),
                                  target=_side(combine, after)))  # fmt: skip
            continue
        base_value, target_value = combine(before), combine(after)
        difference = _difference(base_value, target_value)
        out.append(Comparison(**common, base=Side(value=base_value, runs=len(before)),
                              target=Side(value=target_value, runs=len(after)),
                              difference=difference,
                              verdict=judged(difference, higher, tolerance)))  # fmt: skip
    return out


def _side(combine: Callable[[Sequence[float]], float], values: list[float] | None) -> Side | None:
    return Side(value=combine(values), runs=len(values)) if values else None


def _order(key: Key) -> tuple[str, ...]:
    return tuple("" if part is None else f"{part:>12}" if isinstance(part, int) else str(part)
                 for part in key)  # fmt: skip


def compare_history(store: Store, chosen: RunFilter, *, tolerance: float, depth: int = 5,
                    figure: str | None = None) -> list[Comparison]:  # fmt: skip
    """Each setup's newest measured run against the median of its `depth` PASSED runs before
    it; fewer than `depth` earlier runs: not judged."""
    clause, values = where(msgspec.structs.replace(chosen, verdicts=MEASURED))
    rows = store.rows(
        f"SELECT r.id, {', '.join('r.' + c for c in SETUP)}, r.verdict FROM "
        f"scriptast_runs r{clause} ORDER BY r.finished_at DESC, r.id DESC",
        values,
    )
    newest: dict[tuple[Any, ...], int] = {}
    earlier: dict[tuple[Any, ...], list[int]] = defaultdict(list)
    for row in rows:
        run_id, verdict = row[0], row[-1]
        key = tuple(row[1:-1])
        if key not in newest:
            newest[key] = int(run_id)
        elif verdict == "PASSED" and len(earlier[key]) < depth:
            earlier[key].append(int(run_id))
    figures = _figures_of(store, [*newest.values(), *(i for ids in earlier.values() for i in ids)],
                          figure)  # fmt: skip
    out = []
    for key in sorted(newest, key=_order):
        baseline = earlier[key]
        for name, (value, unit, higher) in sorted(figures.get(newest[key], {}).items()):
            common: dict[str, Any] = {**_common((*key, name)), "figure": name, "unit": unit,
                                      "target": Side(value=value, runs=1),
                                      "baseline_runs": tuple(baseline),
                                      "target_run": newest[key]}  # fmt: skip
            history = [figures[i][name][0] for i in baseline if name in figures.get(i, {})]
            if len(history) < depth:
                said = (f"not judged: {len(history)} earlier PASSED run(s) with it, the "
                        f"baseline needs {depth}")  # fmt: skip
                out.append(Comparison(**common, verdict=said))
                continue
            base = statistics.median(history)
            difference = _difference(base, value)
            out.append(Comparison(**common, base=Side(value=base, runs=len(history)),
                                  difference=difference,
                                  verdict=judged(difference, higher, tolerance)))  # fmt: skip
    return out


def _figures_of(store: Store, run_ids: list[int], figure: str | None
                ) -> dict[int, dict[str, tuple[float, str, bool | None]]]:  # fmt: skip
    found: dict[int, dict[str, tuple[float, str, bool | None]]] = defaultdict(dict)
    for start in range(0, len(run_ids), 500):
        chunk = run_ids[start : start + 500]
        sql = ("SELECT run_id, name, value, unit, higher_is_better FROM scriptast_figures "
               f"WHERE run_id IN ({', '.join('?' * len(chunk))})")  # fmt: skip
        values: list[Any] = list(chunk)
        if figure is not None:
            sql += " AND name = ?"
            values.append(figure)
        for run_id, name, value, unit, higher in store.rows(sql, values):
            found[int(run_id)][str(name)] = (float(value), str(unit),
                                             None if higher is None else bool(higher))  # fmt: skip
    return found
