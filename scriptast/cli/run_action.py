"""What `scriptast run` does with its values, typer or not: the flags turned into RunOptions and
the run executed with its errors as one `error:` line (exit 2), Ctrl-C and SIGTERM as a cancel."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

RUN_EXIT = 2
"""run's exit code for an error (its verdicts exit 0 and from 10 up)."""

RUN_DEFAULTS: dict[str, Any] = {
    "json_output": False,
    "detach": False,
    "dry_run": False,
    "force": False,
    "again": False,
    "persistent": None,
    "alloc_time": None,
    "alloc_idle": "10m",
    "retries": 0,
    "queue_timeout": None,
    "run_timeout": None,
    "poll_max": 30.0,
    "ssh_host": None,
    "ssh_config": None,
    "keep_connection": False,
    "fetch": [],
    "reference": None,
    "results": None,
    "no_store": False,
    "baseline": None,
    "baseline_runs": 5,
    "tolerance": "5%",
    "array_task": None,
}
"""Each of run's values when its flag is not given (the typer command's defaults)."""


def duration(value: str | None) -> float | None:
    """A duration flag's seconds (ValueError: not a duration)."""
    if value is None:
        return None
    from scriptast.executor.options import parse_seconds

    return parse_seconds(value)


def baseline(value: str | None) -> str | None:
    """`--baseline`: history or nothing (ValueError: anything else)."""
    if value is not None and value != "history":
        raise ValueError(f"{value!r}: the one baseline is 'history'")
    return value


def tolerance(value: str) -> float:
    """`--tolerance` in % (ValueError: not a tolerance)."""
    from scriptast.cli.results_actions import tolerance_percent
    from scriptast.errors import InputError

    try:
        return tolerance_percent(value)
    except InputError as error:
        raise ValueError(str(error)) from None


def run_values(values: dict[str, Any]) -> NoReturn:
    """`scriptast run` with these values (each checked already: durations, baseline and
    tolerance read without error); exits with run's code."""
    from scriptast.executor.options import RunOptions
    from scriptast.executor.run import run_work_dirs

    given = {**RUN_DEFAULTS, **values}
    options = RunOptions(
        force=given["force"],
        again=given["again"],
        detach=given["detach"],
        dry_run=given["dry_run"],
        persistent=given["persistent"],
        alloc_time=given["alloc_time"],
        alloc_idle=duration(given["alloc_idle"]) or 0.0,
        retries=given["retries"],
        queue_timeout=duration(given["queue_timeout"]),
        run_timeout=duration(given["run_timeout"]),
        poll_max=given["poll_max"],
        ssh_host=given["ssh_host"],
        ssh_config=given["ssh_config"],
        keep_connection=given["keep_connection"],
        fetch=tuple(given["fetch"]),
        reference=given["reference"],
        results=given["results"],
        store=not given["no_store"],
        baseline=baseline(given["baseline"]),
        baseline_runs=given["baseline_runs"],
        tolerance=tolerance(given["tolerance"]),
        array_task=given["array_task"],
    )
    work_dirs, json_output = given["work_dirs"], given["json_output"]
    executing(lambda: run_work_dirs(work_dirs, options, json_output=json_output))


def executing(action: Callable[[], int]) -> NoReturn:
    """Run `action` (run, watch, cancel) and exit with its code: a ScriptastError is one
    `error:` line, SIGTERM and SIGHUP act as Ctrl-C (what was submitted is cancelled)."""
    import signal

    from scriptast.cli.say import fail
    from scriptast.errors import ScriptastError
    from scriptast.executor.interrupts import Abandoned

    def interrupted(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGHUP, interrupted)
    try:
        code = action()
    except ScriptastError as error:
        fail(str(error), RUN_EXIT)
    except Abandoned as error:
        fail(str(error), RUN_EXIT)
    except KeyboardInterrupt:
        fail("interrupted: what it had submitted was cancelled, and run.json says so", RUN_EXIT)
    raise SystemExit(code)
