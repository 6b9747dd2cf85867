"""This machine as a job's place: its files are the work dir's as emit wrote them, its processes
started here in their own session through the exit-code wrapper, their output straight into
the logs."""

from __future__ import annotations

import contextlib
import os
import posixpath
import signal
import subprocess
from collections.abc import Mapping, Sequence

from scriptast.common.processes import alive
from scriptast.contract.work_dir_names import EXIT_FILE
from scriptast.errors import RunError
from scriptast.executor.job_files import LoadedJob
from scriptast.executor.launch.common import fresh_log, make_folders
from scriptast.schedulers.launching import WRAPPER_ARGV


class LocalPlace:
    """The job's work dir on this machine; the processes this run started are kept, so that
    their own exit status is read (a process another run started: by its pid and run.exit)."""

    def __init__(self, job: LoadedJob) -> None:
        self.job = job
        self.started: dict[int, subprocess.Popen[bytes]] = {}

    @property
    def where(self) -> str | None:
        return None

    @property
    def folder(self) -> str:
        return self.job.work_dir

    @property
    def script(self) -> str:
        return self.job.script

    def stage(self) -> None:
        """The files are where emit wrote them (their digests were checked before)."""

    def make_folders(self, paths: Sequence[str]) -> None:
        make_folders(*paths)

    def exists(self, path: str) -> bool:
        return os.path.lexists(path)

    def _exit_file(self) -> str:
        return posixpath.join(self.job.work_dir, EXIT_FILE)

    def start(self, argv: Sequence[str], env: Mapping[str, str], out: str, err: str) -> int:
        make_folders(out, err)
        exit_file = self._exit_file()
        if os.path.lexists(exit_file):
            os.unlink(exit_file)
        environment = {**env, "SCRIPTAST_EXIT_FILE": exit_file}
        try:
            with fresh_log(out) as out_stream, fresh_log(err, out) as err_stream:
                process = subprocess.Popen(
                    [*WRAPPER_ARGV, *argv],
                    stdout=out_stream,
                    stderr=err_stream if err != out else subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    cwd=self.job.work_dir,
                    env=environment,
                    start_new_session=True,
                )
        except OSError as error:
            raise RunError(
                f"cannot start {argv[0]} for {self.job.work_dir}: {error.strerror}"
            ) from None
        self.started[process.pid] = process
        return process.pid

    def running(self, pid: int) -> bool:
        process = self.started.get(pid)
        if process is not None:
            return process.poll() is None
        return alive(pid)

    def stop(self, pid: int) -> None:
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGTERM)

    def exit_code(self, pid: int) -> int | None:
        code: int | None = None
        process = self.started.get(pid)
        if process is not None:
            returned = process.wait()
            code = 128 - returned if returned < 0 else returned
        with contextlib.suppress(OSError, ValueError), open(self._exit_file()) as stream:
            code = int(stream.read().strip())
        return code

    def local(self, path: str) -> str:
        return path
