"""Act only on what this user submitted from this work dir: the job, allocation or process a
run.json names is checked against the scheduler's fields and the process table before `watch`
or `cancel` follows or stops it (a copied or edited run.json never reaches another's job)."""

from __future__ import annotations

import os
import posixpath
import re
import shlex

from scriptast.contract.axes import LOCAL
from scriptast.contract.run_record import RunRecord
from scriptast.contract.transport import Transport
from scriptast.errors import RunError
from scriptast.executor.job_files import LoadedJob, as_submitted
from scriptast.schedulers.launching import is_wrapper
from scriptast.schedulers.queue_client import SchedulerClient
from scriptast.schedulers.registry import scheduler


def check_ours(
    job: LoadedJob,
    record: RunRecord,
    client: SchedulerClient | None,
    transport: Transport | None,
) -> None:
    """RunError unless every id `record` names is this work dir's own: its batch job (this
    user's, the job's name, the script emit wrote at this work dir, by its digest), its
    allocation (this user's persistent allocation) and its process (the wrapper run started,
    in this work dir)."""
    remote = job.spec.transport != LOCAL
    submitted = as_submitted(job)
    folder = submitted.folder
    why = _malformed(record)
    task = job.spec.array if record.launch == "array" else None
    if why is None and task is not None and not (record.job_id or "").endswith(f"_{task.index}"):
        why = f"task {task.index} of job array {task.name} is ARRAY_{task.index}"
    if why is None and record.job_id and record.pid is None and client is not None:
        digest: str | None
        if task is not None:  # a task of a job array: the array's name and script
            name, script, digest = task.name, task.script, task.script_sha256
        else:
            name, script = submitted.name, submitted.script
            digest = job.spec.files.get(posixpath.relpath(job.script, job.work_dir))
        why = client.not_ours(record.job_id, name=name, script=script, script_sha256=digest)
    capability = scheduler(job.spec.scheduler).allocations
    if why is None and record.allocation_id and client is not None and capability is not None:
        why = client.not_ours(record.allocation_id, name=capability.job_name)
    if why is None and record.pid is not None:
        why = _process_not_ours(record.pid, folder, transport if remote else None)
    if why is not None:
        ident = f"job {record.job_id}" if record.pid is None else f"process {record.pid}"
        raise RunError(
            f"{job.work_dir}/run.json names {ident}, which is not this work dir's ({why}): "
            "nothing was done to it"
        )


JOB_ID = re.compile(r"\d+(?:_\d+)?")
"""A Slurm job id as sbatch and salloc print it (an array task's too): nothing else is ever
handed to scancel or squeue from run.json (`1,2` would name two jobs)."""


def _malformed(record: RunRecord) -> str | None:
    for what, value in (("job", record.job_id), ("allocation", record.allocation_id)):
        if value is not None and not JOB_ID.fullmatch(value):
            return f"its {what} id {value!r} is not one the scheduler gave"
    return None


def _process_not_ours(pid: int, folder: str, transport: Transport | None) -> str | None:
    """Why process `pid` is not the wrapper run started in `folder` (None: it is, or it has
    ended); read from /proc here, or on the cluster through the transport."""
    if transport is None:
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
            with open(f"/proc/{pid}/cmdline", "rb") as stream:
                argv = stream.read().split(b"\0")
        except FileNotFoundError:
            return None
        except OSError as error:
            return f"its process cannot be inspected: {error.strerror}"
    else:
        shown = transport.run_shell(
            f"readlink /proc/{pid}/cwd && tr '\\0' '\\n' </proc/{pid}/cmdline"
        )
        if shown.code != 0:
            return None
        lines = shown.out.split("\n")
        cwd, argv = lines[0], [word.encode() for word in lines[1:]]
    if not is_wrapper(argv):
        words = shlex.join(a.decode("utf-8", "replace") for a in argv[:3])
        return f"process {pid} is not a job scriptast started: {words[:200]}"
    same = os.path.realpath(cwd) == os.path.realpath(folder) if transport is None else cwd == folder
    if not same:
        return f"process {pid} runs in {cwd}, not in {folder}"
    return None
