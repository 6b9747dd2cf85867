"""The Slurm backend's launcher: a job submitted with sbatch (a batch job), or its script run by
bash as a step of a persistent allocation (a step); either at its place, this machine or a
cluster's folder over ssh, where its files are staged first. Its dry run is the commands a
launch runs."""

from __future__ import annotations

import posixpath
import time
from collections.abc import Sequence

from scriptast.common.index_ranges import index_ranges
from scriptast.contract.axes import LOCAL, SLURM
from scriptast.contract.run_record import JobState, Launch, RunRecord
from scriptast.errors import RunError
from scriptast.model.slurm_time import parse_time_limit
from scriptast.schedulers.launching import Ending, JobFiles, LaunchChoice, Place, Seen, Tracker
from scriptast.schedulers.queue_client import Final, QueueRow, SchedulerClient
from scriptast.schedulers.registry import scheduler
from scriptast.schedulers.slurm import allocation
from scriptast.schedulers.slurm.array_script import task_branch
from scriptast.schedulers.slurm.backend import submit_command
from scriptast.schedulers.tracking import ProcessTracker, QueueTracker

ALLOCATION_SETTLE = 60.0
"""How long a step's allocation that is winding down (its KillWait) is waited for to show how
it ended."""
ALLOCATION_ENDS = frozenset({JobState.TIMEOUT, JobState.NODE_FAIL, JobState.CANCELLED,
                             JobState.OUT_OF_MEMORY})  # fmt: skip
"""An allocation that ended so ended the steps in it: the step is judged by it."""


def uses_allocation(job: JobFiles, choice: LaunchChoice) -> bool:
    """A job runs as a step of a persistent allocation when job_spec (or `--persistent`) says
    so (job_spec leaves a remote cluster's persistence to the executor: there only
    `--persistent`); never a launch script submit.py wrote: it cancels `${SLURM_JOB_ID}` on
    failure, which would end the whole allocation (its job_spec.json says so:
    `allocation_refused`)."""
    if job.spec.allocation_refused:
        return False
    wanted = choice.persistent
    if wanted is None and job.spec.transport == LOCAL:
        wanted = job.spec.persistent_mode
    return bool(wanted) and job.spec.slurm_params is not None


def alloc_time(job: JobFiles, choice: LaunchChoice) -> str:
    """The allocation's time: `--alloc-time`, else the partition's limit in slurm_env when it
    is at least the job's, else the job's own."""
    if choice.alloc_time:
        return choice.alloc_time
    params = job.spec.slurm_params
    assert params is not None
    env = job.spec.slurm_env
    partition = env.partition(params.partition) if env else None
    limit = (partition.time_limit or "") if partition is not None else ""
    if limit and limit.upper() not in ("UNLIMITED", "INFINITE"):
        try:
            longer = (parse_time_limit(limit) or 0) >= (parse_time_limit(params.time_limit) or 0)
        except ValueError:
            longer = False
        if longer:
            return limit
    return params.time_limit


def log_path(name: str, job_id: str, job_name: str, task: int | None = None) -> str:
    """A log file name with sbatch's `%j`, `%A`, `%x` and `%%` filled in, and `%a` with an
    array's `task` index (other `%` tokens stay)."""
    out = []
    index = 0
    tokens = {"j": job_id, "A": job_id, "x": job_name, "%": "%"}
    if task is not None:
        tokens["a"] = str(task)
    while index < len(name):
        char = name[index]
        following = name[index + 1] if index + 1 < len(name) else ""
        if char == "%" and following in tokens:
            out.append(tokens[following])
            index += 2
        else:
            out.append(char)
            index += 1
    return "".join(out)


