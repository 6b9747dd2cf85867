"""The docker backend's record: docker_cmd.sh lowered from a category's steps, and its states."""

from __future__ import annotations

from scriptast.contract.axes import DOCKER
from scriptast.schedulers.backend import PROCESS, SchedulerBackend
from scriptast.schedulers.docker.lower import lower
from scriptast.schedulers.docker.states import DOCKER_STATES

BACKEND = SchedulerBackend(name=DOCKER, lower=lower, states=DOCKER_STATES, launch=PROCESS)
