"""The runs a `results` command asks for: filters (model, workflow, verdict, GPU type, commit,
a time window) made into one parameterized WHERE clause on the indexed keys, and the rows."""

from __future__ import annotations

from typing import Any

import msgspec

from scriptast.errors import InputError
from scriptast.results.store.database import Store
from scriptast.results.store.packed import unpack_record
from scriptast.results.store.rows import RunKeys
from scriptast.results.store.schema import KEY_COLUMNS
from scriptast.results.store.windows import Window

SUMMARY = ("id", *KEY_COLUMNS)


class RunFilter(msgspec.Struct, frozen=True, kw_only=True):
    """Which runs: every given field must match (`commit` by prefix; `run_ids`: one of them)."""

    model: str | None = None
    workflow: str | None = None
    verdict: str | None = None
    gpu_type: str | None = None
    commit: str | None = None
    window: Window = Window()
    verdicts: tuple[str, ...] = ()
    partition: str | None = None
    cluster: str | None = None
    user_name: str | None = None
    gpu_count: int | None = None
    tp: int | None = None
    run_ids: tuple[int, ...] = ()
    sweep: str | None = None
    """A job array's id, or the start of a sweep file's sha256 (at least 6 hex digits)."""


class RunRow(RunKeys, frozen=True, kw_only=True):
    """A stored run's keys and headline, with its id (no record, no figures)."""

    id: int


def where(chosen: RunFilter, table: str = "r") -> tuple[str, list[Any]]:
    """The WHERE clause (with its leading keyword, or empty) and its parameters."""
    clauses: list[str] = []
    values: list[Any] = []
    for column in (
        "model",
        "workflow",
        "verdict",
        "gpu_type",
        "partition",
        "cluster",
        "user_name",
        "gpu_count",
        "tp",
    ):
        value = getattr(chosen, column)
        if value is not None:
            clauses.append(f"{table}.{column} = ?")
            values.append(value.upper() if column == "verdict" else value)
    if chosen.commit:
        clauses.append(f"{table}.trtllm_commit LIKE ?")
        values.append(chosen.commit.replace("%", "").replace("_", "") + "%")
    if chosen.sweep:
        prefix = sweep_prefix(chosen.sweep)
        if prefix is None:
            clauses.append(f"{table}.array_id = ?")
            values.append(chosen.sweep)
        else:
            clauses.append(f"({table}.array_id = ? OR {table}.sweep LIKE ?)")
            values += [chosen.sweep, prefix + "%"]
    if chosen.run_ids:
        clauses.append(f"{table}.id IN ({', '.join('?' * len(chosen.run_ids))})")
        values += chosen.run_ids
    if chosen.verdicts:
        clauses.append(f"{table}.verdict IN ({', '.join('?' * len(chosen.verdicts))})")
        values += chosen.verdicts
    if chosen.window.since:
        clauses.append(f"{table}.finished_at >= ?")
        values.append(chosen.window.since)
    if chosen.window.until:
        clauses.append(f"{table}.finished_at < ?")
        values.append(chosen.window.until)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), values


def sweep_prefix(given: str) -> str | None:
    """The sha256 prefix `--sweep` names (never a pattern); None for a job array's id too
    short to be one; InputError for anything else."""
    import re

    if given.isdigit() and len(given) < 6:
        return None
    if not re.fullmatch(r"[0-9a-f]{6,64}", given):
        raise InputError(
            f"--sweep {given[:80]!r} is neither a job array's id nor the start of a sweep's "
            "sha256 (6 to 64 hex digits): `scriptast results list` shows both"
        )
    return given


def list_runs(store: Store, chosen: RunFilter, limit: int | None = 50) -> list[RunRow]:
    """The runs chosen, newest first (`limit` at most)."""
    clause, values = where(chosen)
    sql = f"SELECT {', '.join('r.' + c for c in SUMMARY)} FROM scriptast_runs r{clause} " \
          "ORDER BY r.finished_at DESC, r.id DESC"  # fmt: skip
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return [RunRow(**dict(zip(SUMMARY, row, strict=True))) for row in store.rows(sql, values)]


def one_run(store: Store, run_id: int) -> tuple[RunRow, str]:
    """A run's keys and its record (run.json's text); InputError when there is none."""
    found = store.rows(
        f"SELECT {', '.join('r.' + c for c in SUMMARY)}, p.record_zlib FROM scriptast_runs r "
        "JOIN scriptast_records p ON p.run_id = r.id WHERE r.id = ?",
        [run_id],
    )
    if not found:
        raise InputError(f"no run {run_id} in the results store {store.location.shown}: "
                         "'scriptast results list' shows the stored runs")  # fmt: skip
    row = found[0]
    return RunRow(**dict(zip(SUMMARY, row[:-1], strict=True))), unpack_record(row[-1], run_id)


def figure_names(store: Store) -> set[str]:
    """Every figure name the store holds."""
    return {str(row[0]) for row in store.rows("SELECT DISTINCT name FROM scriptast_figures")}
