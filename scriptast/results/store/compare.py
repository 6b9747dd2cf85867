"""`results compare`: each figure per setup (model, workflow, partition, GPU type, the GPUs the
job asked for, nodes, tp/pp/ep, concurrency, max batch size, quantization), one side's runs
against the other's (an aggregate of each, the difference in %, a verdict against a tolerance), or
each key's newest run against the median of its earlier PASSED runs (the history baseline).
Only runs whose steps all succeeded (PASSED, REGRESSED) carry figures worth comparing."""

from __future__ import annotations

import functools
import json
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from scriptast.errors import StoreError
from scriptast.results.store.database import Store
from scriptast.results.store.packed import ColumnsReader, unpack_figures
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


_PACKED = (
    "SELECT r.id, r.setup_id, p.figures_pack FROM scriptast_runs r "
    "JOIN scriptast_records p ON p.run_id = r.id"
)


def _setups(store: Store) -> dict[int, Key]:
    """Each stored setup's values (SETUP's order), by its id."""
    found: dict[int, Key] = {}
    for setup_id, text in store.rows("SELECT id, setup_key FROM scriptast_setups"):
        try:
            values = json.loads(text)
        except (TypeError, ValueError):
            values = None
        if (not isinstance(values, list) or len(values) != len(SETUP)
                or not all(v is None or type(v) in (str, int) for v in values)):  # fmt: skip
            raise StoreError(f"setup {setup_id} in the results store is damaged (not what "
                             "scriptast keeps)")  # fmt: skip
        found[int(setup_id)] = tuple(values)
    return found


def _common(key: Key) -> dict[str, Any]:
    """A comparison's setup fields, from its key."""
    return dict(zip(("model", "gpu_type", "gpu_count", "setup"), _setup_fields(key[: len(SETUP)]),
                    strict=True))  # fmt: skip


@functools.lru_cache(maxsize=4096)
def _setup_fields(values: tuple[Any, ...]) -> tuple[str | None, str | None, int | None, str]:
    """A setup's fields and its words, made once per setup (its figures share them)."""
    setup = Comparable(**dict(zip(SETUP, values, strict=True)))
    return setup.model, setup.gpu_type, setup.gpu_count, setup.words()


def _side_values(store: Store, chosen: RunFilter, figure: str | None, kept: list[int],
                 setups: dict[int, Key], facts: dict[Key, tuple[str, bool | None]]
                 ) -> dict[Key, list[float]]:  # fmt: skip
    """Each (group, figure) of the measured runs `chosen` names: its values, read a run at a
    time from their packed figures (a row a figure costs a comparison of windows three times as
    much at 100,000 runs); each figure's unit and way go into `facts`. A group is the whole
    setup, or the setup with the keys not in `kept` emptied."""
    clause, values = where(msgspec.structs.replace(chosen, verdicts=MEASURED))
    whole = len(kept) == len(SETUP)
    reader = ColumnsReader()
    # per setup, per list of names its runs have: their value columns (a run a step)
    by_setup: dict[int, dict[tuple[str, ...], list[tuple[float, ...]]]] = {}
    for run_id, setup_id, packed in store.rows(_PACKED + clause, values):
        names, numbers, units, highers = reader.read(packed, run_id)
        if figure is not None:
            at = names.index(figure) if figure in names else None
            names, numbers, units, highers = ((), (), (), ()) if at is None else (
                (names[at],), (numbers[at],), (units[at],), (highers[at],))  # fmt: skip
        by_names = by_setup.get(setup_id)
        if by_names is None:
            if setup_id not in setups:
                raise StoreError(f"run {run_id} in the results store names no stored setup")
            by_names = by_setup[setup_id] = {}
        runs = by_names.get(names)
        if runs is None:
            by_names[names] = runs = []
            group = _grouped(setups[setup_id], kept, whole)
            for name, unit, higher in zip(names, units, highers, strict=True):
                facts.setdefault((*group, name), (unit, higher))
        runs.append(numbers)
    found: dict[Key, list[float]] = defaultdict(list)
    for setup_id, by_names in by_setup.items():
        group = _grouped(setups[setup_id], kept, whole)
        for names, runs in by_names.items():
            for name, column in zip(names, zip(*runs, strict=True), strict=True):
                found[(*group, name)].extend(column)
    return found


def _grouped(setup: Key, kept: list[int], whole: bool) -> Key:
    """The group a setup falls in: itself, or itself with the keys not in `kept` emptied."""
    return setup if whole else tuple(setup[i] if i in kept else None for i in range(len(SETUP)))


def compare_sides(store: Store, base: RunFilter, target: RunFilter, *, aggregate: str,
                  tolerance: float, figure: str | None = None,
                  group_by: Sequence[str] = SETUP) -> list[Comparison]:  # fmt: skip
    """Each figure both sides measured, aggregated on each side and judged, per group: the
    whole setup, or the keys `group_by` names (the others then pooled, as ReFrame's
    `--performance-compare=...:mean:group-by` does)."""
    combine = AGGREGATES[aggregate]
    kept = [SETUP.index(column) for column in group_by]
    setups = _setups(store)
    facts: dict[Key, tuple[str, bool | None]] = {}
    sides = [_side_values(store, chosen, figure, kept, setups, facts) for chosen in (base, target)]
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
    return (*_setup_order(key[:-1]), str(key[-1]))


@functools.lru_cache(maxsize=4096)
def _setup_order(values: Key) -> tuple[str, ...]:
    """A setup's sort key, made once per setup (its figures share it)."""
    return tuple("" if part is None else f"{part:>12}" if isinstance(part, int) else str(part)
                 for part in values)  # fmt: skip


