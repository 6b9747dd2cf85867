"""What `run` prints at the end: for one job, its verdict, exit code, elapsed time, logs, the
patterns found and, on failure, the last lines; for several, a table; `--json`, the records."""

from __future__ import annotations

import signal
from collections.abc import Sequence

import msgspec

from scriptast.common.colour import BOLD_RED, GREEN, RED, YELLOW, paint
from scriptast.contract.measured import Figure
from scriptast.contract.run_record import VERDICT_EXIT, RunRecord, Verdict
from scriptast.executor.shown import shown as escaped

SHOWN_LINES = 15
NAMED_TESTS = 20


def exit_code(records: Sequence[RunRecord]) -> int:
    """0 when every job passed; else the code of the first verdict, in judging order, that
    any job got."""
    verdicts = {r.verdict for r in records if r.verdict is not None}
    for verdict in Verdict:
        if verdict in verdicts and verdict is not Verdict.PASSED:
            return VERDICT_EXIT[verdict]
    return 0


def _elapsed(record: RunRecord) -> str:
    seconds = int(record.elapsed_seconds or 0)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def _signal_name(number: int) -> str:
    try:
        return f"signal {number}, {signal.Signals(number).name}"
    except ValueError:
        return f"signal {number}"


VERDICT_COLOUR = {Verdict.PASSED: GREEN, Verdict.INCONCLUSIVE: YELLOW,
                  Verdict.CANCELLED: YELLOW}  # fmt: skip
"""A verdict's colour on a terminal; any other is red."""


def _painted_verdict(line: str, verdict: Verdict | None) -> str:
    """An escaped line that begins with the verdict, its verdict coloured."""
    if verdict is None or not line.startswith(str(verdict)):
        return line
    word = str(verdict)
    return paint(word, VERDICT_COLOUR.get(verdict, BOLD_RED)) + line[len(word) :]


def _painted_figure(line: str) -> str:
    """An escaped figure line, as figure_text ends it: its margin and its word coloured (the
    figure's name and value come from the job; only scriptast's own tail is touched)."""
    for word, code in ((": ok", GREEN), (": REGRESSED", RED)):
        if line.endswith(word):
            head = line[: -len(word)]
            at = head.rfind(", margin ")
            if at >= 0:
                margin = head[at + len(", margin ") : -1]
                head = f"{head[:at]}, margin {paint(margin, code)})"
            return f"{head}: {paint(word[2:], code)}"
    return line


def summary(record: RunRecord, every_figure: bool = False, colour: bool = False) -> str:
    """A job's result for a person (`every_figure`: each figure, not only those with a
    reference and the headline); `colour`: the verdict, each margin and its word coloured,
    on what is already escaped, so nothing the job printed is coloured."""
    ident = f"job {record.job_id}" if record.job_id else f"pid {record.pid}"
    code = "unknown" if record.exit_code is None else str(record.exit_code)
    if record.exit_signal:
        code += f" (ended by {_signal_name(record.exit_signal)})"
    lines = [
        f"{record.verdict}  {record.work_dir}",
        f"  {ident}, state {record.state}, exit code {code}"
        + (f" (from {record.final_state_source})" if record.final_state_source else "")
        + f", elapsed {_elapsed(record)}",
        f"  log: {record.out_log}" + (f" and {record.err_log}" if record.err_log else ""),
    ]
    if record.restarts:
        times = "once" if record.restarts == 1 else f"{record.restarts} times"
        lines.append(f"  restarted: Slurm requeued the job {times} before this verdict")
    for attempt in record.attempts:
        ident = f"job {attempt.job_id}" if attempt.job_id else "a process"
        lines.append(f"  earlier attempt: {ident} {attempt.verdict}, submitted again (--retries)")
    lines += [f"  note: {note}" for note in record.notes]
    if record.hang_hit is not None:
        hit = record.hang_hit
        lines.append(f"  hang: {hit.pattern!r} at {hit.log}:{hit.line_number}: {hit.line}")
    measured = bool(record.figures or record.tests or record.missing or record.unread)
    first_figure = len(lines)
    lines += measured_lines(record, every_figure)
    figures = range(first_figure, first_figure + _figure_count(record, every_figure))
    if record.success_hits and not measured:
        hit = record.success_hits[0]
        lines.append(f"  success pattern {hit.pattern!r} at line {hit.line_number}: {hit.line}")
    elif record.verdict is Verdict.INCONCLUSIVE and not measured:
        lines.append("  no success pattern was printed")
    if record.failure_hits:
        lines.append("  failure patterns (evidence, not the verdict):")
        lines += [
            f"    {h.pattern!r} at line {h.line_number}: {h.line}" for h in record.failure_hits
        ]
    if record.verdict is not Verdict.PASSED and record.last_lines:
        lines.append("  last lines:")
        lines += [f"    {line}" for line in record.last_lines[-SHOWN_LINES:]]
    if not colour:
        return escaped("\n".join(lines) + "\n")
    shown = [escaped(line) for line in lines]
    shown[0] = _painted_verdict(shown[0], record.verdict)
    for at in figures:
        shown[at] = _painted_figure(shown[at])
    return "\n".join(shown) + "\n"


