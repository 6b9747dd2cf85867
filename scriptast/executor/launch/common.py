"""What every launch kind does before and after it submits: the work dir writable and its files
as emit wrote them, the log folders made, and the run record's first fields."""

from __future__ import annotations

import os
import posixpath
import socket
from typing import BinaryIO

from scriptast.common.new_files import created_anew
from scriptast.contract.run_record import RECORD_VERSION, RunRecord
from scriptast.contract.work_dir_names import RUN_FILE
from scriptast.errors import RunError
from scriptast.executor.followed_job import utc_now
from scriptast.executor.job_files import LoadedJob, script_elsewhere_torn, torn_files
from scriptast.executor.options import RunOptions


def new_record(job: LoadedJob, **fields: object) -> RunRecord:
    """The record of a submission of `job`, now, from this host."""
    return RunRecord(
        version=RECORD_VERSION,
        work_dir=job.work_dir,
        execution_scenario=job.spec.execution_scenario,
        script=job.script,
        submitted_at=utc_now(),
        host=socket.gethostname(),
        **fields,  # type: ignore[arg-type]
    )


def make_folders(*paths: str | None) -> None:
    """The folder of each log path (here), or RunError."""
    for path in paths:
        if path:
            try:
                os.makedirs(posixpath.dirname(path), exist_ok=True)
            except OSError as error:
                raise RunError(
                    f"cannot create the log folder of {path}: {error.strerror}"
                ) from None


def fresh_log(path: str, same_as: str | None = None) -> BinaryIO:
    """A new, empty log at `path` for a process job to write: what stood there (an earlier
    run's log, or a link planted to make the job write or truncate another file) is removed,
    never opened, and the file is created exclusively. `same_as`: the output log, when the
    error log is the same file (then it is opened for appending, already fresh)."""
    if same_as == path:
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC)
        return os.fdopen(descriptor, "ab")
    return os.fdopen(created_anew(path), "wb")


def check_writable(job: LoadedJob) -> None:
    """run.json can be recorded in the work dir, or RunError (checked before anything runs)."""
    probe = posixpath.join(job.work_dir, RUN_FILE)
    if not os.access(job.work_dir, os.W_OK) or (
        os.path.lexists(probe) and not os.access(probe, os.W_OK)
    ):
        raise RunError(f"work_dir {job.work_dir} is not writable: run.json cannot be recorded")


def check_files(job: LoadedJob, options: RunOptions) -> None:
    """Refuse a set whose files no longer match their digests (unless --force), and a script
    job_spec names outside the work dir that is not the one emit wrote (even with --force)."""
    elsewhere = script_elsewhere_torn(job)
    if elsewhere is not None:
        raise RunError(f"{job.work_dir}: {elsewhere}: not submitted; emit the job again")
    torn = torn_files(job)
    if torn and not options.force:
        raise RunError(
            f"{job.work_dir}: {', '.join(torn)}: the set emit wrote was torn or edited; emit it "
            "again, or run it as it is with --force"
        )
