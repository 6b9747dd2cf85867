"""The record a scheduler backend fills in: its name, how it lowers a category's steps to its
script form, its launcher and its queue's client, the one table from its state names onto the
verdict's job states, and persistent allocations when it has them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

import msgspec

from scriptast.common.lazy import LazyFunction
from scriptast.contract.job_spec import JobLogs, SlurmParams
from scriptast.contract.run_record import JobState
from scriptast.model.docker import DockerRun
from scriptast.model.script import Script
from scriptast.schedulers.queue_client import SchedulerClient

if TYPE_CHECKING:  # types only: emit, which runs no command, does not load the transport seam,
    # and run, which lowers nothing, does not load the builders
    from scriptast.contract.transport import Transport
    from scriptast.plan.launch import LaunchPlan
    from scriptast.plan.steps import JobSteps
    from scriptast.schedulers.launching import Launcher


PROCESS_LAUNCHER = "scriptast.schedulers.process_launcher"
"""The default launcher's module: each job's script run as a process here."""


def launcher_in(module: str) -> Callable[[], Launcher]:
    """The `launcher` function of `module`, imported when a job is first launched (emit, which
    launches nothing, never loads it)."""
    return LazyFunction[[], "Launcher"](module, "launcher")


class Lowered(msgspec.Struct, frozen=True, kw_only=True):
    """A job in a scheduler's script form: the script to submit (`main`, named `main_name` in
    work_dir), other scripts by name (written before it), local files the job needs beside them
    (`carried`), and the logs it writes. `names_script`: job_spec.json's script_path names the
    main script (the seed gives a docker job its command instead: `docker_run`)."""

    main_name: str
    main: Script
    others: tuple[tuple[str, Script], ...] = ()
    carried: tuple[str, ...] = ()
    logs: JobLogs
    names_script: bool = True
    docker_run: DockerRun | None = None


class HeldAllocation(Protocol):
    """A persistent allocation as its scheduler lists it."""

    @property
    def job_id(self) -> str: ...

    @property
    def state(self) -> str: ...

    @property
    def time_left(self) -> str: ...

    @property
    def nodes(self) -> str: ...

    def described(self) -> str:
        """What it was made for, in one word (JSON), or `-` when it does not say."""
        ...

    def holds(self) -> str:
        """What it holds, in words (`2 node(s), gres gpu:8`)."""
        ...


class Allocations(msgspec.Struct, frozen=True, kw_only=True):
    """Persistent allocations, a capability a backend may have: this user's `held` ones, and
    `release` of some (all of this user's when none is named; an id that is none of them is
    refused); both return what they did."""

    job_name: str
    """The name its allocations carry in the scheduler (how one is known to be scriptast's)."""
    held: Callable[[SchedulerClient], Sequence[HeldAllocation]]
    release: Callable[[SchedulerClient, Sequence[str]], list[str]]
    acquire: Callable[
        [SchedulerClient, SlurmParams, str, float, float, float], tuple[str, str, list[str]]
    ]
    """An allocation for a job's parameters: one running that fits (its time left covers the
    seconds needed), else a new one of the time limit (waiting at most so long; released
    after so many idle seconds when above 0): its id, nodes and notes."""
    step_env: Callable[[SlurmParams, str, str, str], dict[str, str]]
    """The environment a script runs with to be a step of the allocation (the job's
    parameters, the allocation's id and nodes, the work dir)."""
    dry_run: Callable[[SlurmParams, str, str], list[list[str]]]
    """The commands that find or make an allocation for a job's parameters and time limit and
    run its script in it, in order (what `run --dry-run` prints)."""


class SchedulerBackend(msgspec.Struct, frozen=True, kw_only=True):
    """One scheduler. `lower` turns a category's steps into its script form;
    `states` maps each of its state names onto JobState
    (a name it lacks is UNKNOWN); `ended_by` the (state, reason) pairs of a job the scheduler
    has ended while it is still winding down, with the state it ends in. `launcher` launches
    its jobs, follows them again, and says what it would run (the default: each job's script
    a process here); `client` reaches its queue over a transport (None: it has none);
    `allocations`: a job may run as a step of a persistent one, and the `alloc` commands list
    and release them (None: it has none)."""

    name: str
    lower: Callable[[LaunchPlan, JobSteps], Lowered]
    states: Mapping[str, JobState]
    ended_by: Mapping[tuple[str, str], str] = {}
    launcher: Callable[[], Launcher] = LazyFunction[[], "Launcher"](
        PROCESS_LAUNCHER, "ProcessLauncher"
    )
    client: Callable[[Transport], SchedulerClient] | None = None
    allocations: Allocations | None = None

    def winding_down(self, state: str) -> bool:
        """A job in `state` has been ended and its processes are still going (its final state
        follows in seconds)."""
        return any(state == ending for ending, _ in self.ended_by)

    def decided(self, state: str, reason: str | None) -> str | None:
        """The state a job shown in `state` for `reason` ends in, when that is decided."""
        return self.ended_by.get((state, reason or ""))

    def state(self, name: str | None) -> JobState:
        """The job state of one of this scheduler's state names (`CANCELLED by 0` too)."""
        word = (name or "").split()[0] if name else ""
        return self.states.get(word, JobState.UNKNOWN)
