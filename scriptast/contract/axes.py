"""What a job runs (its workflow) and where (its scenario, mapped once onto the two axes: the
scheduler that queues it and the transport that reaches that scheduler)."""

from __future__ import annotations

from enum import StrEnum

import msgspec

from scriptast.errors import InputError


class WorkflowType(StrEnum):
    """What the job runs."""

    pytest = "pytest"
    eval = "eval"
    bench = "bench"
    custom = "custom"
    perf_sanity = "perf_sanity"


class ExecutionScenario(StrEnum):
    """Where the job runs, as the seed names it. A request, job_spec.json and run.json name a
    scenario as text, checked against PLACEMENTS (check_scenario), so a scenario a registered
    backend adds is taken as these are."""

    local_docker = "local_docker"
    local_slurm = "local_slurm"
    remote_slurm = "remote_slurm"


class Placement(msgspec.Struct, frozen=True):
    """A scenario on the two axes: the scheduler backend and the transport, each by the name it
    is registered under."""

    scheduler: str
    transport: str

    @property
    def remote(self) -> bool:
        """The scheduler is reached over a connection (its files live on another machine)."""
        return self.transport != LOCAL


LOCAL = "local"
SSH = "ssh"
SLURM = "slurm"
DOCKER = "docker"

PLACEMENTS: dict[str, Placement] = {
    ExecutionScenario.local_docker: Placement(DOCKER, LOCAL),
    ExecutionScenario.local_slurm: Placement(SLURM, LOCAL),
    ExecutionScenario.remote_slurm: Placement(SLURM, SSH),
}
"""Each execution_scenario on the two axes: the one place a scenario's name is read."""


def check_scenario(value: str | None) -> None:
    """ValueError (a validation error when a file is decoded) unless `value` names a scenario
    that places a job: the seed's three, or one a registered scheduler backend adds."""
    if value is not None and str(value) not in PLACEMENTS:
        known = ", ".join(PLACEMENTS)
        raise ValueError(f"execution_scenario {value!r} is not one of {known}")


def placement(scenario: str) -> Placement:
    """The scheduler and transport of `scenario`."""
    found = PLACEMENTS.get(str(scenario))
    if found is None:
        known = ", ".join(PLACEMENTS)
        raise InputError(f"execution_scenario {scenario!r} is not one of {known}")
    return found
