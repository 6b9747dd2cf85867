"""`scriptast run WORK_DIR... [options]` read without typer when the command line's meaning is
certain: known options with good values (as click reads them), at least one work dir; anything
else (help, an unknown or malformed option, a value out of range) goes to typer, which answers
it. Typer and its imports are most of run's own start-up, paid again by every run of a sweep."""

from __future__ import annotations

from typing import Any

from scriptast.cli.plain_options import is_count, option_value
from scriptast.cli.run_action import baseline, duration, tolerance

RUN_OPTIONS: dict[str, tuple[str, Any]] = {
    "--json": ("json_output", bool),
    "--detach": ("detach", bool),
    "--dry-run": ("dry_run", bool),
    "--force": ("force", bool),
    "--again": ("again", bool),
    "--persistent": ("persistent", True),
    "--no-persistent": ("persistent", False),
    "--keep-connection": ("keep_connection", bool),
    "--no-store": ("no_store", bool),
    "--alloc-time": ("alloc_time", str),
    "--alloc-idle": ("alloc_idle", duration),
    "--queue-timeout": ("queue_timeout", duration),
    "--run-timeout": ("run_timeout", duration),
    "--ssh-host": ("ssh_host", str),
    "--ssh-config": ("ssh_config", str),
    "--reference": ("reference", str),
    "--results": ("results", str),
    "--baseline": ("baseline", baseline),
    "--tolerance": ("tolerance", tolerance),
    "--array-task": ("array_task", str),
    "--fetch": ("fetch", list),
    "--retries": ("retries", range(0, 11)),
    "--baseline-runs": ("baseline_runs", range(1, 1001)),
    "--poll-max": ("poll_max", float),
}
"""Each option of `run` (its typer spelling): the value's name and how it is read: a switch
(bool, or the value a --x/--no-x pair sets), a string, a string its reader must accept, a
list, an integer in a range, a number."""


def parse_run(arguments: list[str]) -> dict[str, Any] | None:
    """The values typer would hand `run` for `run ARGUMENTS`; None: typer's to answer."""
    values: dict[str, Any] = {}
    work_dirs: list[str] = []
    words = iter(arguments)
    for word in words:
        if word == "--":
            work_dirs += list(words)
            break
        if not word.startswith("-") or word == "-":
            work_dirs.append(word)
            continue
        name, equals, value = word.partition("=")
        if name not in RUN_OPTIONS:
            return None
        dest, kind = RUN_OPTIONS[name]
        if kind is bool or isinstance(kind, bool):
            if equals:
                return None
            values[dest] = True if kind is bool else kind
            continue
        given = option_value(equals, value, words)
        read = None if given is None else _read(kind, given)
        if read is None:
            return None
        if kind is list:
            values.setdefault(dest, []).append(read)
        else:
            values[dest] = read
    if not work_dirs:
        return None
    return {**values, "work_dirs": work_dirs}


def _read(kind: Any, value: str) -> Any:
    """The value as typer hands it on once `kind` reads it (a duration, the baseline and the
    tolerance stay text: run_values reads them), or None when it does not (typer says why)."""
    if kind in (str, list):
        return value
    if isinstance(kind, range):
        return int(value) if is_count(value) and int(value) in kind else None
    if kind is float:
        try:
            number = float(value)
        except ValueError:
            return None
        return number if number == number and abs(number) != float("inf") else None
    try:
        kind(value)
    except ValueError:
        return None
    return value
