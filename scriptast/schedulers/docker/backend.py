"""The docker backend's record: docker_cmd.sh lowered from a category's steps, its launcher (the
script a process here) and its states."""

from __future__ import annotations

from scriptast.common.lazy import LazyFunction
from scriptast.contract.axes import DOCKER
from scriptast.contract.run_record import JobState
from scriptast.plan.launch import LaunchPlan
from scriptast.plan.steps import JobSteps
from scriptast.schedulers.backend import Lowered, SchedulerBackend, launcher_in

DOCKER_STATES: dict[str, JobState] = {
    "RUNNING": JobState.RUNNING,
    "COMPLETED": JobState.COMPLETED,
    "FAILED": JobState.FAILED,
}
"""What run records for a docker job's process: running, or ended with exit code 0 or not."""


BACKEND = SchedulerBackend(
    name=DOCKER,
    lower=LazyFunction[[LaunchPlan, JobSteps], Lowered](
        "scriptast.schedulers.docker.docker_cmd", "lower"
    ),
    states=DOCKER_STATES,
    launcher=launcher_in("scriptast.schedulers.docker.launcher"),
)
