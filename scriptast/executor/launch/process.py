"""The process launch kind: a job run on this machine in its own session (docker_cmd.sh, or the
script a process backend lowered it to), through a small wrapper that writes its exit code
where `watch` finds it; its output straight into the log."""

from __future__ import annotations

import os
import posixpath
import subprocess

from scriptast.contract.files import EXIT_FILE
from scriptast.contract.run_record import RunRecord
from scriptast.errors import RunError
from scriptast.executor.followed_job import DockerFollowed, ProcessFollowed
from scriptast.executor.job_files import LoadedJob, container_name
from scriptast.executor.launch.common import fresh_log, make_folders, new_record
from scriptast.executor.options import Writer

WRAPPER = 'rc=0; "$@" || rc=$?; printf "%s\\n" "$rc" >"$SCRIPTAST_EXIT_FILE"; exit "$rc"'
"""Runs a process job and writes its exit code where `watch` finds it (no pipe hides it)."""
WRAPPER_ARGV = ("/bin/sh", "-c", WRAPPER, "scriptast-job")
"""The wrapper's argv before the job's own: how its process is known in the process table."""


def is_wrapper(argv: list[bytes]) -> bool:
    """A process's argv (as /proc/PID/cmdline splits it) is scriptast's wrapper's."""
    return argv[: len(WRAPPER_ARGV)] == [word.encode() for word in WRAPPER_ARGV]


def start(job: LoadedJob, argv: list[str], out: str, err: str,
          env: dict[str, str]) -> subprocess.Popen[bytes]:  # fmt: skip
    """`argv` in its own session from the work dir, its output into `out` and `err`."""
    make_folders(out, err)
    exit_file = posixpath.join(job.work_dir, EXIT_FILE)
    if os.path.lexists(exit_file):
        os.unlink(exit_file)
    env = {**env, "SCRIPTAST_EXIT_FILE": exit_file}
    try:
        with fresh_log(out) as out_stream, fresh_log(err, out) as err_stream:
            return subprocess.Popen(
                [*WRAPPER_ARGV, *argv],
                stdout=out_stream,
                stderr=err_stream if err != out else subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=job.work_dir,
                env=env,
                start_new_session=True,
            )
    except OSError as error:
        raise RunError(f"cannot start {argv[0]} for {job.work_dir}: {error.strerror}") from None


def docker_command(job: LoadedJob) -> tuple[list[str], str, str]:
    """(argv, log file, container name) of a docker job."""
    if not job.spec.log_file:
        raise RunError(f"{job.work_dir}/job_spec.json names no log_file for its docker job")
    return ["bash", job.script], job.spec.log_file, container_name(job.spec.docker_cmd or "")


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


def process_command(job: LoadedJob) -> tuple[list[str], str, str, str | None]:
    """(argv, output log, error log, container name or None) of a job this machine runs as a
    process: docker_cmd.sh and its one container, or the script a backend lowered it to, with
    the logs job_spec.json names."""
    if job.spec.docker_cmd is not None:
        argv, log, name = docker_command(job)
        return argv, log, log, name
    logs = job.spec.logs
    return ["bash", job.script], logs.output, logs.error or logs.output, None


def launch_process(job: LoadedJob, writer: Writer) -> ProcessFollowed:
    """The job as a process here, its output straight into its logs (a docker job once
    docker's daemon answers)."""
    argv, out, err, name = process_command(job)
    if name is not None:
        docker_ready()
    process = start(job, argv, out, err, dict(os.environ))
    record = new_record(
        job,
        submit_command=tuple(argv),
        out_log=out,
        err_log=err if err != out else None,
        container_name=name,
        pid=process.pid,
        state="RUNNING",
        launch="process",
    )
    if name is None:
        return ProcessFollowed(job, record, writer, process)
    return DockerFollowed(job, record, writer, process)


def follow_process(job: LoadedJob, record: RunRecord, writer: Writer) -> ProcessFollowed:
    """A process job another `scriptast run` started (its process, and its exit file)."""
    if record.container_name is None:
        return ProcessFollowed(job, record, writer)
    return DockerFollowed(job, record, writer)
