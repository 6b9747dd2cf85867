"""Slurm's job states onto the job states a verdict reads: one table, for the backend's record
and for the client that reads squeue, sacct and scontrol."""

from __future__ import annotations

from scriptast.contract.run_record import JobState

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


ENDED_BY: dict[tuple[str, str], str] = {
    ("COMPLETING", "TimeLimit"): "TIMEOUT",
    ("COMPLETING", "NodeDown"): "NODE_FAIL",
}
"""(state, reason) pairs of a job Slurm has ended while its processes are given KillWait
seconds to go: the state it ends in is decided already."""


def is_final(state: str) -> bool:
    """The Slurm state is one a job does not leave."""
    return SLURM_STATES.get(state, JobState.UNKNOWN).final
