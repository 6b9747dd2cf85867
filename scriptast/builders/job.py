"""The resolved job: every value a category builder needs, each with its source in the trail."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from scriptast.builders.request import ExecutionScenario, Request, WorkflowType
from scriptast.slurm import Mount

Category = Literal["pytest", "custom", "eval", "bench", "perf_sanity"]
SUFFIXES: dict[str, str] = {
    "pytest": "auto_test",
    "custom": "custom",
    "eval": "eval",
    "bench": "bench",
    "perf_sanity": "perf_sanity",
}


class UserCommand(msgspec.Struct, frozen=True, kw_only=True):
    """A command the user gave. `argv` is set when it is plain (literal words, simple
    redirections) and becomes a typed command; otherwise `text` runs through `bash -c`."""

    text: str
    argv: tuple[str, ...] | None = None
    redirects: tuple[tuple[str, str], ...] = ()


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


class PerfPlan(msgspec.Struct, frozen=True, kw_only=True):
    """What submit.py is given: a test list, or a config file (+ test name)."""

    submit_py: str
    test_list: str | None = None
    config_file: str | None = None
    test_name: str | None = None
    accuracy: bool = False


class TrailEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One resolved value and where it came from."""

    field: str
    value: str
    source: str


class ResolvedJob(msgspec.Struct, frozen=True, kw_only=True):
    """A job ready to build; builders read these values and compute nothing of their own."""

    request: Request
    category: Category
    workflow: WorkflowType
    scenario: ExecutionScenario
    model_name: str
    job_name: str
    work_dir: str
    log_dir: str
    project_path: str
    repo_root: str
    image: str
    image_enroot: str
    mounts: tuple[Mount, ...]
    models_host_path: str | None
    llm_models_root: str
    required_devices: int
    world_size: int
    tp: int
    pp: int
    ep: int
    install: bool
    slurm: SlurmParams | None = None
    persistent_mode: bool | None = None
    slurm_env_raw: dict[str, Any] | None = None
    test: UserCommand | None = None
    test_workdir: str | None = None
    eval: UserCommand | None = None
    eval_requirements: bool = False
    bench_prepare: UserCommand | None = None
    bench_run: UserCommand | None = None
    custom: UserCommand | None = None
    custom_env: tuple[tuple[str, str], ...] = ()
    custom_run_script: str | None = None
    custom_run_script_local: str | None = None
    custom_script_local: str | None = None
    perf: PerfPlan | None = None
    warnings: tuple[str, ...] = ()
    trail: tuple[TrailEntry, ...] = ()

    @property
    def suffix(self) -> str:
        """`auto_test`, `custom`, `eval`, `bench` or `perf_sanity`."""
        return SUFFIXES[self.category]

    @property
    def is_docker(self) -> bool:
        """True for local_docker."""
        return self.scenario is ExecutionScenario.local_docker

    def explain(self) -> str:
        """The resolution trail as an aligned table: field, value, source."""
        rows = [("field", "value", "source"), *((e.field, e.value, e.source) for e in self.trail)]
        field_width = max(len(row[0]) for row in rows)
        value_width = min(max(len(row[1]) for row in rows), 40)
        lines = [f"{f.ljust(field_width)}  {v.ljust(value_width)}  {s}" for f, v, s in rows]
        lines.insert(1, "-" * (field_width + value_width + 10))
        return "\n".join(lines) + "\n"
