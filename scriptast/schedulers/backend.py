"""The record a scheduler backend fills in: its name, how it lowers a category's steps to its
script form, whether it runs launch scripts another tool writes, and the one table from its
state names onto the verdict's job states."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import msgspec

from scriptast.builders.resolution.job import ResolvedJob
from scriptast.builders.steps import JobSteps
from scriptast.contract.job_spec import JobLogs
from scriptast.contract.run_record import JobState
from scriptast.model.docker import DockerRun
from scriptast.model.script import Script


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


@dataclass(frozen=True)
class SchedulerBackend:
    """One scheduler. `lower` turns a category's steps into its script form;
    `runs_launch_scripts`: it takes a launch script another tool writes (perf_sanity's
    submit.py writes Slurm batch scripts); `states` maps each of its state names onto JobState
    (a name it lacks is UNKNOWN)."""

    name: str
    lower: Callable[[ResolvedJob, JobSteps], Lowered]
    states: Mapping[str, JobState]
    runs_launch_scripts: bool = False

    def state(self, name: str | None) -> JobState:
        """The job state of one of this scheduler's state names (`CANCELLED by 0` too)."""
        word = (name or "").split()[0] if name else ""
        return self.states.get(word, JobState.UNKNOWN)