class SlurmLauncher:
    """sbatch, or a step of a persistent allocation, at the job's place."""

    def kind(self, job: JobFiles, choice: LaunchChoice) -> Launch:
        return "step" if uses_allocation(job, choice) else "batch"

    def dry_run(self, job: JobFiles, choice: LaunchChoice) -> list[list[str]]:
        if uses_allocation(job, choice):
            assert job.spec.slurm_params is not None
            return allocation.dry_run(job.spec.slurm_params, alloc_time(job, choice), job.script)
        return [submit_command(job.script)]

    def log_files(self, job: JobFiles, job_id: str) -> tuple[str, str | None]:
        logs = job.spec.logs
        name = logs.job_name or posixpath.basename(job.script)
        error = log_path(logs.error, job_id, name) if logs.error else None
        return log_path(logs.output, job_id, name), error

    def launch(
        self,
        job: JobFiles,
        place: Place,
        client: SchedulerClient | None,
        choice: LaunchChoice,
        record: RunRecord,
    ) -> Tracker:
        assert client is not None  # a Slurm job is launched through Slurm's client
        place.stage()
        if uses_allocation(job, choice):
            self._step(job, place, client, choice, record)
        else:
            logs = job.spec.logs
            place.make_folders([p for p in (logs.output, logs.error) if p])
            job_id = client.submit(place.script, cwd=place.folder)
            out, err = self.log_files(job, job_id)
            record.submit_command = tuple(client.submit_argv(place.script))
            record.job_id, record.state, record.launch = job_id, "PENDING", "batch"
            _logs(record, place, out, err)
            if job.spec.allocation_refused and job.spec.persistent_mode:
                record.notes += (f"submitted with sbatch: {job.spec.allocation_refused}",)
        return self.follow(job, record, place, client)

    def _step(self, job: JobFiles, place: Place, client: SchedulerClient, choice: LaunchChoice,
              record: RunRecord) -> None:  # fmt: skip
        """The script run by bash inside an allocation (one running that fits, else a new
        one); its logs are the job's with `%j` as `<allocation>.<n>`, the first n whose log is
        not there yet."""
        params = job.spec.slurm_params
        assert params is not None
        alloc_id, nodes, notes = allocation.acquire(
            client, params, alloc_time(job, choice), choice.time_limit_seconds or 0.0,
            choice.alloc_wait or 86400.0, choice.alloc_idle,
        )  # fmt: skip
        number = 1
        while place.exists(self.log_files(job, f"{alloc_id}.{number}")[0]):
            number += 1
        out, err_or_none = self.log_files(job, f"{alloc_id}.{number}")
        err = err_or_none or out
        env = allocation.step_env(params, alloc_id, nodes, place.folder)
        if place.where is not None:  # the cluster's own environment, with the allocation's
            env = {k: v for k, v in env.items() if k.startswith("SLURM_")}
        argv = ["bash", place.script]
        place.make_folders([out, err])
        record.pid = place.start(argv, env, out, err)
        record.submit_command, record.state, record.launch = tuple(argv), "RUNNING", "step"
        record.job_id = record.allocation_id = alloc_id
        record.notes += tuple(notes)
        _logs(record, place, out, err)

    def array_of(self, job: JobFiles, choice: LaunchChoice) -> str | None:
        """The array script `job` is submitted with, as a task of its job array (None: it is
        no task, or it runs alone); RunError when it is one and a persistent allocation is
        asked for."""
        task = job.spec.array
        if task is None or job.spec.transport != LOCAL:
            return None
        if choice.persistent:
            raise RunError(
                f"{job.work_dir} is task {task.index} of job array {task.name}, and a "
                "persistent allocation runs one job at a time as its steps, while sbatch "
                "submits an array whole: drop --persistent"
            )
        return task.script

    def check_array(self, jobs: Sequence[JobFiles]) -> None:
        """The tasks name one array script, it is the one emit wrote (its sha256, read never
        through a link), and its branch for each task's index runs that work dir's script, as
        emit writes the branch: nothing else is submitted on their behalf."""
        import hashlib

        from scriptast.common.text_files import regular_file_bytes
        from scriptast.emitters.bash import BashEmitter

        first = jobs[0].spec.array
        assert first is not None
        for job in jobs:
            task = job.spec.array
            if task is None or (task.script, task.script_sha256) != (
                first.script,
                first.script_sha256,
            ):
                raise RunError(f"{job.work_dir} is not a task of job array {first.script}")
        try:
            data = regular_file_bytes(first.script, follow_links=False)[0]
        except OSError as error:
            raise RunError(
                f"cannot read job array script {first.script}: {error.strerror}: "
                "not submitted; emit the sweep again with --array"
            ) from None
        if hashlib.sha256(data).hexdigest() != first.script_sha256:
            raise RunError(
                f"{first.script} is not the job array script emit wrote for these work dirs (its "
                "sha256 differs): not submitted; emit the sweep again with --array"
            )
        text = data.decode("utf-8", "replace")
        for job in jobs:
            index = job.spec.array.index if job.spec.array else -1
            lines = BashEmitter().statement(task_branch(index, job.script), 0)
            if "\n" + "\n".join(lines) + "\n" not in text:
                raise RunError(
                    f"{job.work_dir}: task {index} of {first.script} does not run this work "
                    f"dir's script {job.script}: not submitted; emit the sweep again with --array"
                )

    def array_command(self, jobs: Sequence[JobFiles], client: SchedulerClient | None) -> list[str]:
        """The one sbatch that submits the tasks `jobs` of one job array (`--array` names their
        indices, and the array's limit)."""
        task = jobs[0].spec.array
        assert task is not None
        indices = index_ranges(sorted({job.spec.array.index for job in jobs if job.spec.array}))
        limit = f"%{task.limit}" if task.limit else ""
        options = [f"--array={indices}{limit}"]
        return client.submit_argv(task.script, options) if client else submit_command(
            task.script, options)  # fmt: skip

    def task_logs(self, job: JobFiles, array_id: str) -> tuple[str, str]:
        task = job.spec.array
        assert task is not None
        return (log_path(task.output, array_id, task.name, task.index),
                log_path(task.error, array_id, task.name, task.index))  # fmt: skip

    def launch_array(
        self, jobs: Sequence[JobFiles], client: SchedulerClient | None,
        records: Sequence[RunRecord],
    ) -> list[Tracker]:  # fmt: skip
        """Submit the tasks `jobs` of one job array with one sbatch, filling each one's
        record (its id `ARRAY_INDEX`, and its logs, which the array writes in its folder and
        a link in the work dir names): their trackers."""
        assert client is not None
        task = jobs[0].spec.array
        assert task is not None
        argv = self.array_command(jobs, client)
        array_id = client.submit(task.script, cwd=posixpath.dirname(task.script),
                                 options=argv[2:-1])  # fmt: skip
        trackers: list[Tracker] = []
        backend = scheduler(jobs[0].spec.scheduler)
        for job, record in zip(jobs, records, strict=True):
            own = job.spec.array
            assert own is not None
            record.job_id = f"{array_id}_{own.index}"
            record.submit_command, record.state, record.launch = tuple(argv), "PENDING", "array"
            record.out_log, record.err_log = self.task_logs(job, array_id)
            record.notes += (f"task {own.index} of job array {array_id} ({own.name})",)
            _link_logs(job, record, f"{array_id}_{own.index}")
            trackers.append(QueueTracker(backend, client, record))
        return trackers

    def follow(
        self, job: JobFiles, record: RunRecord, place: Place, client: SchedulerClient | None
    ) -> Tracker:
        assert client is not None
        # a record of an older scriptast names no kind, or "remote" for either kind on a cluster
        kind = record.launch if record.launch in ("batch", "step") else None
        if kind == "step" or (kind is None and record.pid is not None):
            return StepTracker(place, record, client)
        return QueueTracker(scheduler(job.spec.scheduler), client, record)


