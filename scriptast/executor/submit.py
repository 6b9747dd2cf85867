"""Submit one work_dir's job: checked against its digests under emit's lock, then `sbatch`, a
persistent allocation's step, or docker_cmd.sh, and the first run record written."""

from __future__ import annotations

import os
import posixpath
import shlex
import socket
import subprocess
import time
from collections.abc import Callable

import msgspec

from scriptast.contract.axes import DOCKER, LOCAL, SLURM, WorkflowType
from scriptast.contract.run_record import RECORD_VERSION, RUN_FILE, RunRecord
from scriptast.errors import RunError
from scriptast.executor.allocation import (
    AllocationParams,
    allocate,
    choose,
    list_allocations,
    salloc_argv,
)
from scriptast.executor.followed import (
    EXIT_FILE,
    BatchFollowed,
    Followed,
    ProcessFollowed,
    utc_now,
)
from scriptast.executor.job_files import LoadedJob, log_files, torn_files
from scriptast.executor.judge import LogScanner
from scriptast.executor.log_tail import LineSink, Tail
from scriptast.executor.slurm_client import SlurmClient
from scriptast.model.slurm_time import parse_time_limit
from scriptast.workdir.write import WriteError, work_dir_held

WRAPPER = 'rc=0; "$@" || rc=$?; printf "%s\\n" "$rc" >"$SCRIPTAST_EXIT_FILE"; exit "$rc"'
"""Runs a process job and writes its exit code where `watch` finds it (no pipe hides it)."""
MARGIN_SECONDS = 600.0
CLEARED_PREFIXES = ("SLURM_", "SBATCH_", "SALLOC_", "SRUN_")
KEPT_SLURM = ("SLURM_CONF",)


class RunOptions(msgspec.Struct, kw_only=True):
    """How `run` submits and follows: the flags of `scriptast run`."""

    force: bool = False
    again: bool = False
    detach: bool = False
    dry_run: bool = False
    persistent: bool | None = None
    alloc_time: str | None = None
    queue_timeout: float | None = None
    run_timeout: float | None = None
    poll_max: float = 30.0
    ssh_host: str | None = None
    ssh_config: str | None = None
    fetch: tuple[str, ...] = ()


class Writer(msgspec.Struct, frozen=True):
    """Where a job's log goes on the terminal, and the prefix of its lines (several jobs)."""

    write: Callable[[bytes], None]
    prefix: str | None


def time_limit_seconds(job: LoadedJob) -> float | None:
    """The job's Slurm time limit in seconds (None: no Slurm job, or UNLIMITED)."""
    params = job.spec.slurm_params
    if params is None:
        return None
    minutes = parse_time_limit(params.time_limit)
    return None if minutes is None else minutes * 60.0


def timeouts(job: LoadedJob, options: RunOptions) -> tuple[float | None, float | None]:
    """(queue timeout, run timeout) in seconds: the flags, else the job's time limit plus a
    margin (Slurm ends the job at its limit; the margin is for a controller that does not)."""
    limit = time_limit_seconds(job)
    default = None if limit is None else limit + MARGIN_SECONDS
    queue = options.queue_timeout if options.queue_timeout is not None else default
    run = options.run_timeout if options.run_timeout is not None else default
    return queue, run


def uses_allocation(job: LoadedJob, options: RunOptions) -> bool:
    """A local_slurm job runs in a persistent allocation when job_spec (or `--persistent`)
    says so, a remote_slurm one with `--persistent` (job_spec leaves remote persistence to the
    executor); never a launch script submit.py wrote: it cancels `${SLURM_JOB_ID}` on
    failure, which would end the whole allocation, so it is always submitted with sbatch."""
    if job.spec.scheduler != SLURM or job.spec.workflow_type == WorkflowType.perf_sanity:
        return False
    wanted = options.persistent
    if wanted is None and job.spec.transport == LOCAL:
        wanted = job.spec.persistent_mode
    return bool(wanted) and job.spec.slurm_params is not None


def check_files(job: LoadedJob, options: RunOptions) -> None:
    """Refuse a set whose files no longer match their digests (unless --force)."""
    torn = torn_files(job)
    if torn and not options.force:
        raise RunError(
            f"{job.work_dir}: {', '.join(torn)}: the set emit wrote was torn or edited; emit it "
            "again, or run it as it is with --force"
        )


def _record(job: LoadedJob, **fields: object) -> RunRecord:
    return RunRecord(
        version=RECORD_VERSION,
        work_dir=job.work_dir,
        execution_scenario=job.spec.execution_scenario,
        script=job.script,
        submitted_at=utc_now(),
        host=socket.gethostname(),
        **fields,  # type: ignore[arg-type]
    )


