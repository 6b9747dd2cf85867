"""The resolved job: every value a category builder needs, each with its source in the trail."""

from __future__ import annotations

from typing import TypeVar

import msgspec

from scriptast.builders.request.fields import Request
from scriptast.builders.resolution.trail import TrailEntry, explain_table
from scriptast.cluster.read_slurm_env import LoadedSlurmEnv
from scriptast.contract.axes import Placement, WorkflowType
from scriptast.contract.job_spec import SlurmParams
from scriptast.model.slurm import Mount
from scriptast.plan.launch import LaunchPlan
from scriptast.plan.steps import UserCommand


class Work(msgspec.Struct, frozen=True, kw_only=True, tag_field="category"):
    """What only one category needs; each category's module defines its own, tagged with the
    category's name (a job's category is its work's tag)."""

    @property
    def category(self) -> str:
        """The category this work belongs to: `pytest`, `eval`, `bench`, `custom`, ..."""
        tag = type(self).__struct_config__.tag
        assert isinstance(tag, str)
        return tag

    def commands(self) -> tuple[tuple[str, UserCommand], ...]:
        """(request field, command) of each user command the job runs."""
        return ()

    def extra_requirements(self) -> tuple[str, ...]:
        """Requirement files the install step adds after requirements-dev.txt."""
        return ()

    def carried(self) -> tuple[str, ...]:
        """Local files the job needs beside its scripts (copied to a cluster with them)."""
        return ()

    def data_files(self) -> tuple[tuple[str, str], ...]:
        """(name, text) of files the job reads, written into the work directory beside its
        scripts (and sent to a cluster with them)."""
        return ()

    def summary_lines(self) -> tuple[str, ...]:
        """Lines the summary adds after the seed's (a CI stage: the tests it runs)."""
        return ()


W = TypeVar("W", bound=Work)


class ResolvedJob(msgspec.Struct, frozen=True, kw_only=True):
    """A job ready to build; builders read these values and compute nothing of their own."""

    request: Request
    workflow: WorkflowType
    scenario: str
    placement: Placement
    """The scenario on its two axes (the scheduler and the transport), worked out once."""
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
    work: Work
    slurm: SlurmParams | None = None
    persistent_mode: bool | None = None
    cluster: LoadedSlurmEnv | None = None
    warnings: tuple[str, ...] = ()
    trail: tuple[TrailEntry, ...] = ()

    @property
    def category(self) -> str:
        """The category of the job's work (a multi-node eval's is perf_sanity)."""
        return self.work.category

    def work_as(self, kind: type[W]) -> W:
        """The job's work, which a category's builder knows to be its own `kind`."""
        assert isinstance(self.work, kind), (type(self.work).__name__, kind.__name__)
        return self.work

    def plan(self) -> LaunchPlan:
        """What a scheduler backend needs of this job to lower it."""
        return LaunchPlan(
            job_name=self.job_name,
            model_name=self.model_name,
            work_dir=self.work_dir,
            log_dir=self.log_dir,
            project_path=self.project_path,
            image=self.image,
            image_enroot=self.image_enroot,
            mounts=self.mounts,
            slurm=self.slurm,
            llm_models_root=self.llm_models_root,
            install=self.install,
            install_mode=self.request.install_mode,
            wheel_path=self.request.wheel_path,
            extra_requirements=self.work.extra_requirements(),
            carried=self.work.carried(),
        )

    def explain(self) -> str:
        """The resolution trail as an aligned table: field, value, source."""
        return explain_table(self.trail)
