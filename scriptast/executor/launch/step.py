"""The step launch kind: the batch script run on this machine by bash with a persistent
allocation's variables, so that its srun steps are the allocation's; an allocation is reused
when its parameters match and its time left covers the job, else a new one is made."""

from __future__ import annotations

import os
import socket

from scriptast.contract.run_record import RunRecord
from scriptast.executor.followed_job import StepFollowed
from scriptast.executor.job_files import LoadedJob, log_files
from scriptast.executor.launch.common import new_record
from scriptast.executor.launch.process import start
from scriptast.executor.options import RunOptions, Writer, time_limit_seconds
from scriptast.model.slurm_time import parse_time_limit
from scriptast.schedulers.backend import SchedulerClient
from scriptast.schedulers.slurm.allocation import (
    AllocationParams,
    allocate,
    choose,
    list_allocations,
    watch_idle,
)

CLEARED_PREFIXES = ("SLURM_", "SBATCH_", "SALLOC_", "SRUN_")
KEPT_SLURM = ("SLURM_CONF",)

Allocated = tuple[str, str, list[str]]
"""(allocation id, its nodes, notes on how it was chosen)."""


def allocation_for(
    job: LoadedJob, client: SchedulerClient, options: RunOptions, wait: float | None
) -> Allocated:
    """A running allocation whose parameters match and whose time left covers the job's limit,
    else a new one (and why none was reused)."""
    assert job.spec.slurm_params is not None
    wanted = AllocationParams.of(job.spec.slurm_params)
    needed = time_limit_seconds(job) or 0.0
    found, why = choose(list_allocations(client), wanted, needed)
    if found is not None:
        return found.job_id, found.nodes, [f"reused persistent allocation {found.job_id}"]
    alloc_id = allocate(client, wanted, alloc_time(job, options), wait or 86400.0)
    if options.alloc_idle > 0:
        watch_idle(client, alloc_id, options.alloc_idle)
    nodes = next((a.nodes for a in list_allocations(client) if a.job_id == alloc_id), "")
    notes = [f"new persistent allocation {alloc_id}", *why]
    return alloc_id, nodes, notes


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
    """This environment without Slurm's job variables, plus those of the allocation, so that
    every srun of the script runs as a step of it."""
    params = job.spec.slurm_params
    assert params is not None
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(CLEARED_PREFIXES) or k in KEPT_SLURM
    }
    env.update(
        SLURM_JOB_ID=alloc_id,
        SLURM_JOBID=alloc_id,
        SLURM_NNODES=str(params.nodes),
        SLURM_JOB_NUM_NODES=str(params.nodes),
        SLURM_NTASKS=str(params.ntasks),
        SLURM_NPROCS=str(params.ntasks),
        SLURM_NTASKS_PER_NODE=str(params.ntasks_per_node),
        SLURM_SUBMIT_DIR=job.work_dir,
        SLURM_SUBMIT_HOST=socket.gethostname(),
    )
    if nodes:
        env.update(SLURM_NODELIST=nodes, SLURM_JOB_NODELIST=nodes)
    return env


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
