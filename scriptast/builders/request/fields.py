"""The job request's fields: those every category shares under the seed's names, and the part
each category owns (its commands and files). A request file keeps them all flat, side by side."""

# No `from __future__ import annotations` here or in the parts: the flat request type is made
# from these annotations at run time, and string annotations would be evaluated at each start.
from typing import ClassVar, Literal, TypeVar

import msgspec

from scriptast.contract.axes import Placement, WorkflowType, check_scenario, placement


class EnvCheck(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What trtllm-case-executor's environment check found on the host."""

    gpus_per_node: int | None = None
    available_gpus: int | None = None
    default_models_repo: str | None = None


class RequestPart(msgspec.Struct, frozen=True, kw_only=True):
    """The fields of the request that one category owns; `LOCAL_PATHS` names those that are
    files on this machine (made absolute, and never overwritten by what emit writes)."""

    LOCAL_PATHS: ClassVar[tuple[str, ...]] = ()

    def local_files(self) -> tuple[tuple[str, str], ...]:
        """(field, path) of each local file the part names."""
        return tuple((f, getattr(self, f)) for f in self.LOCAL_PATHS if getattr(self, f))


P = TypeVar("P", bound=RequestPart)


class Request(msgspec.Struct, frozen=True, kw_only=True):
    """A job request. Field names are the seed's Input table; `install` is scriptast's own
    switch for the `pip install` step; `parts` holds each category's own fields (a request file
    writes them beside these: see `scriptast schema request`)."""

    workflow_type: WorkflowType
    execution_scenario: str
    work_dir: str
    repo_root: str
    skill_dir: str | None = None
    model_name: str | None = None
    required_devices: int | None = None
    total_required_devices: int | None = None
    required_devices_per_node: int | None = None
    node_count: int | None = None
    partition: str | None = None
    account: str | None = None
    cluster_name: str | None = None
    slurm_env_file: str | None = None
    time_limit: str | None = None
    llm_models_root: str | None = None
    checkpoint_path: str | None = None
    models_path: str | None = None
    device_type: str | None = None
    persistent_mode: bool | None = None
    container_image: str | None = None
    remote_repo_path: str | None = None
    remote_work_dir: str | None = None
    remote_home: str | None = None
    env_check: EnvCheck | None = None
    install: bool = True
    skip_install: bool | None = None
    install_mode: Literal["source", "wheel"] = "source"
    wheel_path: str | None = None
    reference: str | None = None
    baseline: Literal["history"] | None = None
    hang_pattern: str | None = None
    parts: tuple[RequestPart, ...] = ()

    def __post_init__(self) -> None:
        check_scenario(self.execution_scenario)

    @property
    def placement(self) -> Placement:
        """The scenario on its two axes: the scheduler and the transport."""
        return placement(self.execution_scenario)

    def part(self, kind: type[P]) -> P:
        """The category part `kind` of this request (all its fields unset when none was given)."""
        for each in self.parts:
            if type(each) is kind:
                return each
        return kind()


SHARED_FIELDS: tuple[str, ...] = tuple(f for f in Request.__struct_fields__ if f != "parts")
PARTS_AFTER = "skill_dir"
"""The categories' fields come after this one in a request's field list (the seed's order)."""
LOCAL_PATH_FIELDS = ("work_dir", "repo_root", "skill_dir", "slurm_env_file", "reference")
HOST_PATH_FIELDS = ("checkpoint_path", "models_path")
"""Paths on the machine that runs the job: this one, or the cluster for remote_slurm."""
REMOTE_PATH_FIELDS = ("remote_repo_path", "remote_work_dir", "remote_home")
ENV_CHECK_FIELDS = EnvCheck.__struct_fields__
