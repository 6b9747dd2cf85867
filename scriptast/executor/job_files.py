"""What `run` reads of a work_dir before it submits: job_spec.json through the type that wrote it,
the digests of the files written with it, and the log files it names, with the job's id in them."""

from __future__ import annotations

import errno
import hashlib
import os
import posixpath

import msgspec

from scriptast.common.text_files import regular_file_bytes
from scriptast.contract.job_spec import JobSpec
from scriptast.errors import RunError
from scriptast.results.reference_file import References

JOB_SPEC = "job_spec.json"
MOST_BYTES = 64 * 1024 * 1024
"""A job_spec.json or script larger than this is not one emit wrote."""


class LoadedJob(msgspec.Struct, frozen=True, kw_only=True):
    """A work_dir's job as emit wrote it: the manifest and the script it names (local path),
    and the references file its figures are held against (`--reference`, else the request's)."""

    work_dir: str
    spec: JobSpec
    script: str
    references: References | None = None

    @property
    def name(self) -> str:
        """The job's short name in tables and prefixes: the work_dir's last component."""
        return posixpath.basename(self.work_dir.rstrip("/")) or self.work_dir


def read_regular(path: str, what: str) -> bytes:
    """The bytes of a regular file of at most MOST_BYTES (never a FIFO or a device: no
    blocking open), or RunError naming it."""
    try:
        return regular_file_bytes(path, MOST_BYTES)[0]
    except FileNotFoundError:
        raise RunError(f"no {what} at {path}") from None
    except OSError as error:
        if error.errno in (errno.EINVAL, errno.EFBIG):
            raise RunError(f"{what} {path} is {error.strerror}") from None
        raise RunError(f"cannot read {what} {path}: {error.strerror}") from None


def load_job(work_dir: str) -> LoadedJob:
    """work_dir's job_spec.json as a JobSpec, or RunError: missing, unreadable, or not written
    by this version of scriptast (then: emit it again)."""
    folder = os.path.abspath(work_dir)
    if not os.path.isdir(folder):
        raise RunError(f"work_dir {folder} is not a folder: give the work_dir that emit wrote")
    path = posixpath.join(folder, JOB_SPEC)
    if not os.path.lexists(path):
        raise RunError(
            f"no {JOB_SPEC} in {folder}: write the job first (scriptast emit ... --work-dir "
            f"{folder})"
        )
    data = read_regular(path, JOB_SPEC)
    try:
        spec = msgspec.json.decode(data, type=JobSpec)
    except (msgspec.ValidationError, msgspec.DecodeError) as error:
        raise RunError(
            f"{path} was not written by this version of scriptast ({error}); emit the job "
            "again with this version"
        ) from None
    if not spec.files:
        raise RunError(
            f"{path} lists no file digests (an older scriptast wrote it); emit the job again"
        )
    script = spec.script_path or posixpath.join(folder, spec.script_name)
    return LoadedJob(work_dir=folder, spec=spec, script=script)


def torn_files(job: LoadedJob) -> list[str]:
    """The files of job_spec's `files` that are missing or no longer hold what emit wrote."""
    torn = []
    for name, digest in sorted(job.spec.files.items()):
        path = posixpath.join(job.work_dir, name)
        try:
            data = read_regular(path, name)
        except RunError:
            torn.append(f"{name} (missing or unreadable)")
            continue
        if hashlib.sha256(data).hexdigest() != digest:
            torn.append(f"{name} (changed since emit)")
    return torn


def log_files(job: LoadedJob, job_id: str) -> tuple[str, str | None]:
    """The job's output and error files (None: stderr goes to the output) once the scheduler
    gave it `job_id`, from the logs job_spec.json names (cluster paths for a remote job)."""
    logs = job.spec.logs
    if job.spec.scheduler != "slurm":
        return logs.output, logs.error
    name = logs.job_name or posixpath.basename(job.script)
    error = log_path(logs.error, job_id, name) if logs.error else None
    return log_path(logs.output, job_id, name), error


def log_path(name: str, job_id: str, job_name: str) -> str:
    """A log file name with sbatch's `%j`, `%x` and `%%` filled in (other `%` tokens stay)."""
    out = []
    index = 0
    while index < len(name):
        char = name[index]
        following = name[index + 1] if index + 1 < len(name) else ""
        if char == "%" and following in "jAx%" and following:
            out.append({"j": job_id, "A": job_id, "x": job_name, "%": "%"}[following])
            index += 2
        else:
            out.append(char)
            index += 1
    return "".join(out)
