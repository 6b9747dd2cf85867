"""Submit one work_dir's job: checked against its digests under emit's lock, then launched the way
its scheduler and transport say (a batch job, a step of a persistent allocation, a process here,
or a job on a remote cluster), and its first run record written before anything else happens."""

from __future__ import annotations

from scriptast.contract.axes import LOCAL, WorkflowType
from scriptast.errors import RunError
from scriptast.executor.followed import Followed
from scriptast.executor.job_files import LoadedJob
from scriptast.executor.launch.batch import launch_batch
from scriptast.executor.launch.common import check_files, check_writable
from scriptast.executor.launch.process import docker_command, launch_process
from scriptast.executor.launch.remote import RemoteContext, launch_remote
from scriptast.executor.launch.step import Allocated, alloc_time, allocation_for, launch_step
from scriptast.executor.options import RunOptions, Writer, timeouts
from scriptast.executor.session import Session
from scriptast.schedulers.backend import PROCESS
from scriptast.schedulers.registry import scheduler
from scriptast.schedulers.slurm.allocation import ALLOCATION_NAME, AllocationParams, salloc_argv
from scriptast.workdir.write import WriteError, work_dir_held


def uses_allocation(job: LoadedJob, options: RunOptions) -> bool:
    """A job runs as a step of a persistent allocation when its scheduler has them and
    job_spec (or `--persistent`) says so (job_spec leaves a remote cluster's persistence to
    the executor: there only `--persistent`); never a launch script submit.py wrote: it cancels
    `${SLURM_JOB_ID}` on failure, which would end the whole allocation."""
    if not scheduler(job.spec.scheduler).allocations:
        return False
    if job.spec.workflow_type == WorkflowType.perf_sanity:
        return False
    wanted = options.persistent
    if wanted is None and job.spec.transport == LOCAL:
        wanted = job.spec.persistent_mode
    return bool(wanted) and job.spec.slurm_params is not None


def dry_run_commands(job: LoadedJob, options: RunOptions) -> list[list[str]]:
    """Every command `run` would run for this job, in order."""
    if scheduler(job.spec.scheduler).launch == PROCESS:
        return [docker_command(job)[0]]
    if uses_allocation(job, options):
        assert job.spec.slurm_params is not None
        wanted = AllocationParams.of(job.spec.slurm_params)
        return [
            ["squeue", "--noheader", "--me", "--name", ALLOCATION_NAME],
            salloc_argv(wanted, alloc_time(job, options)),
            ["env", "SLURM_JOB_ID=<allocation>", "bash", job.script],
        ]
    return [["sbatch", "--parsable", job.script]]


def submit(job: LoadedJob, session: Session, options: RunOptions, writer: Writer) -> Followed:
    """Submit the job, holding emit's lock from the digest check to the first record."""
    check_writable(job)
    allocation: Allocated | None = None
    if uses_allocation(job, options):
        assert session.client is not None
        allocation = allocation_for(job, session.client, options, timeouts(job, options)[0])
    try:
        with work_dir_held(job.work_dir) as pending:
            check_files(job, options)
            followed = _launch(job, session, options, writer, allocation)
            followed.save()
            if pending() is not None:
                followed.cancelled = True  # Ctrl-C or SIGTERM while it was being submitted
                followed.cancel()
    except WriteError as error:
        raise RunError(str(error)) from None
    return followed


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
    if job.spec.workflow_type == WorkflowType.perf_sanity and job.spec.persistent_mode:
        followed.record.notes += (
            "submitted with sbatch: a launch script submit.py wrote cancels "
            "${SLURM_JOB_ID} on failure, which would end a persistent allocation",
        )
    return followed
