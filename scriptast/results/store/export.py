"""`results export`: the chosen runs as CSV (one row a run), JSON (each run's keys and
figures) or JUnit XML (one test case a run; a run not PASSED is a failed case carrying its
verdict and reason), so that a CI system shows scriptast's verdicts as test results. Each is
written as it is read, a page of runs at a time: memory grows with a page, not the store. A CSV
cell a spreadsheet would run as a formula is neutralised (OWASP's advice)."""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from typing import Any
from xml.sax.saxutils import quoteattr

import msgspec

from scriptast.contract.run_record import RunRecord
from scriptast.errors import InputError
from scriptast.results.store.database import Store
from scriptast.results.store.packed import unpack_record
from scriptast.results.store.queries import SUMMARY, RunFilter, RunRow, where

FORMATS = ("csv", "json", "junit")
_FIELDS = SUMMARY


def _figures(store: Store, ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    found: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        for run_id, name, value, unit, reference, lower, upper, ok in store.rows(
            "SELECT run_id, name, value, unit, reference, lower_bound, upper_bound, ok FROM "
            f"scriptast_figures WHERE run_id IN ({', '.join('?' * len(chunk))})",
            chunk,
        ):
            passed = None if ok is None else bool(ok)
            found[int(run_id)].append({
                "name": name, "value": value, "unit": unit, "reference": reference,
                "lower": lower, "upper": upper, "ok": passed})  # fmt: skip
    return found


PAGE = 500
"""Runs read and written at a time."""
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def pages(store: Store, chosen: RunFilter) -> Iterator[list[RunRow]]:
    """The chosen runs, newest first, a page at a time (their ids read first: a few bytes a
    run)."""
    clause, values = where(chosen)
    ids = [int(row[0]) for row in store.rows(
        f"SELECT r.id FROM scriptast_runs r{clause} ORDER BY r.finished_at DESC, r.id DESC",
        values)]  # fmt: skip
    columns = ", ".join(SUMMARY)
    for start in range(0, len(ids), PAGE):
        chunk = ids[start : start + PAGE]
        found = {int(row[0]): RunRow(**dict(zip(SUMMARY, row, strict=True))) for row in
                 store.rows(f"SELECT {columns} FROM scriptast_runs WHERE id IN "
                            f"({', '.join('?' * len(chunk))})", chunk)}  # fmt: skip
        yield [found[run_id] for run_id in chunk if run_id in found]


def safe_cell(value: object) -> object:
    """A cell as written: a text a spreadsheet would take for a formula (`=HYPERLINK(...)`)
    gets a leading `'`; numbers stay numbers."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return "" if value is None else value


def figure_columns(store: Store, chosen: RunFilter, wanted: Sequence[str] = ()) -> list[
    tuple[str, str]
]:  # fmt: skip
    """(name, unit) of each figure the chosen runs hold, sorted (only `wanted` when given);
    InputError naming a wanted figure none of them holds."""
    clause, values = where(chosen)
    found = sorted({(str(name), str(unit)) for name, unit in store.rows(
        "SELECT DISTINCT f.name, f.unit FROM scriptast_figures f JOIN scriptast_runs r ON "
        f"r.id = f.run_id{clause}", values)})  # fmt: skip
    if not wanted:
        return found
    names = {name for name, _ in found}
    unknown = [name for name in wanted if name not in names]
    if unknown:
        raise InputError(f"--figures {unknown[0]}: no chosen run has it; 'scriptast results "
                         "show RUN_ID' lists a run's figures")  # fmt: skip
    return [(name, unit) for name, unit in found if name in wanted]


def as_csv(store: Store, runs: Iterable[list[RunRow]], columns: list[tuple[str, str]]
           ) -> Iterator[str]:  # fmt: skip
    """The runs as CSV, a page at a time: one row a run, its keys and verdict, then one column
    a figure (`name [unit]`; empty where the run has none)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*_FIELDS, *(f"{name} [{unit}]" if unit else name for name, unit in columns)])
    for page in runs:
        figures = _figures(store, [run.id for run in page]) if columns else {}
        for run in page:
            values = {(f["name"], f["unit"]): f["value"] for f in figures.get(run.id, [])}
            writer.writerow([*(safe_cell(getattr(run, f)) for f in _FIELDS),
                             *(safe_cell(values.get(column)) for column in columns)])  # fmt: skip
        yield out.getvalue()
        out.seek(0)
        out.truncate()
    yield out.getvalue()


