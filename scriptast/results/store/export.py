"""`results export`: the chosen runs as CSV (one row a run), JSON (each run's keys and
figures) or JUnit XML (one test case a run; a run not PASSED is a failed case carrying its
verdict and reason), so that a CI system shows scriptast's verdicts as test results."""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from typing import Any
from xml.sax.saxutils import quoteattr

import msgspec

from scriptast.contract.run_record import RunRecord
from scriptast.results.store.database import Store
from scriptast.results.store.queries import SUMMARY, RunRow

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


def as_csv(runs: list[RunRow]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(_FIELDS)
    for run in runs:
        writer.writerow(["" if v is None else v for v in (getattr(run, f) for f in _FIELDS)])
    return out.getvalue()


def as_json(store: Store, runs: list[RunRow]) -> str:
    figures = _figures(store, [run.id for run in runs])
    items = [{**{f: getattr(run, f) for f in _FIELDS}, "figures": figures.get(run.id, [])}
             for run in runs]  # fmt: skip
    return json.dumps(items, indent=2) + "\n"


def as_junit(store: Store, runs: list[RunRow]) -> str:
    """One testsuite; a test case a run, named by its work dir and id, classed by workflow and
    model; its time the job's elapsed seconds."""
    reasons = _reasons(store, [r.id for r in runs])
    failed = sum(1 for run in runs if run.verdict != "PASSED")
    lines = ['<?xml version="1.0" encoding="utf-8"?>',
             f'<testsuites><testsuite name="scriptast" tests="{len(runs)}" '
             f'failures="{failed}" errors="0" skipped="0">']  # fmt: skip
    for run in runs:
        name = f"{run.work_dir.rstrip('/').rsplit('/', 1)[-1]} #{run.id}"
        classname = f"scriptast.{run.workflow}.{run.model or 'unknown'}"
        elapsed, reason = reasons.get(run.id, (None, ""))
        time_attr = f' time="{elapsed:.3f}"' if elapsed is not None else ""
        head = f"<testcase classname={quoteattr(classname)} name={quoteattr(name)}{time_attr}"
        if run.verdict == "PASSED":
            lines.append(head + "/>")
            continue
        message = f"{run.verdict}: {reason}" if reason else run.verdict
        lines.append(f"{head}><failure message={quoteattr(message)} "
                     f"type={quoteattr(run.verdict)}/></testcase>")  # fmt: skip
    lines.append("</testsuite></testsuites>")
    return "\n".join(lines) + "\n"


def _reasons(store: Store, ids: list[int]) -> dict[int, tuple[float | None, str]]:
    """Each run's elapsed seconds and why it did not pass, from its record."""
    found = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        for run_id, text in store.rows(
            f"SELECT id, record FROM scriptast_runs WHERE id IN ({', '.join('?' * len(chunk))})",
            chunk,
        ):
            record = msgspec.json.decode(text, type=RunRecord)
            found[int(run_id)] = (record.elapsed_seconds, _why(record))
    return found


def _why(record: RunRecord) -> str:
    if record.tests is not None and record.tests.failed:
        return "; ".join(f"{t.id}: {t.message}" for t in record.tests.failed[:20])
    bad = [f for f in record.figures if f.check is not None and not f.check.ok]
    if bad:
        return "; ".join(f"{f.name} {f.value:g} outside its reference" for f in bad)
    if record.missing:
        return "missing " + ", ".join(record.missing)
    if record.reason:
        return record.reason
    return f"state {record.state}, exit code {record.exit_code}"