def _figure_count(record: RunRecord, every_figure: bool) -> int:
    """How many figure lines measured_lines begins with."""
    return sum(1 for f in record.figures if every_figure or f.check or f.headline)


def figure_text(figure: Figure) -> str:
    """A figure, its reference and margin, and whether it passed:
    `gsm8k accuracy 74.52 (threshold 71.00, reference 74.20, margin +3.52): ok`."""
    unit = "" if figure.unit in ("", "%") else f" {figure.unit}"
    shown = f"{figure.name} {_number(figure.value)}{unit}"
    if figure.printed:
        values = ", ".join(
            f"{_number(p.value)} at line {p.source.line}" if p.source.line else _number(p.value)
            for p in figure.printed
        )
        shown += f" [printed {len(figure.printed)} times: {values}]"
    check = figure.check
    if check is None:
        return f"{shown} (no reference: {figure.unchecked or 'none applies'})"
    if check.lower is not None and check.upper is None:
        bounds = f"threshold {_number(check.lower)}"
    elif check.upper is not None and check.lower is None:
        bounds = f"threshold {_number(check.upper)}"
    else:
        bounds = f"from {_number(check.lower or 0)} to {_number(check.upper or 0)}"
    word = "ok" if check.ok else "REGRESSED"
    return (f"{shown} ({bounds}, reference {_number(check.reference)}, "
            f"margin {check.margin:+.2f}): {word}")  # fmt: skip


def _number(value: float) -> str:
    return f"{value:.2f}" if abs(value) < 1e6 else f"{value:.4g}"


def measured_lines(record: RunRecord, every_figure: bool = False) -> list[str]:
    """What the job measured, for a person: its figures each with its reference, its tests,
    the figures it never printed and the result files that could not be read."""
    lines = [f"  {figure_text(f)}" for f in record.figures
             if every_figure or f.check or f.headline]  # fmt: skip
    others = [f for f in record.figures if not (every_figure or f.check or f.headline)]
    if others:
        lines.append(f"  and {len(others)} more figures without a reference (run.json has them)")
    lines += [f"  missing figure: {name} (expected, never printed)" for name in record.missing]
    lines += [f"  could not read {what}" for what in record.unread]
    lines += [f"  error: {what}" for what in record.errors]
    tests = record.tests
    if tests is not None:
        lines.append(
            f"  tests: {tests.tests} run, {tests.passed} passed, {tests.failures} failed, "
            f"{tests.errors} errors, {tests.skipped} skipped ({tests.source}, {tests.seconds:g} s)"
        )
        if tests.tests == 0:
            lines.append("  no tests were executed")
        elif tests.passed <= 0 and not (tests.failures or tests.errors):
            lines.append("  every test was skipped")
        for case in tests.failed[:NAMED_TESTS]:
            lines.append(f"    {case.outcome.upper()} {case.id}: {case.message}")
        more = tests.failures + tests.errors - min(len(tests.failed), NAMED_TESTS)
        if more > 0:
            lines.append(f"    and {more} more (run.json lists up to 100)")
    return lines


def _headline(record: RunRecord) -> str:
    figure = next((f for f in record.figures if f.headline), None)
    if figure is None:
        if record.tests is not None:
            return f"{record.tests.passed}/{record.tests.tests} passed"
        return "-"
    margin = "" if figure.check is None else f" ({figure.check.margin:+.2f})"
    return f"{figure.name} {_number(figure.value)}{margin}"


def table(records: Sequence[RunRecord], colour: bool = False) -> str:
    """One line a job: verdict, exit code, job id, elapsed, its headline figure and margin,
    work_dir; and the counts (`colour`: each job's verdict coloured)."""
    rows = [("VERDICT", "EXIT", "JOB", "ELAPSED", "HEADLINE", "WORK_DIR")]
    for r in records:
        code = "-" if r.exit_code is None else str(r.exit_code)
        rows.append((str(r.verdict), code, r.job_id or f"pid {r.pid}", _elapsed(r),
                     _headline(r), r.work_dir))  # fmt: skip
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)) + "  " + row[5]
             for row in rows]  # fmt: skip
    counts: dict[str, int] = {}
    for r in records:
        counts[str(r.verdict)] = counts.get(str(r.verdict), 0) + 1
    lines.append(", ".join(f"{n} {v}" for v, n in sorted(counts.items())))
    if not colour:
        return escaped("\n".join(lines) + "\n")
    shown = [escaped(line) for line in lines]
    for at, record in enumerate(records, 1):
        shown[at] = _painted_verdict(shown[at], record.verdict)
    return "\n".join(shown) + "\n"


def as_json(records: Sequence[RunRecord], many: bool) -> str:
    """The record (one job) or the list of records (several), as JSON."""
    value: object = list(records) if many else records[0]
    return msgspec.json.format(msgspec.json.encode(value), indent=2).decode() + "\n"