def as_json(store: Store, runs: Iterable[list[RunRow]]) -> Iterator[str]:
    """The runs as one JSON list, each with its figures, a page at a time."""
    yield "["
    first = True
    for page in runs:
        figures = _figures(store, [run.id for run in page])
        for run in page:
            item = {**{f: getattr(run, f) for f in _FIELDS}, "figures": figures.get(run.id, [])}
            text = json.dumps(item, indent=2)
            yield ("\n" if first else ",\n") + "  " + text.replace("\n", "\n  ")
            first = False
    yield "\n]\n" if not first else "]\n"


def as_junit(store: Store, runs: Iterable[list[RunRow]]) -> Iterator[str]:
    """One testsuite; a test case a run, named by its work dir and id, classed by workflow and
    model; its time the job's elapsed seconds. The counts, which come first in the file, are
    asked of the store before the runs are written."""
    pages_ = list(runs) if not isinstance(runs, list) else runs
    total = sum(len(page) for page in pages_)
    failed = sum(1 for page in pages_ for run in page if run.verdict != "PASSED")
    yield ('<?xml version="1.0" encoding="utf-8"?>\n'
           f'<testsuites><testsuite name="scriptast" tests="{total}" '
           f'failures="{failed}" errors="0" skipped="0">\n')  # fmt: skip
    for page in pages_:
        reasons = _reasons(store, [r.id for r in page])
        lines = []
        for run in page:
            name = f"{run.work_dir.rstrip('/').rsplit('/', 1)[-1]} #{run.id}"
            classname = f"scriptast.{run.workflow}.{_package_name(run.model or 'unknown')}"
            elapsed, reason = reasons.get(run.id, (None, ""))
            time_attr = f' time="{elapsed:.3f}"' if elapsed is not None else ""
            head = f"<testcase classname={quoteattr(classname)} name={quoteattr(name)}{time_attr}"
            if run.verdict == "PASSED":
                lines.append(head + "/>")
                continue
            message = f"{run.verdict}: {reason}" if reason else run.verdict
            lines.append(f"{head}><failure message={quoteattr(message)} "
                         f"type={quoteattr(run.verdict)}/></testcase>")  # fmt: skip
        yield "".join(line + "\n" for line in lines)
    yield "</testsuite></testsuites>\n"


def _package_name(model: str) -> str:
    """A model as one part of a JUnit classname: CI tools (Jenkins) split a classname at its
    dots, so `meta-llama/Llama-3.1-8B-Instruct` is written `meta-llama/Llama-3_1-8B-Instruct`."""
    return model.replace(".", "_")


def _reasons(store: Store, ids: list[int]) -> dict[int, tuple[float | None, str]]:
    """Each run's elapsed seconds and why it did not pass, from its record."""
    found = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        for run_id, packed in store.rows(
            f"SELECT run_id, record_zlib FROM scriptast_records WHERE run_id IN "
            f"({', '.join('?' * len(chunk))})",
            chunk,
        ):
            record = msgspec.json.decode(unpack_record(packed, run_id), type=RunRecord)
            found[int(run_id)] = (record.elapsed_seconds, _why(record))
    return found


def _why(record: RunRecord) -> str:
    """Why a run did not pass, in a few words: its failed tests, its figures outside their
    references, what could not be read or was missing, the errors, else its end."""
    if record.tests is not None and record.tests.failed:
        return "; ".join(f"{t.id}: {t.message}" for t in record.tests.failed[:20])
    bad = [f for f in record.figures if f.check is not None and not f.check.ok]
    if bad:
        return "; ".join(f"{f.name} {f.value:g} outside its reference" for f in bad)
    said = [*record.errors, *(f"could not read {u}" for u in record.unread)]
    if record.missing:
        said.append("missing " + ", ".join(record.missing))
    if record.tests is not None and record.tests.passed <= 0:
        said.append("no test passed (every one skipped, or none ran)")
    if said:
        return "; ".join(said)
    if record.reason and record.reason not in ("None", "(null)"):
        return record.reason
    if record.exit_code is None:
        return f"state {record.state}, no exit code"
    return f"state {record.state}, exit code {record.exit_code}"
