"""The step launch kind: the batch script run on this machine by bash with a persistent
allocation's variables, so that its srun steps are the allocation's; an allocation is reused
when its parameters match and its time left covers the job, else a new one is made."""

from __future__ import annotations

import os

from scriptast.contract.run_record import RunRecord
from scriptast.executor.followed_job import StepFollowed
from scriptast.executor.job_files import LoadedJob, log_files
from scriptast.executor.launch.common import new_record
from scriptast.executor.launch.process import start
from scriptast.executor.options import RunOptions, Writer, time_limit_seconds
from scriptast.model.slurm_time import parse_time_limit
from scriptast.schedulers.backend import SchedulerClient
from scriptast.schedulers.registry import scheduler

Allocated = tuple[str, str, list[str]]
"""(allocation id, its nodes, notes on how it was chosen)."""


def allocation_for(
    job: LoadedJob, client: SchedulerClient, options: RunOptions, wait: float | None
) -> Allocated:
    """A running allocation whose parameters match and whose time left covers the job's limit,
    else a new one (and why none was reused)."""
    assert job.spec.slurm_params is not None
    capability = scheduler(job.spec.scheduler).allocations
    assert capability is not None  # uses_allocation chose this kind
    return capability.acquire(client, job.spec.slurm_params, alloc_time(job, options),
                              time_limit_seconds(job) or 0.0, wait or 86400.0,
                              options.alloc_idle)  # fmt: skip


def alloc_time(job: LoadedJob, options: RunOptions) -> str:
    """The allocation's time: `--alloc-time`, else the partition's limit in slurm_env when it
    is at least the job's, else the job's own."""
    if options.alloc_time:
        return options.alloc_time
    params = job.spec.slurm_params
    assert params is not None
    env = job.spec.slurm_env
    partition = env.partition(params.partition) if env else None
    limit = (partition.time_limit or "") if partition is not None else ""
    if limit and limit.upper() not in ("UNLIMITED", "INFINITE"):
        try:
            longer = (parse_time_limit(limit) or 0) >= (parse_time_limit(params.time_limit) or 0)
        except ValueError:
            longer = False
        if longer:
            return limit
    return params.time_limit


def allocation_env(job: LoadedJob, alloc_id: str, nodes: str) -> dict[str, str]:
    """The environment the job's script runs with as a step of the allocation."""
    params = job.spec.slurm_params
    capability = scheduler(job.spec.scheduler).allocations
    assert params is not None and capability is not None
    return capability.step_env(params, alloc_id, nodes, job.work_dir)


def launch_step(
    job: LoadedJob, client: SchedulerClient, allocation: Allocated, writer: Writer
) -> StepFollowed:
    """The script run by bash inside the allocation; its logs are the job's with `%j` as
    `<allocation>.<n>`, the first n whose log is not there yet."""
    alloc_id, nodes, notes = allocation
    number = 1
    while os.path.lexists(log_files(job, f"{alloc_id}.{number}")[0]):
        number += 1
    out, err_or_none = log_files(job, f"{alloc_id}.{number}")
    err = err_or_none or out
    argv = ["bash", job.script]
    process = start(job, argv, out, err, allocation_env(job, alloc_id, nodes))
    record = new_record(
        job,
        submit_command=tuple(argv),
        out_log=out,
        err_log=err if err != out else None,
        job_id=alloc_id,
        allocation_id=alloc_id,
        pid=process.pid,
        state="RUNNING",
        notes=tuple(notes),
        launch="step",
    )
    return StepFollowed(job, record, writer, client, process)


def follow_step(
    job: LoadedJob, record: RunRecord, client: SchedulerClient, writer: Writer
) -> StepFollowed:
    """A step another `scriptast run` started here (its process, and its exit file)."""
    return StepFollowed(job, record, writer, client)
