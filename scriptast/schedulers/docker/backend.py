"""The docker backend's record: docker_cmd.sh lowered from a category's steps, and its states."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scriptast.contract.axes import DOCKER
from scriptast.contract.run_record import JobState
from scriptast.schedulers.backend import PROCESS, Lowered, SchedulerBackend

if TYPE_CHECKING:
    from scriptast.plan.launch import LaunchPlan
    from scriptast.plan.steps import JobSteps

DOCKER_STATES: dict[str, JobState] = {
    "RUNNING": JobState.RUNNING,
    "COMPLETED": JobState.COMPLETED,
    "FAILED": JobState.FAILED,
}
"""What run records for a docker job's process: running, or ended with exit code 0 or not."""


def _lower(job: LaunchPlan, planned: JobSteps) -> Lowered:
    """docker_cmd.sh (loaded by emit only: run lowers nothing)."""
    from scriptast.schedulers.docker.docker_cmd import lower

    return lower(job, planned)


BACKEND = SchedulerBackend(name=DOCKER, lower=_lower, states=DOCKER_STATES, launch=PROCESS)
