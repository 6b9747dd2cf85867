"""Submit one work_dir's job: checked against its digests under emit's lock, then handed to its
backend's launcher at its place (this machine, or a cluster over its transport), and its first
run record written before anything else happens."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence

from scriptast.common.text_files import regular_file_bytes
from scriptast.contract.axes import LOCAL
from scriptast.contract.run_record import Launch, RunRecord, encode_record
from scriptast.contract.work_dir_names import RUN_FILE
from scriptast.errors import RunError
from scriptast.executor.followed_job import Followed, Setup
from scriptast.executor.job_files import LoadedJob
from scriptast.executor.launch.common import check_files, check_writable, new_record
from scriptast.executor.launch.here import LocalPlace
from scriptast.executor.launch.remote import RemotePlace
from scriptast.executor.options import RunOptions, Writer, time_limit_seconds, timeouts
from scriptast.executor.session import Session
from scriptast.executor.submitting import SUBMITTING
from scriptast.schedulers.launching import ArrayLauncher, LaunchChoice, Launcher, Place
from scriptast.schedulers.registry import scheduler
from scriptast.workdir.files import WriteError, replace_file
from scriptast.workdir.journal import Replaced, put_back
from scriptast.workdir.write import work_dir_held


def launcher_of(job: LoadedJob) -> Launcher:
    """The launcher of the job's backend."""
    return scheduler(job.spec.scheduler).launcher()


def choice_of(job: LoadedJob, options: RunOptions) -> LaunchChoice:
    """What `run` was asked for that bears on the job's launch."""
    return LaunchChoice(persistent=options.persistent, alloc_time=options.alloc_time,
                        alloc_wait=timeouts(job, options)[0], alloc_idle=options.alloc_idle,
                        time_limit_seconds=time_limit_seconds(job))  # fmt: skip


def dry_run_commands(job: LoadedJob, options: RunOptions) -> list[list[str]]:
    """Every command `run` would run for this job, in order: its launcher's own account."""
    return launcher_of(job).dry_run(job, choice_of(job, options))


def place_of(job: LoadedJob, session: Session) -> Place:
    """Where the job's files are staged and its processes run: this machine, or its cluster
    over the session's transport (one place a job, made once)."""
    if job.spec.transport == LOCAL:
        return LocalPlace(job)
    assert session.transport is not None  # a remote job's session reaches its cluster
    return RemotePlace(job, session.transport)


def setup_of(place: Place, record: RunRecord, options: RunOptions) -> Setup:
    """How a job at `place` is read while it is followed."""
    return place.setup(record, options.fetch) if isinstance(place, RemotePlace) else Setup()


def submit(
    job: LoadedJob,
    session: Session,
    options: RunOptions,
    writer: Writer,
    refuse_live: Callable[[LoadedJob], None] | None = None,
) -> Followed:
    """Submit the job under emit's lock, held from the checks (the digests, and `refuse_live`:
    no other run of this work dir is live) through the launch to the record of the job's id:
    before the launcher is asked, run.json says a submission is under way (SUBMITTING), so a
    run killed right after the scheduler accepted the job leaves a record `watch` finds it
    from. A job that cannot be recorded is cancelled, and the error says so."""
    check_writable(job)
    launcher, choice = launcher_of(job), choice_of(job, options)
    try:
        with work_dir_held(job.work_dir) as pending:
            check_files(job, options)
            if refuse_live is not None:
                refuse_live(job)
            place = place_of(job, session)
            command = tuple(launcher.dry_run(job, choice)[-1])
            before = _journal(job, command, launcher.kind(job, choice))
            record = new_record(job, submit_command=(), out_log="", state="PENDING")
            try:
                tracker = launcher.launch(job, place, session.client, choice, record)
            except RunError:  # refused: nothing was submitted, the record is as it was
                _restore(job, before)
                raise
            followed = Followed(job, record, writer, tracker, setup_of(place, record, options))
            _record(followed)
            if pending() is not None:
                followed.cancelled = True  # Ctrl-C or SIGTERM while it was being submitted
                followed.record.notes += ("interrupted while submitting: cancelled",)
                followed.cancel()
    except WriteError as error:
        raise RunError(str(error)) from None
    return followed


def array_script_of(job: LoadedJob, options: RunOptions) -> str | None:
    """The array script `job` is submitted with as a task of its job array (None: alone)."""
    launcher = launcher_of(job)
    if not isinstance(launcher, ArrayLauncher):
        return None
    return launcher.array_of(job, choice_of(job, options))


def array_dry_run(jobs: Sequence[LoadedJob]) -> list[str]:
    """The one command that submits the tasks `jobs` of one job array."""
    launcher = launcher_of(jobs[0])
    assert isinstance(launcher, ArrayLauncher)
    return launcher.array_command(jobs, None)


def submit_array(
    jobs: Sequence[LoadedJob],
    session: Session,
    options: RunOptions,
    writers: Sequence[Writer],
    refuse_live: Callable[[LoadedJob], None] | None = None,
) -> list[Followed]:
    """Submit the tasks `jobs` of one job array with one sbatch: each work dir checked and
    its run.json saying a submission is under way (under its lock, one at a time), the array
    script checked against the digest its tasks' job_spec.json recorded, then the array
    submitted and each task's record written. A task that cannot be recorded is cancelled."""
    launcher = launcher_of(jobs[0])
    assert isinstance(launcher, ArrayLauncher)
    launcher.check_array(jobs)
    command = tuple(launcher.array_command(jobs, session.client))
    before: list[bytes | None] = []
    try:
        for job in jobs:
            check_writable(job)
            with work_dir_held(job.work_dir):
                check_files(job, options)
                if refuse_live is not None:
                    refuse_live(job)
                before.append(_journal(job, command, "array"))
        records = [new_record(job, submit_command=(), out_log="", state="PENDING") for job in jobs]
        try:
            trackers = launcher.launch_array(jobs, session.client, records)
        except RunError:  # refused: nothing was submitted, each record is as it was
            for job, earlier in zip(jobs, before, strict=False):
                _restore(job, earlier)
            raise
        followed = [
            Followed(job, record, writer, tracker, Setup())
            for job, record, writer, tracker in zip(jobs, records, writers, trackers, strict=True)
        ]
        for each in followed:
            with work_dir_held(each.job.work_dir):
                _record(each)
    except WriteError as error:
        raise RunError(str(error)) from None
    return followed


def _journal(job: LoadedJob, command: tuple[str, ...], kind: Launch) -> bytes | None:
    """run.json before the launcher is asked: a submission under way, with the command; the
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
        submit_command=command,
        out_log="",
        state=SUBMITTING,
        launch=kind,
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
