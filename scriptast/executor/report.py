"""What `run` prints at the end: for one job, its verdict, exit code, elapsed time, logs, the
patterns found and, on failure, the last lines; for several, a table; `--json`, the records."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from scriptast.contract.run_record import VERDICT_EXIT, RunRecord, Verdict

SHOWN_LINES = 15


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


def summary(record: RunRecord) -> str:
    """A job's result for a person."""
    ident = f"job {record.job_id}" if record.job_id else f"pid {record.pid}"
    code = "unknown" if record.exit_code is None else str(record.exit_code)
    lines = [
        f"{record.verdict}  {record.work_dir}",
        f"  {ident}, state {record.state}, exit code {code}"
        + (f" (from {record.final_state_source})" if record.final_state_source else "")
        + f", elapsed {_elapsed(record)}",
        f"  log: {record.out_log}" + (f" and {record.err_log}" if record.err_log else ""),
    ]
    lines += [f"  note: {note}" for note in record.notes]
    if record.hang_hit is not None:
        hit = record.hang_hit
        lines.append(f"  hang: {hit.pattern!r} at {hit.log}:{hit.line_number}: {hit.line}")
    if record.success_hits:
        hit = record.success_hits[0]
        lines.append(f"  success pattern {hit.pattern!r} at line {hit.line_number}: {hit.line}")
    elif record.verdict is Verdict.INCONCLUSIVE:
        lines.append("  no success pattern was printed")
    if record.failure_hits:
        lines.append("  failure patterns (evidence, not the verdict):")
        lines += [
            f"    {h.pattern!r} at line {h.line_number}: {h.line}" for h in record.failure_hits
        ]
    if record.verdict is not Verdict.PASSED and record.last_lines:
        lines.append("  last lines:")
        lines += [f"    {line}" for line in record.last_lines[-SHOWN_LINES:]]
    return "\n".join(lines) + "\n"


def table(records: Sequence[RunRecord]) -> str:
    """One line a job: verdict, exit code, job id, elapsed, work_dir; and the counts."""
    rows = [("VERDICT", "EXIT", "JOB", "ELAPSED", "WORK_DIR")]
    for r in records:
        code = "-" if r.exit_code is None else str(r.exit_code)
        rows.append((str(r.verdict), code, r.job_id or f"pid {r.pid}", _elapsed(r), r.work_dir))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)) + "  " + row[4]
             for row in rows]  # fmt: skip
    counts: dict[str, int] = {}
    for r in records:
        counts[str(r.verdict)] = counts.get(str(r.verdict), 0) + 1
    lines.append(", ".join(f"{n} {v}" for v, n in sorted(counts.items())))
    return "\n".join(lines) + "\n"


def as_json(records: Sequence[RunRecord], many: bool) -> str:
    """The record (one job) or the list of records (several), as JSON."""
    value: object = list(records) if many else records[0]
    return msgspec.json.format(msgspec.json.encode(value), indent=2).decode() + "\n"