def _link_logs(job: JobFiles, record: RunRecord, task_id: str) -> None:
    """A link in the work dir to each of a task's logs (which the array writes in its own
    folder), `<job name>_ARRAY_INDEX.out` and `.err`, where a person looks for them; nothing
    is replaced, and run itself reads the logs where they are."""
    import contextlib
    import os

    name = job.spec.logs.job_name or posixpath.splitext(posixpath.basename(job.script))[0]
    for suffix, target in ((".out", record.out_log), (".err", record.err_log)):
        if target:
            link = posixpath.join(job.work_dir, f"{name}_{task_id}{suffix}")
            with contextlib.suppress(OSError):  # one there already (a file or a link) stays
                os.symlink(target, link)


def _logs(record: RunRecord, place: Place, out: str, err: str | None) -> None:
    """The logs in the record: read where the job writes them; a cluster's brought back."""
    apart = err if err and err != out else None
    if place.where is None:
        record.out_log, record.err_log = out, apart
        return
    record.remote_host = place.where
    record.remote_out_log, record.remote_err_log = out, apart
    record.out_log = place.local(out)
    record.err_log = place.local(apart) if apart else None


class StepTracker(ProcessTracker):
    """The batch script run as a step of a persistent allocation: its srun steps are the
    allocation's, so a cancel cancels those steps, then the script's process; its end is
    judged by the allocation's too (one that ran out of time ended the step)."""

    def __init__(self, place: Place, record: RunRecord, client: SchedulerClient) -> None:
        super().__init__(place, record)
        self.client = client

    def queue_ids(self) -> list[str]:
        return [self.record.allocation_id] if self.record.allocation_id else []

    def observe(self, rows: dict[str, QueueRow] | None) -> Seen | None:
        alloc = self.record.allocation_id
        ended = f"allocation {alloc} ended while the job ran"
        if rows is not None and alloc and alloc not in rows and ended not in self.record.notes:
            self.record.notes += (ended,)
        return super().observe(rows)

    def cancel(self) -> None:
        if self.record.allocation_id:
            steps = self.client.steps(self.record.allocation_id)
            if steps:
                self.client.cancel(steps)
        super().cancel()

    def end(self, final: Final | None, exit_line: int | None) -> Ending:
        return allocation_ending(self.client, self.record, super().end(final, exit_line))