def _make_folders(*paths: str | None) -> None:
    for path in paths:
        if path:
            try:
                os.makedirs(posixpath.dirname(path), exist_ok=True)
            except OSError as error:
                raise RunError(
                    f"cannot create the log folder of {path}: {error.strerror}"
                ) from None


def _writable(job: LoadedJob) -> None:
    probe = posixpath.join(job.work_dir, RUN_FILE)
    if not os.access(job.work_dir, os.W_OK) or (
        os.path.lexists(probe) and not os.access(probe, os.W_OK)
    ):
        raise RunError(f"work_dir {job.work_dir} is not writable: run.json cannot be recorded")


def submit_batch(job: LoadedJob, client: SlurmClient, writer: Writer) -> Followed:
    """`sbatch --parsable` under emit's lock, after the digests are checked again there."""
    logs = job.spec.logs
    _make_folders(logs.output, logs.error)
    job_id = client.submit(job.script, cwd=job.work_dir)
    out, err = log_files(job, job_id)
    record = _record(
        job,
        submit_command=("sbatch", "--parsable", job.script),
        out_log=out,
        err_log=err,
        job_id=job_id,
        state="PENDING",
    )
    return BatchFollowed(job, record, client, writer.write, writer.prefix)


def _launch(job: LoadedJob, argv: list[str], out: str, err: str, env: dict[str, str]) -> int:
    _make_folders(out, err)
    exit_file = posixpath.join(job.work_dir, EXIT_FILE)
    if os.path.lexists(exit_file):
        os.unlink(exit_file)
    env = {**env, "SCRIPTAST_EXIT_FILE": exit_file}
    try:
        with open(out, "wb") as out_stream, open(err, "ab") as err_stream:
            process = subprocess.Popen(
                ["/bin/sh", "-c", WRAPPER, "scriptast-job", *argv],
                stdout=out_stream,
                stderr=err_stream if err != out else subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=job.work_dir,
                env=env,
                start_new_session=True,
            )
    except OSError as error:
        raise RunError(f"cannot start {argv[0]} for {job.work_dir}: {error.strerror}") from None
    _LAUNCHED[process.pid] = process
    return process.pid


_LAUNCHED: dict[int, subprocess.Popen[bytes]] = {}
"""The processes this run started, by pid: their exit codes are read from them."""


def _process_followed(
    job: LoadedJob, record: RunRecord, client: SlurmClient | None, writer: Writer
) -> Followed:
    followed = ProcessFollowed(job, record, client, writer.write, writer.prefix)
    assert record.pid is not None
    followed.process = _LAUNCHED.pop(record.pid, None)
    return followed


def docker_command(job: LoadedJob) -> tuple[list[str], str, str]:
    """(argv, log file, container name) of a local_docker job."""
    if not job.spec.log_file:
        raise RunError(f"{job.work_dir}/job_spec.json names no log_file for its docker job")
    return ["bash", job.script], job.spec.log_file, container_name(job.spec.docker_cmd or "")


def container_name(docker_cmd: str) -> str:
    """The `--name` of the docker command emit wrote (so that only this container is killed)."""

    try:
        words = shlex.split(docker_cmd)
    except ValueError:
        words = []
    for index, word in enumerate(words[:-1]):
        if word == "--name":
            return words[index + 1]
    raise RunError("the docker command in job_spec.json has no --name: emit the job again")


def submit_docker(job: LoadedJob, writer: Writer) -> Followed:
    """docker_cmd.sh as a process in its own session, its output straight into log_file."""
    argv, log, name = docker_command(job)
    pid = _launch(job, argv, log, log, dict(os.environ))
    record = _record(
        job, submit_command=tuple(argv), out_log=log, container_name=name, pid=pid, state="RUNNING"
    )
    return _process_followed(job, record, None, writer)


def allocation_for(
    job: LoadedJob, client: SlurmClient, options: RunOptions, wait: float | None
) -> tuple[str, str, list[str]]:
    """(allocation id, its nodes, notes): a running allocation whose parameters match and
    whose time left covers the job's limit, else a new one (and why none was reused)."""
    assert job.spec.slurm_params is not None
    wanted = AllocationParams.of(job.spec.slurm_params)
    needed = time_limit_seconds(job) or 0.0
    found, why = choose(list_allocations(client), wanted, needed)
    if found is not None:
        return found.job_id, found.nodes, [f"reused persistent allocation {found.job_id}"]
    alloc_id = allocate(client, wanted, alloc_time(job, options), wait or 86400.0)
    nodes = next((a.nodes for a in list_allocations(client) if a.job_id == alloc_id), "")
    notes = [f"new persistent allocation {alloc_id}", *why]
    return alloc_id, nodes, notes


