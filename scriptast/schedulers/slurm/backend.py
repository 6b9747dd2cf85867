"""The Slurm backend's record: batch scripts lowered from a category's steps, launch scripts
submit.py writes, Slurm's client and state table, and persistent allocations."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from scriptast.contract.axes import SLURM
from scriptast.contract.job_spec import SlurmParams
from scriptast.schedulers.backend import (
    BATCH,
    Allocations,
    HeldAllocation,
    Lowered,
    SchedulerBackend,
    SchedulerClient,
)
from scriptast.schedulers.slurm.states import ENDED_BY, SLURM_STATES

if TYPE_CHECKING:
    from scriptast.contract.transport import Transport
    from scriptast.plan.launch import LaunchPlan
    from scriptast.plan.steps import JobSteps


ALLOCATION_NAME = "scriptast.persistent"
"""The job name of scriptast's persistent allocations (how `squeue --name` finds them)."""


def _lower(job: LaunchPlan, planned: JobSteps) -> Lowered:
    """The batch script (loaded by emit only: run lowers nothing)."""
    from scriptast.schedulers.slurm.script import lower

    return lower(job, planned)


def _client(transport: Transport) -> SchedulerClient:
    """Slurm's commands through `transport` (loaded by run only: emit never needs them)."""
    from scriptast.schedulers.slurm.client import SlurmClient

    return SlurmClient(transport)


def _held(client: SchedulerClient) -> list[HeldAllocation]:
    from scriptast.schedulers.slurm.allocation import list_allocations

    return list(list_allocations(client))


def _release(client: SchedulerClient, job_ids: Sequence[str]) -> list[str]:
    from scriptast.schedulers.slurm.allocation import release

    return release(client, list(job_ids))


def submit_command(script: str) -> list[str]:
    """`sbatch --parsable SCRIPT`: it prints the job id alone."""
    return ["sbatch", "--parsable", script]


def _acquire(client: SchedulerClient, params: SlurmParams, time_limit: str, needed: float,
             wait: float, idle: float) -> tuple[str, str, list[str]]:  # fmt: skip
    from scriptast.schedulers.slurm.allocation import acquire

    return acquire(client, params, time_limit, needed, wait, idle)


def _step_env(params: SlurmParams, alloc_id: str, nodes: str, work_dir: str) -> dict[str, str]:
    from scriptast.schedulers.slurm.allocation import step_env

    return step_env(params, alloc_id, nodes, work_dir)


def _dry_run(params: SlurmParams, time_limit: str, script: str) -> list[list[str]]:
    from scriptast.schedulers.slurm.allocation import AllocationParams, salloc_argv

    return [
        ["squeue", "--noheader", "--me", "--name", ALLOCATION_NAME],
        salloc_argv(AllocationParams.of(params), time_limit),
        ["env", "SLURM_JOB_ID=<allocation>", "bash", script],
    ]


BACKEND = SchedulerBackend(
    name=SLURM,
    lower=_lower,
    states=SLURM_STATES,
    ended_by=ENDED_BY,
    launch=BATCH,
    client=_client,
    submit_command=submit_command,
    allocations=Allocations(
        job_name=ALLOCATION_NAME,
        held=_held,
        release=_release,
        acquire=_acquire,
        step_env=_step_env,
        dry_run=_dry_run,
    ),
)
