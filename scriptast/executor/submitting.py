"""The record a run writes before it submits (state SUBMITTING), and the job found again from it
when that run died between the scheduler accepting the job and recording its id (`kill -9`
right after sbatch returned): by this user's jobs of the job's name running this work dir's
script, or this work dir's wrapper process."""

from __future__ import annotations

import os
import posixpath

import msgspec

from scriptast.contract.axes import LOCAL
from scriptast.contract.run_record import RunRecord
from scriptast.errors import RunError
from scriptast.executor.job_files import LoadedJob, as_submitted
from scriptast.schedulers.launching import is_wrapper
from scriptast.schedulers.queue_client import SchedulerClient
from scriptast.schedulers.registry import scheduler

SUBMITTING = "SUBMITTING"
"""run.json's state from just before the job is submitted until its id is recorded."""


def found_again(job: LoadedJob, record: RunRecord, client: SchedulerClient | None) -> RunRecord:
    """`record` (state SUBMITTING) with the id of the job its run submitted and never recorded,
    or RunError saying nothing of that submission is running."""
    remote = job.spec.transport != LOCAL
    submitted = as_submitted(job)
    folder, name, script = submitted.folder, submitted.name, submitted.script
    task = job.spec.array if record.launch == "array" else None
    if task is not None and client is not None:
        return _task_found_again(job, record, client)
    batch = record.launch == "batch" or record.submit_command[:1] == ("sbatch",)
    if batch and client is not None:
        ids = client.find(name, script)
        if len(ids) == 1:
            out, err = scheduler(job.spec.scheduler).launcher().log_files(job, ids[0])
            found = msgspec.structs.replace(record, job_id=ids[0], state="PENDING")
            if remote:
                found.remote_out_log, found.remote_err_log = out, err
                found.out_log = posixpath.join(job.work_dir, posixpath.basename(out))
                found.err_log = posixpath.join(job.work_dir, posixpath.basename(err or out))
            else:
                found.out_log, found.err_log = out, err
            found.notes += (
                f"job {ids[0]} found in the queue by its name and script: the run that "
                "submitted it ended before it recorded the job",
            )
            return found
        if len(ids) > 1:
            raise RunError(
                f"{job.work_dir}: its run ended while submitting, and {len(ids)} jobs of its name "
                f"and script are queued ({', '.join(ids)}): cancel the ones you do not want "
                "with scancel, then run it again with --again"
            )
    elif not batch and not remote:
        pid = _wrapper_in(folder)
        if pid is not None:
            out, err = (os.readlink(f"/proc/{pid}/fd/{n}") for n in (1, 2))
            allocation = _environment(pid).get("SLURM_JOB_ID")
            found = msgspec.structs.replace(
                record, pid=pid, state="RUNNING", out_log=out, job_id=allocation,
                err_log=err if err != out else None, allocation_id=allocation,
            )  # fmt: skip
            found.notes += (f"process {pid} found running this work dir's job",)
            return found
    raise RunError(
        f"{job.work_dir}: its run ended while submitting, and no job of it is running: run it "
        "again with --again"
    )


def _task_found_again(job: LoadedJob, record: RunRecord, client: SchedulerClient) -> RunRecord:
    """A job array's task whose run ended between the array's sbatch and the task's record:
    found by the array's name and script and the task's index."""
    from scriptast.schedulers.launching import ArrayLauncher

    task = job.spec.array
    launcher = scheduler(job.spec.scheduler).launcher()
    assert task is not None and isinstance(launcher, ArrayLauncher)
    ids = [i for i in client.find(task.name, task.script, tasks=True)
           if i.endswith(f"_{task.index}")]  # fmt: skip
    if len(ids) > 1:
        raise RunError(
            f"{job.work_dir}: its run ended while submitting, and {len(ids)} tasks of its job "
            f"array are queued ({', '.join(ids)}): cancel the ones you do not want with "
            "scancel, then run it again with --again"
        )
    if not ids:
        raise RunError(
            f"{job.work_dir}: its run ended while submitting, and no task of its job array is "
            "running: run it again with --again"
        )
    out, err = launcher.task_logs(job, ids[0].split("_")[0])
    found = msgspec.structs.replace(record, job_id=ids[0], state="PENDING", out_log=out,
                                    err_log=err)  # fmt: skip
    found.notes += (
        f"task {ids[0]} found in the queue by its array's name and script: the run that "
        "submitted it ended before it recorded the task",
    )
    return found


def _environment(pid: int) -> dict[str, str]:
    with open(f"/proc/{pid}/environ", "rb") as stream:
        pairs = [item.partition(b"=") for item in stream.read().split(b"\0") if item]
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, _, v in pairs}


def _wrapper_in(folder: str) -> int | None:
    """The process of scriptast's wrapper whose working folder is `folder` (this user's)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as stream:
                argv = stream.read().split(b"\0")
            if not is_wrapper(argv):
                continue
            if os.path.realpath(os.readlink(f"/proc/{entry}/cwd")) == os.path.realpath(folder):
                return int(entry)
        except OSError:
            continue
    return None