def alloc_time(job: LoadedJob, options: RunOptions) -> str:
    """The allocation's time: `--alloc-time`, else the partition's limit in slurm_env when it
    is at least the job's, else the job's own."""
    if options.alloc_time:
        return options.alloc_time
    params = job.spec.slurm_params
    assert params is not None
    env = job.spec.slurm_env
    partition = env.partition(params.partition) if env else None
    if partition is not None:
        limit = partition.time_limit or ""
        if limit:
            try:
                longer = (parse_time_limit(limit) or 0) >= (
                    parse_time_limit(params.time_limit) or 0
                )
            except ValueError:
                longer = False
            if longer and limit.upper() not in ("UNLIMITED", "INFINITE"):
                return limit
    return params.time_limit


def allocation_env(job: LoadedJob, alloc_id: str, nodes: str) -> dict[str, str]:
    """This environment without Slurm's job variables, plus those of the allocation, so that
    every srun of the script runs as a step of it."""
    params = job.spec.slurm_params
    assert params is not None
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(CLEARED_PREFIXES) or k in KEPT_SLURM
    }
    env.update(
        SLURM_JOB_ID=alloc_id,
        SLURM_JOBID=alloc_id,
        SLURM_NNODES=str(params.nodes),
        SLURM_JOB_NUM_NODES=str(params.nodes),
        SLURM_NTASKS=str(params.ntasks),
        SLURM_NPROCS=str(params.ntasks),
        SLURM_NTASKS_PER_NODE=str(params.ntasks_per_node),
        SLURM_SUBMIT_DIR=job.work_dir,
        SLURM_SUBMIT_HOST=socket.gethostname(),
    )
    if nodes:
        env.update(SLURM_NODELIST=nodes, SLURM_JOB_NODELIST=nodes)
    return env


def submit_in_allocation(
    job: LoadedJob, client: SlurmClient, alloc_id: str, nodes: str, writer: Writer
) -> Followed:
    """The batch script run by bash with the allocation's variables: its sruns are steps of
    the allocation; its logs are the header's names with `%j` as `<allocation>.<n>`."""
    number = 1
    while os.path.lexists(log_files(job, f"{alloc_id}.{number}")[0]):
        number += 1
    out, err_or_none = log_files(job, f"{alloc_id}.{number}")
    err = err_or_none or out
    argv = ["bash", job.script]
    pid = _launch(job, argv, out, err, allocation_env(job, alloc_id, nodes))
    record = _record(
        job,
        submit_command=tuple(argv),
        out_log=out,
        err_log=err if err != out else None,
        job_id=alloc_id,
        allocation_id=alloc_id,
        pid=pid,
        state="RUNNING",
    )
    return _process_followed(job, record, client, writer)


def dry_run_commands(job: LoadedJob, options: RunOptions) -> list[list[str]]:
    """Every command `run` would run for this job, in order."""
    if job.spec.scheduler == DOCKER:
        return [docker_command(job)[0]]
    if uses_allocation(job, options):
        assert job.spec.slurm_params is not None
        wanted = AllocationParams.of(job.spec.slurm_params)
        return [
            ["squeue", "--noheader", "--me", "--name", "scriptast.persistent"],
            salloc_argv(wanted, alloc_time(job, options)),
            ["env", "SLURM_JOB_ID=<allocation>", "bash", job.script],
        ]
    return [["sbatch", "--parsable", job.script]]


def submit_remote(
    job: LoadedJob,
    client: SlurmClient,
    options: RunOptions,
    writer: Writer,
    allocation: tuple[str, str, list[str]] | None,
) -> Followed:
    """Check the cluster, upload and check the digests there, then sbatch (or start the script
    inside the allocation) over the ssh master."""
    from scriptast.executor.remote import (
        allocation_launch,
        check_cluster,
        local_copy,
        remote_work_dir,
        upload,
    )
    from scriptast.executor.ssh import SshTransport

    ssh = client.transport
    assert isinstance(ssh, SshTransport)
    check_cluster(job, ssh)
    remote_script = upload(job, ssh)[job.script]
    folder = remote_work_dir(job)
    if allocation is None:
        job_id = client.submit(remote_script, cwd=folder)
        out, err = log_files(job, job_id)
        command: tuple[str, ...] = ("sbatch", "--parsable", remote_script)
    else:
        job_id = allocation[0]
        out, err = log_files(job, f"{job_id}.{int(time.time())}")
        err = err or out
        command = ("bash", remote_script)
    ssh.run(["mkdir", "-p", "--", *sorted({posixpath.dirname(p) for p in (out, err) if p})])
    record = _record(
        job,
        submit_command=command,
        out_log=local_copy(job, out),
        err_log=local_copy(job, err) if err and err != out else None,
        remote_host=ssh.host,
        remote_out_log=out,
        remote_err_log=err if err != out else None,
        job_id=job_id,
        state="PENDING",
    )

    if allocation is not None:
        exit_file = posixpath.join(folder, EXIT_FILE)
        env = {
            k: v for k, v in allocation_env(job, *allocation[:2]).items() if k.startswith("SLURM_")
        }
        env["SLURM_SUBMIT_DIR"] = folder
        launch = allocation_launch(job, remote_script, env, out, err or out, exit_file)
        launched = ssh.run_shell(f"rm -f {shlex.quote(exit_file)}; {launch}")
        if launched.code != 0 or not launched.out.strip().isdigit():
            raise RunError(f"cannot start {remote_script} on {ssh.host}: {launched.last_line()}")
        record.pid, record.allocation_id, record.state = int(launched.out), job_id, "RUNNING"
    return remote_followed(job, record, client, options, writer)


