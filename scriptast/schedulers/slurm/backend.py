"""The Slurm backend's record: batch scripts lowered from a category's steps, its launcher (sbatch,
or a step of a persistent allocation), Slurm's client and state table, and persistent
allocations."""

from __future__ import annotations

from collections.abc import Sequence

from scriptast.common.lazy import LazyFunction
from scriptast.contract.axes import SLURM
from scriptast.contract.job_spec import SlurmParams
from scriptast.contract.transport import Transport
from scriptast.plan.launch import LaunchPlan
from scriptast.plan.steps import JobSteps
from scriptast.schedulers.backend import (
    Allocations,
    HeldAllocation,
    Lowered,
    SchedulerBackend,
    launcher_in,
)
from scriptast.schedulers.queue_client import SchedulerClient
from scriptast.schedulers.slurm.states import ENDED_BY, SLURM_STATES

ALLOCATION_NAME = "scriptast.persistent"
"""The job name of scriptast's persistent allocations (how `squeue --name` finds them)."""


def submit_command(script: str, options: Sequence[str] = ()) -> list[str]:
    """`sbatch --parsable [OPTIONS] SCRIPT`: it prints the job id alone."""
    return ["sbatch", "--parsable", *options, script]


SCRIPT = "scriptast.schedulers.slurm.batch_script"
LAUNCHER = "scriptast.schedulers.slurm.launcher"
CLIENT = "scriptast.schedulers.slurm.client"
ALLOCATION = "scriptast.schedulers.slurm.allocation"
"""The modules each part lives in, loaded when it is first used (emit lowers, run does the
rest)."""

BACKEND = SchedulerBackend(
    name=SLURM,
    lower=LazyFunction[[LaunchPlan, JobSteps], Lowered](SCRIPT, "lower"),
    states=SLURM_STATES,
    ended_by=ENDED_BY,
    launcher=launcher_in(LAUNCHER),
    client=LazyFunction[[Transport], SchedulerClient](CLIENT, "SlurmClient"),
    allocations=Allocations(
        job_name=ALLOCATION_NAME,
        held=LazyFunction[[SchedulerClient], Sequence[HeldAllocation]](
            ALLOCATION, "list_allocations"
        ),
        release=LazyFunction[[SchedulerClient, Sequence[str]], list[str]](ALLOCATION, "release"),
        acquire=LazyFunction[
            [SchedulerClient, SlurmParams, str, float, float, float], tuple[str, str, list[str]]
        ](ALLOCATION, "acquire"),
        step_env=LazyFunction[[SlurmParams, str, str, str], dict[str, str]](ALLOCATION, "step_env"),
        dry_run=LazyFunction[[SlurmParams, str, str], list[list[str]]](ALLOCATION, "dry_run"),
    ),
)
