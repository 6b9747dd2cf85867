"""job_spec.json of a resolved job: the seed's Step 5 fields, exactly, and the axes and logs run
reads."""

from __future__ import annotations

from scriptast.builders.category import LaunchFacts, Patterns
from scriptast.builders.resolution.job import ResolvedJob
from scriptast.contract.axes import DOCKER
from scriptast.contract.job_spec import JobLogs, JobSpec, Setup
from scriptast.contract.measured import Measures


def build_job_spec(
    job: ResolvedJob,
    *,
    patterns: Patterns,
    script_name: str,
    script_path: str | None,
    extra_files: tuple[str, ...],
    container_mounts: str,
    logs: JobLogs,
    docker_cmd: str | None = None,
    files: dict[str, str] | None = None,
    launch: LaunchFacts | None = None,
    destinations: dict[str, str] | None = None,
    measures: Measures | None = None,
    allocation_refused: str = "",
    monitor_timeout_seconds: float | None = None,
) -> JobSpec:
    """The seed's fields for this job's category and scenario; `launch` gives the values of a
    launch script scriptast did not write (perf_sanity); `destinations` the cluster path of
    each extra file (remote_slurm); `logs` the files the job's output goes to;
    `monitor_timeout_seconds` what trtllm-case-executor wrote there before (kept)."""
    pattern = launch.log_file_pattern if launch else f"{job.job_name}_%j.out"
    persistent = bool(job.persistent_mode)
    where = job.placement
    docker = where.scheduler == DOCKER
    container = launch.container_name if launch else job.job_name
    return JobSpec(
        workflow_type=job.workflow,
        model_name=job.model_name,
        execution_scenario=job.scenario,
        scenario=job.scenario,
        docker_image=job.image,
        script_path=script_path,
        script_name=script_name,
        log_file_pattern=pattern,
        success_patterns=patterns.success,
        failure_patterns=patterns.failure,
        extra_files=extra_files,
        extra_file_destinations=destinations or {},
        slurm_params=job.slurm,
        slurm_env=job.cluster.env if job.cluster else None,
        remote_repo_path=job.project_path if where.remote else None,
        remote_work_dir=job.log_dir if where.remote else None,
        persistent_mode=True if persistent else None,
        allocation_refused=allocation_refused or None,
        container_name=container if persistent else None,
        container_mounts=container_mounts if persistent else None,
        docker_cmd=docker_cmd,
        log_file=logs.output if docker else None,
        work_dir=job.work_dir,
        repo_root=job.repo_root,
        node_count=job.slurm.nodes if job.slurm is not None else None,
        # the caller's image as it gave it (trtllm-case-executor stores the canonical form;
        # pyxis's `registry#path` is the script's business), else the canonical one
        container_image=job.request.container_image or job.image,
        device_type=job.request.device_type,
        scheduler=where.scheduler,
        transport=where.transport,
        logs=logs,
        measures=measures,
        setup=setup_of(job),
        hang_pattern=job.request.hang_pattern,
        monitor_timeout_seconds=monitor_timeout_seconds,
        files=files or {},
    )


def setup_of(job: ResolvedJob) -> Setup:
    """The GPUs the job asked for in all (`--gres` per node times the nodes; a docker job or a
    job without gres: its required devices), the partition's node size, and tp/pp/ep."""
    gpus = job.required_devices
    slurm = job.slurm
    if slurm is not None and slurm.gres:
        count = slurm.gres.rsplit(":", 1)[-1]
        if count.isdigit():
            gpus = int(count) * slurm.nodes
    return Setup(
        gpus=gpus,
        gpus_per_node=slurm.gpus_per_node if slurm is not None else None,
        tp=job.tp,
        pp=job.pp,
        ep=job.ep,
    )