def remote_followed(
    job: LoadedJob, record: RunRecord, client: SlurmClient, options: RunOptions, writer: Writer
) -> Followed:
    """A remote job followed over the ssh master: its logs tailed on the cluster and brought
    back at the end; a batch job, or the script's process inside an allocation."""
    from scriptast.executor.followed import RemoteProcessFollowed
    from scriptast.executor.remote import RemoteLogTail, bring_back, remote_work_dir
    from scriptast.executor.ssh import SshTransport

    ssh = client.transport
    assert isinstance(ssh, SshTransport)

    def opener(path: str, scanner: LogScanner, sink: LineSink) -> Tail:
        return RemoteLogTail(path, scanner, sink, ssh)

    followed: Followed
    if record.pid is None:
        followed = BatchFollowed(job, record, client, writer.write, writer.prefix, open_tail=opener)
    else:
        remote = RemoteProcessFollowed(
            job, record, client, writer.write, writer.prefix, open_tail=opener
        )
        remote.ssh, remote.exit_file = ssh, posixpath.join(remote_work_dir(job), EXIT_FILE)
        followed = remote

    def note(line: str) -> None:
        record.notes += (line,)

    logs = sorted({p for p in (record.remote_out_log, record.remote_err_log) if p})
    followed.after_logs = lambda: bring_back(job, ssh, logs, options.fetch, note)
    return followed


def submit(
    job: LoadedJob, client: SlurmClient | None, options: RunOptions, writer: Writer
) -> Followed:
    """Submit the job, holding emit's lock from the digest check to the first record."""
    _writable(job)
    allocation: tuple[str, str, list[str]] | None = None
    if uses_allocation(job, options):
        assert client is not None
        allocation = allocation_for(job, client, options, timeouts(job, options)[0])
    try:
        with work_dir_held(job.work_dir) as pending:
            check_files(job, options)
            if job.spec.scheduler == DOCKER:
                followed = submit_docker(job, writer)
            elif job.spec.transport != LOCAL:
                assert client is not None
                followed = submit_remote(job, client, options, writer, allocation)
                if allocation is not None:
                    followed.record.notes += tuple(allocation[2])
            elif allocation is not None:
                assert client is not None
                followed = submit_in_allocation(job, client, *allocation[:2], writer)
                followed.record.notes += tuple(allocation[2])
            else:
                assert client is not None
                followed = submit_batch(job, client, writer)
                if job.spec.workflow_type == "perf_sanity" and job.spec.persistent_mode:
                    followed.record.notes += (
                        "submitted with sbatch: a launch script submit.py wrote cancels "
                        "${SLURM_JOB_ID} on failure, which would end a persistent allocation",
                    )
            followed.save()
            if pending() is not None:
                followed.cancelled = True  # Ctrl-C or SIGTERM while it was being submitted
                followed.cancel()
    except WriteError as error:
        raise RunError(str(error)) from None
    return followed


def parse_seconds(text: str) -> float:
    """A duration: seconds (`90`, `90s`), minutes (`5m`), hours (`2h`) or a Slurm time
    (`02:00:00`, `1-00:00:00`); ValueError for anything else."""
    import re

    value = text.strip()
    matched = re.fullmatch(r"(\d+(?:\.\d+)?)([smh]?)", value)
    if matched:
        return float(matched.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[matched.group(2)]
    from scriptast.executor.allocation import time_seconds

    seconds = time_seconds(value)
    if seconds is None:
        raise ValueError(f"{text!r} is not a duration (90, 90s, 5m, 2h or 02:00:00)")
    return seconds
