"""The Slurm backend's record: batch scripts lowered from a category's steps, launch scripts
submit.py writes, Slurm's client and state table, and persistent allocations."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scriptast.contract.axes import SLURM
from scriptast.contract.run_record import JobState
from scriptast.schedulers.backend import BATCH, SchedulerBackend, SchedulerClient
from scriptast.schedulers.slurm.script import lower

if TYPE_CHECKING:
    from scriptast.contract.transport import Transport

SLURM_STATES: dict[str, JobState] = {
    "PENDING": JobState.PENDING,
    "CONFIGURING": JobState.PENDING,
    "REQUEUED": JobState.PENDING,
    "REQUEUE_HOLD": JobState.PENDING,
    "REQUEUE_FED": JobState.PENDING,
    "RESV_DEL_HOLD": JobState.PENDING,
    "SUSPENDED": JobState.RUNNING,
    "RUNNING": JobState.RUNNING,
    "COMPLETING": JobState.RUNNING,
    "RESIZING": JobState.RUNNING,
    "SIGNALING": JobState.RUNNING,
    "STAGE_OUT": JobState.RUNNING,
    "STOPPED": JobState.RUNNING,
    "COMPLETED": JobState.COMPLETED,
    "FAILED": JobState.FAILED,
    "BOOT_FAIL": JobState.FAILED,
    "DEADLINE": JobState.FAILED,
    "SPECIAL_EXIT": JobState.FAILED,
    "CANCELLED": JobState.CANCELLED,
    "PREEMPTED": JobState.CANCELLED,
    "REVOKED": JobState.CANCELLED,
    "TIMEOUT": JobState.TIMEOUT,
    "NODE_FAIL": JobState.NODE_FAIL,
    "OUT_OF_MEMORY": JobState.OUT_OF_MEMORY,
}
"""Each state squeue, sacct and scontrol print (COMPLETING is not final: its processes may still
run); a state not here is UNKNOWN until the next poll."""


def is_final(state: str) -> bool:
    """The Slurm state is one a job does not leave."""
    return SLURM_STATES.get(state, JobState.UNKNOWN).final


def _client(transport: Transport) -> SchedulerClient:
    """Slurm's commands through `transport` (loaded by run only: emit never needs them)."""
    from scriptast.schedulers.slurm.client import SlurmClient

    return SlurmClient(transport)


BACKEND = SchedulerBackend(
    name=SLURM,
    lower=lower,
    states=SLURM_STATES,
    launch=BATCH,
    client=_client,
    runs_launch_scripts=True,
    allocations=True,
)
