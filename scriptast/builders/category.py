"""The record each workflow category fills in: its rule, builders, patterns, suffix and help."""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from scriptast.builders.request.fields import Request, RequestPart
from scriptast.builders.resolution.job import ResolvedJob, Work
from scriptast.builders.resolution.parallelism import Parallelism, Sourced
from scriptast.builders.resolution.trail import Trail
from scriptast.common.lazy import LazyFunction
from scriptast.contract.axes import SLURM, Placement
from scriptast.contract.job_spec import JobLogs
from scriptast.contract.measured import Measures
from scriptast.plan.steps import JobSteps
from scriptast.workdir.write import OutputFile


class Patterns(msgspec.Struct, frozen=True):
    """Strings whose presence in the job's log means success, and failure (the category's)."""

    success: tuple[str, ...]
    failure: tuple[str, ...]


class SharedResolution(msgspec.Struct, frozen=True, kw_only=True):
    """The shared values resolution has settled when it hands over to the category."""

    request: Request
    placement: Placement
    project: str
    log_dir: str
    gpus_per_node: Sourced | None
    models_host_path: str | None

    @property
    def is_slurm(self) -> bool:
        """True when Slurm queues the job (its cluster description sized it)."""
        return self.placement.scheduler == SLURM


class Resolution(msgspec.Struct, frozen=True, kw_only=True):
    """What a category's rule returns. `gres_need` is the GPUs a node's `--gres` asks for, or
    None when the category does not size the job (submit.py does: no --gres or --mpi then)."""

    work: Work
    parallelism: Parallelism
    derived_name: str | None
    world_source: str
    derived_source: str = "from the command"
    """Where `derived_name` comes from, as `--explain` names it."""
    ntasks_source: str = "world_size"
    gpus_per_node: Sourced | None
    gres_need: int | None


class HandOver(msgspec.Struct, frozen=True, kw_only=True):
    """A category's rule handing the job to another category (a multi-node eval, or one given
    a disaggregated config, goes the perf-sanity way): to whom, why, and what the first rule
    settled; the other category's `take_over` makes the Resolution. Categories never import
    each other: they meet here and in the request's parts."""

    to: str
    why: str
    parallelism: Parallelism
    gpus_per_node: Sourced | None
    derived_name: str | None


class LaunchFacts(msgspec.Struct, frozen=True, kw_only=True):
    """What a launch script written by submit.py says, for the fields that describe it."""

    container_name: str | None
    log_file_pattern: str
    logs: JobLogs


class Submitted(msgspec.Struct, frozen=True, kw_only=True):
    """What a category's submit program (perf_sanity's submit.py) wrote, taken back: the job
    as its launch script sizes it, the files with the launch script last, the cluster path of
    each file written there, what the script says, and the program's argv."""

    job: ResolvedJob
    files: tuple[OutputFile, ...]
    destinations: dict[str, str]
    launch: LaunchFacts
    submit_argv: tuple[str, ...]


class MountFolders(msgspec.Struct, frozen=True, kw_only=True):
    """Folders the category needs mounted besides models, home and project, and the words
    the trail adds for them."""

    folders: tuple[tuple[str, str], ...] = ()
    note: str = ""


RequestCheck = LazyFunction[[Request], None]
"""`check_request`, from a category's own module."""
RequestRoute = LazyFunction[[Request], str | None]
"""`route`."""
FolderRule = LazyFunction[[Request, str], MountFolders]
"""`mount_folders`."""
ResolveRule = LazyFunction[[SharedResolution, Trail], Resolution | HandOver]
"""`resolve`."""
TakeOverRule = LazyFunction[[SharedResolution, Trail, HandOver], Resolution]
"""`take_over`."""
StepsRule = LazyFunction[[ResolvedJob], JobSteps]
"""`steps`."""
SubmitRule = LazyFunction[[ResolvedJob], Submitted]
"""`submit`."""
MeasuresRule = LazyFunction[[ResolvedJob], Measures | None]
"""`measures`."""


def _accept(request: Request) -> None:
    """No check before the shared rules."""


def _stay(request: Request) -> str | None:
    """The request stays in its workflow's category."""
    return None


def _no_folders(request: Request, log_dir: str) -> MountFolders:
    return MountFolders()


class Category(msgspec.Struct, frozen=True, kw_only=True):
    """One workflow category. `check_request` runs first, `route` may hand the request to
    another category, `mount_folders` adds mounts, `resolve` runs after the shared rules and
    may hand the job to another category (whose `take_over` then makes its Resolution). What
    the job runs comes from `steps` (a scheduler backend lowers them to its script), or from
    `submit` (it runs a program, submit.py, that writes the launch script, and takes back what
    it wrote). A category whose jobs run on one scheduler only names it in `only_on`;
    `refusal` is the error for any other (`{scenario}` in it is the request's). `measures`
    says what the job measures and where run finds it (None: nothing; its success patterns
    judge it)."""

    name: str
    suffix: str
    cli_name: str
    cli_help: str
    docs: str
    examples: tuple[str, ...]
    options: tuple[str, ...]
    request_part: type[RequestPart]
    patterns: Patterns
    resolve: Callable[[SharedResolution, Trail], Resolution | HandOver]
    check_request: Callable[[Request], None] = _accept
    route: Callable[[Request], str | None] = _stay
    mount_folders: Callable[[Request, str], MountFolders] = _no_folders
    steps: Callable[[ResolvedJob], JobSteps] | None = None
    submit: Callable[[ResolvedJob], Submitted] | None = None
    only_on: str | None = None
    refusal: str = ""
    measures: Callable[[ResolvedJob], Measures | None] | None = None
    take_over: Callable[[SharedResolution, Trail, HandOver], Resolution] | None = None
    """The rule for a job another category's rule hands over (None: it takes none)."""
    allocation_refusal: str = ""
    """Why its jobs never run as steps of a persistent allocation (empty: they may); written
    into job_spec.json, so that run decides by the file, never by the category's name."""
    needs: tuple[str, ...] = ()
    """The request fields one of which the workflow must be given (its command)."""