def allocation_ending(client: SchedulerClient, record: RunRecord, ending: Ending) -> Ending:
    """A step's end judged by its allocation too: when the allocation ran out of time, lost a
    node or was cancelled (which ended the step, whatever srun's exit code says), that is the
    step's state."""
    alloc = record.allocation_id
    if not alloc:
        return ending
    backend = scheduler(SLURM)
    rows = client.queue([alloc])
    deadline = time.monotonic() + ALLOCATION_SETTLE
    while rows and alloc in rows and backend.winding_down(rows[alloc].state):
        if backend.decided(rows[alloc].state, rows[alloc].reason) is not None:
            break
        if time.monotonic() > deadline:
            break
        time.sleep(0.5)  # ended (a cancel, say) and still winding down: its state follows
        rows = client.queue([alloc])
    row = (rows or {}).get(alloc)
    if rows is None:
        return ending
    state: str | None = None
    source = f"allocation {alloc}"
    decided = backend.decided(row.state, row.reason) if row is not None else None
    if decided is not None:
        state = decided
    elif row is not None and backend.state(row.state).final:
        state = row.state
    if row is None or (state is None and backend.state(row.state).final):
        final = client.finals([alloc]).get(alloc)
        if final is not None:
            state, source = final.state, f"allocation {alloc} (from {final.source})"
    if state is None or backend.state(state) not in ALLOCATION_ENDS:
        return ending
    record.notes += (f"allocation {alloc} ended {state}: the step ended with it",)
    return state, ending[1], source


def launcher() -> SlurmLauncher:
    """The Slurm backend's launcher."""
    return SlurmLauncher()
