"""The run side of the scheduler seam: what a backend's launcher is given (the job's files, the
place they are staged at and its processes run, the choices of `run`) and what it gives back (the
record of what it launched, and the tracker that follows, ends and cancels it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import msgspec

from scriptast.contract.job_spec import JobSpec
from scriptast.contract.run_record import Launch, RunRecord

if TYPE_CHECKING:  # types only: emit, which launches nothing, does not load them
    from scriptast.schedulers.queue_client import Final, QueueRow, SchedulerClient

Ending = tuple[str | None, int | None, str | None]
"""(state in the scheduler's words, exit code, where they were read)."""
WRAPPER = 'rc=0; "$@" || rc=$?; printf "%s\\n" "$rc" >"$SCRIPTAST_EXIT_FILE"; exit "$rc"'
"""Runs a process job and writes its exit code where `watch` finds it (no pipe hides it)."""
WRAPPER_ARGV = ("/bin/sh", "-c", WRAPPER, "scriptast-job")
"""The wrapper's argv before the job's own: how its process is known in the process table."""


def is_wrapper(argv: list[bytes]) -> bool:
    """A process's argv (as /proc/PID/cmdline splits it) is scriptast's wrapper's."""
    return argv[: len(WRAPPER_ARGV)] == [word.encode() for word in WRAPPER_ARGV]


class JobFiles(Protocol):
    """A job as emit wrote it: its work dir, its script there and its job_spec.json."""

    @property
    def work_dir(self) -> str: ...

    @property
    def script(self) -> str: ...

    @property
    def spec(self) -> JobSpec: ...


class Place(Protocol):
    """Where a job's files are staged and its processes run: this machine, or a cluster's
    folder reached over a transport (ssh). The same launch kinds run at either."""

    @property
    def where(self) -> str | None:
        """The host (None: this machine)."""
        ...

    @property
    def folder(self) -> str:
        """The job's folder there (its work dir here; remote_work_dir on a cluster)."""
        ...

    @property
    def script(self) -> str:
        """The script's path there."""
        ...

    def stage(self) -> None:
        """The job's files there, as emit wrote them (sent and checked; here: nothing)."""
        ...

    def make_folders(self, paths: Sequence[str]) -> None:
        """The folder of each path, there."""
        ...

    def start(self, argv: Sequence[str], env: Mapping[str, str], out: str, err: str) -> int:
        """`argv` started there in its own session through the exit-code wrapper, from the
        folder, its output into `out` and `err`: its process id."""
        ...

    def exists(self, path: str) -> bool:
        """Something stands at `path` there (a link too)."""
        ...

    def running(self, pid: int) -> bool:
        """The process started as `pid` has not ended."""
        ...

    def stop(self, pid: int) -> None:
        """The process group of `pid` sent SIGTERM (gone already: nothing)."""
        ...

    def exit_code(self, pid: int) -> int | None:
        """The exit code of the process started as `pid` (its wrapper's record; None: not
        known yet)."""
        ...

    def local(self, path: str) -> str:
        """Where a log there is read on this machine once the job is over."""
        ...


class LaunchChoice(msgspec.Struct, frozen=True, kw_only=True):
    """What `run` was asked for that bears on the launch: a persistent allocation (None: as
    job_spec.json says), its time, how long one is waited for, and its idle release."""

    persistent: bool | None = None
    alloc_time: str | None = None
    alloc_wait: float | None = None
    alloc_idle: float = 0.0
    time_limit_seconds: float | None = None


class Seen(msgspec.Struct, frozen=True, kw_only=True):
    """What one poll showed of a job: over, running (and for how long more), or running again
    after the scheduler requeued it (its logs are then read anew from their start)."""

    over: bool
    running: bool = False
    time_left: float | None = None
    rerun: bool = False


class Tracker(Protocol):
    """A launched job as its backend follows it: the ids it is watched by in the shared queue
    poll, what a poll shows of it, whether it ended without the scheduler (a process here),
    its cancel and how its end is read."""

    def queue_ids(self) -> list[str]: ...

    def observe(self, rows: dict[str, QueueRow] | None) -> Seen | None:
        """Take a poll's rows (None: the poll failed): what they show of the job (None:
        nothing they decide)."""
        ...

    def ended(self) -> bool:
        """It ended, seen without the scheduler or a transport (a process of this machine)."""
        ...

    def cancel(self) -> None:
        """Stop the job, and only it."""
        ...

    def end(self, final: Final | None, exit_line: int | None) -> Ending:
        """(state, exit code, where read) once it is over (`exit_line`: the script's own last
        line's exit code, when it printed one)."""
        ...


class Launcher(Protocol):
    """A backend's launcher: how it launches a job and follows it again from its record, and
    what it would run (its dry run, the same commands `launch` runs)."""

    def kind(self, job: JobFiles, choice: LaunchChoice) -> Launch:
        """How `job` would be launched."""
        ...

    def dry_run(self, job: JobFiles, choice: LaunchChoice) -> list[list[str]]:
        """Every command a launch of `job` runs, in order."""
        ...

    def log_files(self, job: JobFiles, job_id: str) -> tuple[str, str | None]:
        """The job's output and error logs (None: stderr goes to the output) once it has
        `job_id`, at its place (a cluster's paths for a remote job)."""
        ...

    def launch(
        self,
        job: JobFiles,
        place: Place,
        client: SchedulerClient | None,
        choice: LaunchChoice,
        record: RunRecord,
    ) -> Tracker:
        """Launch `job` at `place` (staged there first), filling `record` (its ids, logs,
        command, launch kind and notes): the tracker that follows it."""
        ...

    def follow(
        self, job: JobFiles, record: RunRecord, place: Place, client: SchedulerClient | None
    ) -> Tracker:
        """The tracker of a job another run launched, from its record."""
        ...


@runtime_checkable
class ArrayLauncher(Protocol):
    """A launcher that also submits the tasks of one job array with one command (a backend
    whose scheduler has arrays: Slurm)."""

    def array_of(self, job: JobFiles, choice: LaunchChoice) -> str | None:
        """The array script `job` is submitted with as a task (None: it runs alone)."""
        ...

    def check_array(self, jobs: Sequence[JobFiles]) -> None:
        """RunError unless the tasks `jobs` name one array script, it is the one emit wrote,
        and each task's branch of it runs that task's own script."""
        ...

    def array_command(self, jobs: Sequence[JobFiles], client: SchedulerClient | None) -> list[str]:
        """The one command that submits the tasks `jobs` of one array."""
        ...

    def task_logs(self, job: JobFiles, array_id: str) -> tuple[str, str]:
        """A task's output and error logs once its array has `array_id`."""
        ...

    def launch_array(
        self,
        jobs: Sequence[JobFiles],
        client: SchedulerClient | None,
        records: Sequence[RunRecord],
    ) -> list[Tracker]:
        """Submit the tasks `jobs` of one array with one command, filling their records:
        their trackers."""
        ...
