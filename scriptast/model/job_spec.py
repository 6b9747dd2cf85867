"""job_spec.json as a type: the manifest emit writes and the executor reads (the seed's Step 5
fields, exactly), with the Slurm parameters it records."""

from __future__ import annotations

from typing import Any

import msgspec


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


class JobSpec(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The manifest an executor reads to submit and watch the job. Scenario-specific fields
    (remote, persistent, docker) are omitted when they do not apply."""

    workflow_type: str
    model_name: str
    execution_scenario: str
    docker_image: str
    script_path: str | None = None
    script_name: str
    log_file_pattern: str
    success_patterns: tuple[str, ...]
    failure_patterns: tuple[str, ...]
    extra_files: tuple[str, ...]
    extra_file_destinations: dict[str, str] = {}
    slurm_params: SlurmParams | None = None
    slurm_env: dict[str, Any] | None = None
    remote_repo_path: str | None = None
    remote_work_dir: str | None = None
    persistent_mode: bool | None = None
    container_name: str | None = None
    container_mounts: str | None = None
    docker_cmd: str | None = None
    log_file: str | None = None
    work_dir: str | None = None
    repo_root: str | None = None
    node_count: int | None = None
    container_image: str | None = None
    files: dict[str, str] = {}
