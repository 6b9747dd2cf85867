"""The docker backend's launcher: docker_cmd.sh run as a process here once docker's daemon
answers, its one container (by the name emit gave it) killed on a cancel before the process."""

from __future__ import annotations

import contextlib
import shlex
import subprocess

from scriptast.contract.run_record import RunRecord
from scriptast.errors import RunError
from scriptast.schedulers.launching import JobFiles, LaunchChoice, Place, Tracker
from scriptast.schedulers.process_launcher import ProcessLauncher
from scriptast.schedulers.queue_client import SchedulerClient
from scriptast.schedulers.tracking import ProcessTracker


def container_name(docker_cmd: str) -> str:
    """The `--name` of the docker command emit wrote (so that only this container is killed)."""
    try:
        words = shlex.split(docker_cmd)
    except ValueError:
        words = []
    for index, word in enumerate(words[:-1]):
        if word == "--name":
            return words[index + 1]
    raise RunError("the docker command in job_spec.json has no --name: emit the job again")


def docker_ready() -> None:
    """docker answers for a daemon that takes this user's commands, or RunError with docker's
    own words (not running, permission denied, not installed): nothing is started."""
    try:
        done = subprocess.run(
            ["docker", "version", "--format", "{{.Server.Version}}"],
            capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except FileNotFoundError:
        raise RunError("docker is not installed here (no docker on PATH)") from None
    except subprocess.TimeoutExpired:
        raise RunError("the docker daemon did not answer in 60 s: is it running?") from None
    if done.returncode != 0 or not done.stdout.strip():
        said = (done.stderr.strip().splitlines() or ["no answer"])[-1]
        hint = "start it (systemctl start docker)"
        if "permission denied" in said:
            hint = "add yourself to the docker group (then log in again), or use rootless docker"
        raise RunError(f"docker cannot reach its daemon: {said}: {hint}, then run again")


class DockerTracker(ProcessTracker):
    """docker_cmd.sh's process: a cancel kills its one container, then the process."""

    def __init__(self, place: Place, record: RunRecord, container: str) -> None:
        super().__init__(place, record)
        self.container = container

    def cancel(self) -> None:
        # the container this work dir's docker_cmd names, never another a run.json names (a
        # record found again from the process names none: the work dir's own is meant)
        if self.container and self.record.container_name in (None, self.container):
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                subprocess.run(["docker", "kill", self.container], capture_output=True,
                               timeout=60, stdin=subprocess.DEVNULL)  # fmt: skip
        super().cancel()


class DockerLauncher(ProcessLauncher):
    """docker_cmd.sh as a process, its log the file job_spec.json names."""

    def log_files(self, job: JobFiles, job_id: str) -> tuple[str, str | None]:
        if not job.spec.log_file:
            raise RunError(f"{job.work_dir}/job_spec.json names no log_file for its docker job")
        return job.spec.log_file, None

    def ready(self, job: JobFiles) -> None:
        container_name(job.spec.docker_cmd or "")
        docker_ready()

    def launch(
        self,
        job: JobFiles,
        place: Place,
        client: SchedulerClient | None,
        choice: LaunchChoice,
        record: RunRecord,
    ) -> Tracker:
        record.container_name = container_name(job.spec.docker_cmd or "")
        return super().launch(job, place, client, choice, record)

    def follow(
        self, job: JobFiles, record: RunRecord, place: Place, client: SchedulerClient | None
    ) -> Tracker:
        try:
            container = container_name(job.spec.docker_cmd or "")
        except RunError:
            container = ""  # no container of this work dir is known: none is killed
        return DockerTracker(place, record, container)


def launcher() -> DockerLauncher:
    """The docker backend's launcher."""
    return DockerLauncher()
