"""Submit one work_dir's job: checked against its digests under emit's lock, then launched the way
its scheduler and transport say (a batch job, a step of a persistent allocation, a process here,
or a job on a remote cluster), and its first run record written before anything else happens."""

from __future__ import annotations

import posixpath
from collections.abc import Callable

from scriptast.common.text_files import regular_file_bytes
from scriptast.contract.axes import LOCAL
from scriptast.contract.files import RUN_FILE
from scriptast.contract.run_record import Launch, encode_record
from scriptast.errors import RunError
from scriptast.executor.followed_job import Followed
from scriptast.executor.job_files import LoadedJob
from scriptast.executor.journal import SUBMITTING
from scriptast.executor.launch.batch import launch_batch
from scriptast.executor.launch.common import check_files, check_writable, new_record
from scriptast.executor.launch.process import launch_process, process_command
from scriptast.executor.launch.remote import RemoteContext, launch_remote
from scriptast.executor.launch.step import Allocated, alloc_time, allocation_for, launch_step
from scriptast.executor.options import RunOptions, Writer, timeouts
from scriptast.executor.session import Session
from scriptast.schedulers.backend import PROCESS
from scriptast.schedulers.registry import scheduler
from scriptast.workdir.files import WriteError, replace_file
from scriptast.workdir.journal import Replaced, put_back
from scriptast.workdir.write import work_dir_held


def uses_allocation(job: LoadedJob, options: RunOptions) -> bool:
    """A job runs as a step of a persistent allocation when its scheduler has them and
    job_spec (or `--persistent`) says so (job_spec leaves a remote cluster's persistence to
    the executor: there only `--persistent`); never a launch script submit.py wrote: it cancels
    `${SLURM_JOB_ID}` on failure, which would end the whole allocation (its job_spec.json says
    so: `allocation_refused`)."""
    if scheduler(job.spec.scheduler).allocations is None:
        return False
    if job.spec.allocation_refused:
        return False
    wanted = options.persistent
    if wanted is None and job.spec.transport == LOCAL:
        wanted = job.spec.persistent_mode
    return bool(wanted) and job.spec.slurm_params is not None


def launch_kind(job: LoadedJob, options: RunOptions) -> Launch:
    """How run launches `job`: as its scheduler runs jobs (a process here), over the transport
    to a cluster, as a step of a persistent allocation, or as a batch job."""
    if scheduler(job.spec.scheduler).launch == PROCESS:
        return "process"
    if job.spec.transport != LOCAL:
        return "remote"
    return "step" if uses_allocation(job, options) else "batch"


def dry_run_commands(job: LoadedJob, options: RunOptions) -> list[list[str]]:
    """Every command `run` would run for this job, in order."""
    backend = scheduler(job.spec.scheduler)
    if backend.launch == PROCESS:
        return [process_command(job)[0]]
    if uses_allocation(job, options):
        assert job.spec.slurm_params is not None and backend.allocations is not None
        return backend.allocations.dry_run(job.spec.slurm_params, alloc_time(job, options),
                                           job.script)  # fmt: skip
    assert backend.submit_command is not None  # a backend that queues jobs submits them
    return [backend.submit_command(job.script)]


def submit(
    job: LoadedJob,
    session: Session,
    options: RunOptions,
    writer: Writer,
    refuse_live: Callable[[LoadedJob], None] | None = None,
) -> Followed:
    """Submit the job under emit's lock, held from the checks (the digests, and `refuse_live`:
    no other run of this work dir is live) through the allocation (a refused run takes none)
    and the submission to the record of the job's id: before the scheduler is asked, run.json
    says a submission is under way (SUBMITTING), so a run killed right after the scheduler
    accepted the job leaves a record `watch` finds it from. A job that cannot be recorded is
    cancelled, and the error says so."""
    check_writable(job)
    try:
        with work_dir_held(job.work_dir) as pending:
            check_files(job, options)
            if refuse_live is not None:
                refuse_live(job)
            allocation: Allocated | None = None
            if uses_allocation(job, options):
                assert session.client is not None
                wait = timeouts(job, options)[0]
                allocation = allocation_for(job, session.client, options, wait)
            before = _journal(job, options)
            try:
                followed = _launch(job, session, options, writer, allocation)
            except RunError:  # refused: nothing was submitted, the record is as it was
                _restore(job, before)
                raise
            _record(followed)
            if pending() is not None:
                followed.cancelled = True  # Ctrl-C or SIGTERM while it was being submitted
                followed.record.notes += ("interrupted while submitting: cancelled",)
                followed.cancel()
    except WriteError as error:
        raise RunError(str(error)) from None
    return followed


def _journal(job: LoadedJob, options: RunOptions) -> bytes | None:
    """run.json before the scheduler is asked: a submission under way, with the command; the
    record it replaced (None: there was none)."""
    path = posixpath.join(job.work_dir, RUN_FILE)
    try:
        before: bytes | None = regular_file_bytes(path, follow_links=False)[0]
    except FileNotFoundError:
        before = None
    except OSError as error:
        raise RunError(f"cannot read {path}: {error.strerror}: nothing was submitted") from None
    record = new_record(
        job,
        submit_command=tuple(dry_run_commands(job, options)[-1]),
        out_log="",
        state=SUBMITTING,
        launch=launch_kind(job, options),
        notes=("submitting: a run that ends before it records the job's id leaves this; "
               "'scriptast watch' finds the job by its name and script",),
    )  # fmt: skip
    try:
        replace_file(path, encode_record(record))
    except WriteError as error:
        raise RunError(f"{error}: nothing was submitted") from None
    return before


def _restore(job: LoadedJob, before: bytes | None) -> None:
    """run.json as it was before a refused submission (work_dir's journal puts it back)."""
    put_back(Replaced(path=posixpath.join(job.work_dir, RUN_FILE), before=before))


def _record(followed: Followed) -> None:
    """The first record of a submitted job; a job that cannot be recorded is cancelled."""
    try:
        followed.save()
    except WriteError as error:
        followed.cancelled = True
        followed.cancel()
        ident = f"job {followed.record.job_id}" if followed.record.job_id else "the job"
        raise RunError(f"{error}: {ident} was cancelled, since it could not be recorded") from None


def _launch(
    job: LoadedJob,
    session: Session,
    options: RunOptions,
    writer: Writer,
    allocation: Allocated | None,
) -> Followed:
    """The launch kind of this job: its scheduler's (a process here, or a batch job), over its
    transport (a remote cluster), in an allocation or not."""
    if scheduler(job.spec.scheduler).launch == PROCESS:
        return launch_process(job, writer)
    client, transport = session.client, session.transport
    assert client is not None and transport is not None
    if job.spec.transport != LOCAL:
        context = RemoteContext(job, transport)
        return launch_remote(context, client, options, writer, allocation)
    if allocation is not None:
        return launch_step(job, client, allocation, writer)
    followed = launch_batch(job, client, writer)
    if job.spec.allocation_refused and job.spec.persistent_mode:
        followed.record.notes += (f"submitted with sbatch: {job.spec.allocation_refused}",)
    return followed
