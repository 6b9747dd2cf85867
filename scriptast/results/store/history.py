"""A figure with no reference judged against its own history (`--baseline history`): the
median of the last N comparable PASSED runs (the same setup: every key of rows.SETUP),
with a tolerance the way the figure regresses; fewer than N such runs: said, not judged."""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING

import msgspec

from scriptast.contract.measured import Check, Figure
from scriptast.errors import StoreError
from scriptast.results.store.location import Location
from scriptast.results.store.rows import SETUP, Comparable

if TYPE_CHECKING:  # the store (sqlite3, a driver) is opened only when a job is judged
    from scriptast.results.store.database import Store


class HistoryBaseline(msgspec.Struct, frozen=True, kw_only=True):
    """Where the history is, how many runs make a baseline, and the tolerance in %."""

    location: Location
    depth: int = 5
    tolerance: float = 5.0


def _matches(column: str, value: object) -> tuple[str, list[object]]:
    if value is None:
        return f"r.{column} IS NULL", []
    return f"r.{column} = ?", [value]


def earlier(store: Store, key: Comparable, figure: str, depth: int) -> list[tuple[int, float]]:
    """(run id, value) of the figure in the newest `depth` comparable PASSED runs."""
    clauses: list[str] = ["r.verdict = 'PASSED'", "f.name = ?"]
    values: list[object] = [figure]
    for column in SETUP:
        clause, value = _matches(column, getattr(key, column))
        clauses.append(clause)
        values += value
    rows = store.rows(
        "SELECT r.id, f.value FROM scriptast_runs r JOIN scriptast_figures f ON f.run_id = r.id "
        f"WHERE {' AND '.join(clauses)} ORDER BY r.finished_at DESC, r.id DESC LIMIT {int(depth)}",
        values,
    )
    return [(int(run_id), float(value)) for run_id, value in rows]


def held(figure: Figure, history: list[tuple[int, float]], baseline: HistoryBaseline,
         key: Comparable) -> Figure:  # fmt: skip
    """The figure checked against the median of `history`, or said why it is not."""
    if len(history) < baseline.depth:
        return msgspec.structs.replace(figure, unchecked=(
            f"history baseline: {len(history)} comparable PASSED run(s) stored, it needs "
            f"{baseline.depth}"))  # fmt: skip
    median = statistics.median(value for _, value in history)
    share = abs(median) * baseline.tolerance / 100.0
    lower = median - share if figure.higher_is_better in (True, None) else None
    upper = median + share if figure.higher_is_better in (False, None) else None
    margins = [figure.value - lower if lower is not None else None,
               upper - figure.value if upper is not None else None]  # fmt: skip
    margin = min(m for m in margins if m is not None)
    origin = (f"history: median of the last {baseline.depth} PASSED {key.workflow} runs of "
              f"{key.model} on {key.words()} (runs {', '.join(str(i) for i, _ in history)}), "
              f"tolerance {baseline.tolerance:g}%")  # fmt: skip
    check = Check(reference=median, lower=lower, upper=upper, origin=origin, margin=margin,
                  ok=margin >= 0)  # fmt: skip
    return msgspec.structs.replace(figure, check=check, unchecked=None)


def with_history(figures: list[Figure], key: Comparable, baseline: HistoryBaseline) -> list[Figure]:
    """Every figure without a reference held against its history (the others as they are)."""
    open_figures = [f for f in figures if f.check is None]
    if not open_figures:
        return figures
    from scriptast.results.store.database import Store

    try:
        with Store.open(baseline.location, create=True, timeout=10.0) as store:
            found = {f.name: earlier(store, key, f.name, baseline.depth) for f in open_figures}
    except StoreError as error:
        said = f"history baseline not read: {error}"
        return [f if f.check is not None else msgspec.structs.replace(f, unchecked=said)
                for f in figures]  # fmt: skip
    return [f if f.check is not None else held(f, found[f.name], baseline, key) for f in figures]
