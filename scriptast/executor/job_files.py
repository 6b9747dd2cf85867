"""What `run` reads of a work_dir before it submits: job_spec.json through the type that wrote it,
the digests of the files written with it, and the log files it names, with the job's id in them."""

from __future__ import annotations

import errno
import hashlib
import os
import posixpath
from typing import TYPE_CHECKING

import msgspec

from scriptast.common.text_files import regular_file_bytes
from scriptast.contract.axes import LOCAL
from scriptast.contract.job_spec import JobSpec
from scriptast.contract.work_dir_names import JOB_SPEC
from scriptast.errors import RunError
from scriptast.results.store.history import HistoryBaseline

if TYPE_CHECKING:  # read only when a job names references (its YAML reader is costly)
    from scriptast.results.reference_file import References

MOST_BYTES = 64 * 1024 * 1024
"""A job_spec.json or script larger than this is not one emit wrote."""


class LoadedJob(msgspec.Struct, frozen=True, kw_only=True):
    """A work_dir's job as emit wrote it: the manifest and the script it names (local path),
    the references file its figures are held against (`--reference`, else the request's), and
    the history its figures without a reference are held against (`--baseline history`, else
    the request's `baseline`)."""

    work_dir: str
    spec: JobSpec
    script: str
    references: References | None = None
    history: HistoryBaseline | None = None

    @property
    def name(self) -> str:
        """The job's short name in tables and prefixes: the work_dir's last component."""
        return posixpath.basename(self.work_dir.rstrip("/")) or self.work_dir


def read_regular(path: str, what: str, *, follow_links: bool = True) -> bytes:
    """The bytes of a regular file of at most MOST_BYTES (never a FIFO or a device: no
    blocking open; `follow_links` False: never a link), or RunError naming it."""
    try:
        return regular_file_bytes(path, MOST_BYTES, follow_links=follow_links)[0]
    except FileNotFoundError:
        raise RunError(f"no {what} at {path}") from None
    except OSError as error:
        if error.errno in (errno.EINVAL, errno.EFBIG):
            raise RunError(f"{what} {path} is {error.strerror}") from None
        if error.errno == errno.ELOOP:
            raise RunError(f"{what} {path} is a symbolic link: it is never read through; "
                           "emit the job again") from None  # fmt: skip
        raise RunError(f"cannot read {what} {path}: {error.strerror}") from None


def load_job(work_dir: str, force: bool = False) -> LoadedJob:
    """work_dir's job_spec.json as a JobSpec, or RunError: missing, unreadable, not written by
    this version of scriptast (then: emit it again), written for another folder (a copy), or
    naming files outside the work dir (unless `force`)."""
    folder = os.path.abspath(work_dir)
    if not os.path.isdir(folder):
        raise RunError(f"work_dir {folder} is not a folder: give the work_dir that emit wrote")
    path = posixpath.join(folder, JOB_SPEC)
    if not os.path.lexists(path):
        raise RunError(
            f"no {JOB_SPEC} in {folder}: write the job first (scriptast emit ... --work-dir "
            f"{folder})"
        )
    data = read_regular(path, JOB_SPEC, follow_links=False)
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
    loaded = LoadedJob(work_dir=folder, spec=spec, script=script)
    _refuse_a_copy(loaded, path)
    outside = _outside_files(loaded)
    if outside and not force:
        raise RunError(
            f"{path} names files outside its work dir ({'; '.join(outside)}): emit the job "
            "again, or run it as it is with --force"
        )
    return loaded


def _refuse_a_copy(job: LoadedJob, path: str) -> None:
    """A job_spec.json written for another folder (this one is a copy, or was moved) names
    that folder's script, logs and job: it is never run, watched or cancelled from here."""
    written_for = job.spec.work_dir
    if written_for is not None and os.path.realpath(written_for) != os.path.realpath(job.work_dir):
        raise RunError(
            f"{path} was written for work_dir {written_for}: this folder is a copy of it, or "
            "was moved, and never acts on that folder's job; emit the job again here"
        )


def _within(path: str, folder: str, real: bool) -> bool:
    if real:
        path, folder = os.path.realpath(path), os.path.realpath(folder)
    else:
        path, folder = posixpath.normpath(path), posixpath.normpath(folder)
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _outside_files(job: LoadedJob) -> list[str]:
    """The files job_spec.json names that lie outside the folders they belong in: the script,
    the extra files and (a local job) the logs in the work dir; a remote job's logs in its
    cluster work dir. Each named with what it is."""
    spec, folder = job.spec, job.work_dir
    found = [f"script {job.script}"] if not _within(job.script, folder, True) else []
    found += [f"extra file {e}" for e in spec.extra_files if not _within(e, folder, True)]
    logs = [spec.logs.output, spec.logs.error, spec.log_file]
    remote = spec.remote_work_dir if spec.transport != LOCAL else None
    for log in (p for p in logs if p):
        parent = posixpath.dirname(log)  # a name with %j: its folder decides
        if not (_within(parent, remote, False) if remote else _within(parent, folder, True)):
            found.append(f"log {log}")
    return found


def destinations_outside(job: LoadedJob) -> list[str]:
    """extra_file_destinations on the cluster outside remote_work_dir and remote_repo_path
    (a job_spec that would overwrite `~/.ssh/authorized_keys` there): never uploaded."""
    spec = job.spec
    allowed = [p for p in (spec.remote_work_dir, spec.remote_repo_path) if p]
    return [
        destination
        for destination in spec.extra_file_destinations.values()
        if not any(_within(destination, folder, False) for folder in allowed)
    ]


def script_elsewhere_torn(job: LoadedJob) -> str | None:
    """When job_spec names a script outside the work dir (allowed with --force), why it is
    not the script emit wrote (its digest is held against emit's, always); else None."""
    if posixpath.relpath(job.script, job.work_dir) in job.spec.files:
        return None
    expected = job.spec.files.get(posixpath.basename(job.script))
    try:
        data = read_regular(job.script, "script", follow_links=False)
    except RunError as error:
        return str(error)
    if hashlib.sha256(data).hexdigest() != expected:
        return f"script {job.script} does not hold what emit wrote as {job.spec.script_name}"
    return None


def torn_files(job: LoadedJob) -> list[str]:
    """The files of job_spec's `files` that are missing or no longer hold what emit wrote."""
    torn = []
    for name, digest in sorted(job.spec.files.items()):
        path = posixpath.join(job.work_dir, name)
        try:
            data = read_regular(path, name, follow_links=False)
        except RunError:
            torn.append(f"{name} (missing or unreadable)")
            continue
        if hashlib.sha256(data).hexdigest() != digest:
            torn.append(f"{name} (changed since emit)")
    return torn


class Submitted(msgspec.Struct, frozen=True, kw_only=True):
    """What the scheduler and the process table show of a job run submitted: the folder it
    runs in (a remote job's cluster work dir), its name, and its script's path as submitted."""

    folder: str
    name: str
    script: str


def as_submitted(job: LoadedJob) -> Submitted:
    """The job as run submits it (the script goes to the cluster work dir of a remote job)."""
    remote = job.spec.transport != LOCAL
    folder = (job.spec.remote_work_dir or job.work_dir) if remote else job.work_dir
    script = posixpath.join(folder, posixpath.basename(job.script)) if remote else job.script
    name = job.spec.logs.job_name or posixpath.basename(job.script)
    return Submitted(folder=folder, name=name, script=script)
