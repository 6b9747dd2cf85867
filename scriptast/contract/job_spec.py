"""job_spec.json as a type: the manifest emit writes and the executor reads (the seed's Step 5
fields, exactly), the Slurm parameters it records, and what run needs beyond the seed: the two
axes the job runs on and the log files its scheduler writes."""

from __future__ import annotations

import msgspec

from scriptast.contract.axes import WorkflowType, check_scenario
from scriptast.contract.measured import Measures
from scriptast.contract.slurm_env import SlurmEnv

LAUNCH_SCRIPT_CANCELS = (
    "a launch script submit.py wrote cancels ${SLURM_JOB_ID} on failure, which would end a "
    "persistent allocation"
)
"""Why a perf_sanity job never runs inside a persistent allocation (its category's words)."""


class SlurmParams(msgspec.Struct, frozen=True, kw_only=True):
    """The job's Slurm header values and MPI plugin (None: srun gets no --mpi, so the
    cluster's MpiDefault applies; only a launch script submit.py wrote does that)."""

    partition: str
    account: str
    time_limit: str
    nodes: int
    ntasks: int
    ntasks_per_node: int
    gpus_per_node: int | None
    gres: str | None
    mpi_plugin: str | None


class Setup(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """What a run's figures are compared by besides its model and workflow: the GPUs the job
    asked for in all (`--gres` per node times the nodes, or a docker job's devices), the
    partition's GPUs a node, and the tensor, pipeline and expert parallelism it runs with."""

    gpus: int | None = None
    gpus_per_node: int | None = None
    tp: int | None = None
    pp: int | None = None
    ep: int | None = None


class JobLogs(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The files the job's output goes to, as its scheduler names them: absolute paths on the
    machine the job runs on, with sbatch's `%j` (the job id) and `%x` (`job_name`) still in
    them. `error` None: stderr goes to `output` too."""

    output: str
    error: str | None = None
    job_name: str | None = None


class ArrayTask(msgspec.Struct, frozen=True, kw_only=True):
    """The Slurm job array a job is a task of (`emit --requests FILE --array`): the array's
    batch script (its sha256, its job name and how many of its tasks run at once), the job's
    index in it, where the task's output goes (the array's `--output` and `--error` in its
    folder: sbatch's `%A` for the array's job id, `%a` for the index; `run` links them into the
    work dir) and the sha256 of the sweep file it came from. The work dir's own script still
    runs the job alone."""

    script: str
    script_sha256: str
    name: str
    index: int
    limit: int | None = None
    output: str
    error: str
    sweep: str


class ProcessSweep(msgspec.Struct, frozen=True, kw_only=True):
    """The docker jobs of a sweep emitted with `--array`, run as processes on this machine
    (docker has no job arrays): `run` of their work dirs starts at most `limit` of them at once
    and the next as one ends. `name` is the group's (the sweep's stem), `index` the job's place
    in it, `sweep` the sha256 of the sweep file it came from."""

    name: str
    index: int
    limit: int
    sweep: str


class JobSpec(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The manifest an executor reads to submit and watch the job. Scenario-specific fields
    (remote, persistent, docker) are omitted when they do not apply. `scheduler` and
    `transport` are the execution_scenario on its two axes (a `transport` other than `local`
    means the job's files live on another machine: `remote_work_dir`); `slurm_env` is typed
    for reading, while the file holds slurm_env.json's object as it was (unknown keys too)."""

    workflow_type: WorkflowType
    model_name: str
    execution_scenario: str
    """One of PLACEMENTS (contract/axes.py): the seed's three, or a registered backend's."""
    docker_image: str
    script_path: str | None = None
    script_name: str
    log_file_pattern: str
    success_patterns: tuple[str, ...]
    failure_patterns: tuple[str, ...]
    extra_files: tuple[str, ...]
    extra_file_destinations: dict[str, str] = {}
    slurm_params: SlurmParams | None = None
    slurm_env: SlurmEnv | None = None
    remote_repo_path: str | None = None
    remote_work_dir: str | None = None
    persistent_mode: bool | None = None
    allocation_refused: str | None = None
    """Why the job never runs as a step of a persistent allocation, in its category's words
    (None: it may)."""
    container_name: str | None = None
    container_mounts: str | None = None
    docker_cmd: str | None = None
    log_file: str | None = None
    work_dir: str | None = None
    repo_root: str | None = None
    node_count: int | None = None
    container_image: str | None = None
    device_type: str | None = None
    scenario: str | None = None
    """The execution_scenario again, under the name trtllm-case-executor dispatches on
    (`job_spec.scenario`) and the exec-* skills read."""
    scheduler: str
    transport: str
    logs: JobLogs
    measures: Measures | None = None
    setup: Setup | None = None
    hang_pattern: str | None = None
    monitor_timeout_seconds: float | None = None
    files: dict[str, str] = {}
    array: ArrayTask | None = None
    processes: ProcessSweep | None = None

    def __post_init__(self) -> None:
        check_scenario(self.execution_scenario)
        if self.allocation_refused is None and self.workflow_type == WorkflowType.perf_sanity:
            # a job_spec.json written before the category said so: its words, as it says them
            msgspec.structs.force_setattr(self, "allocation_refused", LAUNCH_SCRIPT_CANCELS)
