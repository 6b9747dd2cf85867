"""How `run` submits and follows (its flags), where a job's log goes on the terminal, and the
timeouts a job gets from its time limit."""

from __future__ import annotations

import re
from collections.abc import Callable

import msgspec

from scriptast.common.clock_time import clock_seconds
from scriptast.executor.job_files import LoadedJob
from scriptast.model.slurm_time import parse_time_limit

MARGIN_SECONDS = 600.0
"""How long past its time limit a job may run before run cancels it (Slurm ends it at its
limit; the margin is for a controller that does not)."""


class RunOptions(msgspec.Struct, kw_only=True):
    """How `run` submits and follows: the flags of `scriptast run`."""

    force: bool = False
    again: bool = False
    detach: bool = False
    dry_run: bool = False
    persistent: bool | None = None
    alloc_time: str | None = None
    alloc_idle: float = 600.0
    """A new persistent allocation is released after this many seconds without a step (0:
    kept until its time limit)."""
    queue_timeout: float | None = None
    run_timeout: float | None = None
    poll_max: float = 30.0
    ssh_host: str | None = None
    ssh_config: str | None = None
    retries: int = 0
    """How often a job a node failure ended (NODE_FAIL) is submitted again."""
    keep_connection: bool = False
    """Leave the ssh master this run opened for the next command (default: closed at the end)."""
    fetch: tuple[str, ...] = ()
    reference: str | None = None
    results: str | None = None
    """The results store each judged run is added to (`--results`; None: SCRIPTAST_RESULTS,
    else the default file)."""
    store: bool = True
    """False (`--no-store`): no results store is opened; the record stays in run.json."""
    baseline: str | None = None
    """`history`: figures without a reference are held against the store's earlier runs."""
    baseline_runs: int = 5
    tolerance: float = 5.0
    """In %: how far a figure may fall (or rise, the way it regresses) from its history."""
    array_task: str | None = None
    """`--array-task`: of the job arrays' tasks given, only those of these indices (3, 0-4)."""


class Writer(msgspec.Struct, frozen=True):
    """Where a job's log goes on the terminal, and the prefix of its lines (several jobs)."""

    write: Callable[[bytes], None]
    prefix: str | None


def time_limit_seconds(job: LoadedJob) -> float | None:
    """The job's Slurm time limit in seconds (None: no Slurm job, or UNLIMITED)."""
    params = job.spec.slurm_params
    if params is None:
        return None
    minutes = parse_time_limit(params.time_limit)
    return None if minutes is None else minutes * 60.0


def timeouts(job: LoadedJob, options: RunOptions) -> tuple[float | None, float | None]:
    """(queue timeout, run timeout) in seconds: the flags, else the job's time limit plus a
    margin; the run timeout, else job_spec.json's `monitor_timeout_seconds` (the executors'
    contract field) where it gives one."""
    limit = time_limit_seconds(job)
    default = None if limit is None else limit + MARGIN_SECONDS
    monitor = job.spec.monitor_timeout_seconds
    queue = options.queue_timeout if options.queue_timeout is not None else default
    if options.run_timeout is not None:
        run: float | None = options.run_timeout
    elif monitor is not None and monitor > 0:
        run = monitor
    else:
        run = default
    return queue, run


def parse_seconds(text: str) -> float:
    """A duration: seconds (`90`, `90s`), minutes (`5m`), hours (`2h`) or a Slurm time
    (`02:00:00`, `1-00:00:00`); ValueError for anything else."""
    value = text.strip()
    matched = re.fullmatch(r"(\d+(?:\.\d+)?)([smh]?)", value)
    if matched:
        return float(matched.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[matched.group(2)]
    seconds = clock_seconds(value)
    if seconds is None:
        raise ValueError(f"{text!r} is not a duration (90, 90s, 5m, 2h or 02:00:00)")
    return seconds