def compare_history(store: Store, chosen: RunFilter, *, tolerance: float, depth: int = 5,
                    figure: str | None = None) -> list[Comparison]:  # fmt: skip
    """Each setup's newest measured run against the median of its `depth` PASSED runs before
    it; fewer than `depth` earlier runs: not judged."""
    newest, earlier = _newest_and_earlier(store, chosen, depth)
    figures = _figures_of(store, [*newest.values(), *(i for ids in earlier.values() for i in ids)],
                          figure)  # fmt: skip
    out = []
    for key in sorted(newest, key=_setup_order):
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


PER_SETUP_AT_MOST = 5000
"""Up to this many setups, a history comparison reads each setup's newest runs from the index;
beyond, every run once."""


def _newest_and_earlier(store: Store, chosen: RunFilter, depth: int
                        ) -> tuple[dict[Key, int], dict[Key, list[int]]]:  # fmt: skip
    """Each setup's newest measured run, and its `depth` newest PASSED runs before that one."""
    setups = _setups(store)
    if len(setups) > PER_SETUP_AT_MOST:
        return _scanned(store, chosen, depth, setups)
    newest: dict[Key, int] = {}
    earlier: dict[Key, list[int]] = defaultdict(list)
    pending = sorted(setups)
    limit = 4 * depth + 4  # enough unless most recent runs REGRESSED; then read on
    while pending:
        recent = _recent(store, chosen, pending, limit)
        left = []
        for setup_id in pending:
            runs = recent.get(setup_id, [])
            passed = [i for i, verdict in runs[1:] if verdict == "PASSED"][:depth]
            if len(passed) < depth and len(runs) == limit:
                left.append(setup_id)
            elif runs:
                newest[setups[setup_id]] = runs[0][0]
                earlier[setups[setup_id]] = passed
        pending, limit = left, limit * 4
    return newest, earlier


def _recent(store: Store, chosen: RunFilter, setup_ids: list[int], limit: int
            ) -> dict[int, list[tuple[int, str]]]:  # fmt: skip
    """Each setup's `limit` newest measured runs `chosen` names, newest first: (id, verdict).
    PostgreSQL reads them all in one query; SQLite, whose queries cost no round trip, one
    setup at a time."""
    clause, values = where(msgspec.structs.replace(chosen, verdicts=MEASURED))
    order = f"ORDER BY r.finished_at DESC, r.id DESC LIMIT {int(limit)}"
    found: dict[int, list[tuple[int, str]]] = {}
    if store.location.kind == "postgresql":
        clause += (" AND" if clause else " WHERE") + " r.setup_id = s.id"
        rows = store.rows(
            "SELECT s.id, x.id, x.verdict FROM scriptast_setups s CROSS JOIN LATERAL (SELECT "
            f"r.id, r.verdict, r.finished_at FROM scriptast_runs r{clause} {order}) x WHERE "
            f"s.id IN ({', '.join('?' * len(setup_ids))}) "
            "ORDER BY s.id, x.finished_at DESC, x.id DESC",
            [*values, *setup_ids],
        )
        for setup_id, run_id, verdict in rows:
            found.setdefault(int(setup_id), []).append((int(run_id), str(verdict)))
        return found
    clause += (" AND" if clause else " WHERE") + " r.setup_id = ?"
    for setup_id in setup_ids:
        rows = store.rows(f"SELECT r.id, r.verdict FROM scriptast_runs r{clause} {order}",
                          [*values, setup_id])  # fmt: skip
        found[setup_id] = [(int(run_id), str(verdict)) for run_id, verdict in rows]
    return found


def _scanned(store: Store, chosen: RunFilter, depth: int, setups: dict[int, Key]
             ) -> tuple[dict[Key, int], dict[Key, list[int]]]:  # fmt: skip
    """As _newest_and_earlier, reading every run `chosen` names once, in the table's order,
    ordered here a setup at a time (the database's order by finish time costs a lookup a run)."""
    clause, values = where(chosen)
    by_setup: dict[int, list[tuple[str, int, str]]] = defaultdict(list)
    for run_id, finished, verdict, setup in store.rows(
        f"SELECT r.id, r.finished_at, r.verdict, r.setup_id FROM scriptast_runs r{clause}", values
    ):
        if verdict in MEASURED:
            if setup not in setups:
                raise StoreError(f"run {run_id} in the results store names no stored setup")
            by_setup[setup].append((finished, int(run_id), verdict))
    newest: dict[Key, int] = {}
    earlier: dict[Key, list[int]] = defaultdict(list)
    for setup, runs in by_setup.items():
        runs.sort(reverse=True)
        key = setups[setup]
        newest[key] = runs[0][1]
        earlier[key] = [run_id for _, run_id, verdict in runs[1:] if verdict == "PASSED"][:depth]
    return newest, earlier


def _figures_of(store: Store, run_ids: list[int], figure: str | None
                ) -> dict[int, dict[str, tuple[float, str, bool | None]]]:  # fmt: skip
    found: dict[int, dict[str, tuple[float, str, bool | None]]] = defaultdict(dict)
    for start in range(0, len(run_ids), 500):
        chunk = run_ids[start : start + 500]
        for run_id, packed in store.rows(
            "SELECT run_id, figures_pack FROM scriptast_records WHERE run_id IN "
            f"({', '.join('?' * len(chunk))})",
            chunk,
        ):
            for name, value, unit, higher in unpack_figures(packed, run_id):
                if figure is None or name == figure:
                    found[int(run_id)][name] = (value, unit, higher)
    return found
