"""The batch launch kind: the script submitted to the scheduler's queue from the work dir (`sbatch
--parsable`), its logs the files job_spec.json names with the job id in them."""

from __future__ import annotations

from scriptast.contract.run_record import RunRecord
from scriptast.executor.followed_job import BatchFollowed
from scriptast.executor.job_files import LoadedJob, log_files
from scriptast.executor.launch.common import make_folders, new_record
from scriptast.executor.options import Writer
from scriptast.schedulers.backend import SchedulerClient


def launch_batch(job: LoadedJob, client: SchedulerClient, writer: Writer) -> BatchFollowed:
    """Submit the script; the followed job, PENDING."""
    logs = job.spec.logs
    make_folders(logs.output, logs.error)
    job_id = client.submit(job.script, cwd=job.work_dir)
    out, err = log_files(job, job_id)
    record = new_record(
        job,
        submit_command=tuple(client.submit_argv(job.script)),
        out_log=out,
        err_log=err,
        job_id=job_id,
        state="PENDING",
        launch="batch",
    )
    return BatchFollowed(job, record, writer, client)


def follow_batch(
    job: LoadedJob, record: RunRecord, client: SchedulerClient, writer: Writer
) -> BatchFollowed:
    """A batch job another `scriptast run` submitted."""
    return BatchFollowed(job, record, writer, client)
