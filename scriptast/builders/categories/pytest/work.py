"""pytest's work and rule: the GPUs and MPI ranks the selected tests need (the largest over
every selected test), and the folder the test runs in."""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING

import msgspec

from scriptast.builders.categories.perf_sanity.request import PerfSanityRequest
from scriptast.builders.categories.pytest.request import PytestRequest
from scriptast.builders.category import Facts, Resolution
from scriptast.builders.request.fields import Request
from scriptast.builders.resolution import model_name as names
from scriptast.builders.resolution.commands import user_command
from scriptast.builders.resolution.job import UserCommand, Work
from scriptast.builders.resolution.parallelism import (
    Parallelism,
    Sourced,
    check_max,
    requested_devices,
)
from scriptast.builders.resolution.trail import Trail
from scriptast.contract.axes import SLURM
from scriptast.errors import ResolveError

if TYPE_CHECKING:
    from scriptast.builders.categories.pytest.selection import Selection


class PytestWork(Work, frozen=True, kw_only=True, tag="pytest"):
    """The test command and the folder it runs in (None: the project folder)."""

    test: UserCommand
    workdir: str | None = None

    def commands(self) -> tuple[tuple[str, UserCommand], ...]:
        return (("test_cmd", self.test),)


def check_request(request: Request) -> None:
    """test_cmd is required."""
    if not request.part(PytestRequest).test_cmd:
        raise ResolveError("test_cmd is required for workflow_type pytest", field="test_cmd")


def route(request: Request) -> str | None:
    """A perf-sanity test (or a perf config) goes the perf_sanity way."""
    text = request.part(PytestRequest).test_cmd or ""
    if (
        "perf-sanity" in text
        or "perf_sanity" in text
        or request.part(PerfSanityRequest).perf_config_yaml
    ):
        return "perf_sanity"
    return None


def pytest_parallelism(
    file_devices: Sourced | None,
    required_devices: int | None,
    node_count: int | None,
    gpus_per_node: Sourced | None,
    mpi_ranks: Sourced | None = None,
) -> Parallelism:
    """pytest: devices from the test file, else the input, else 1; one node; one task, or
    one per MPI rank a `skip_less_mpi_world_size(N)` test needs (each rank a GPU)."""
    devices = file_devices or requested_devices(required_devices)
    ranks = mpi_ranks.value if mpi_ranks is not None and mpi_ranks.value > 1 else 1
    if ranks > devices.value:
        devices = Sourced(ranks, f"{mpi_ranks.source if mpi_ranks else ''} (one GPU a rank)")
    check_max(devices, "pytest")
    if gpus_per_node is not None and devices.value > gpus_per_node.value:
        raise ResolveError(
            f"required_devices = {devices.value} exceeds gpus_per_node = {gpus_per_node.value} "
            f"({gpus_per_node.source}); pytest does not support multi-node execution.",
            field="required_devices",
        )
    if node_count is not None and node_count > 1:
        raise ResolveError(
            f"node_count = {node_count}: pytest is always single-node (node_count must be 1).",
            field="node_count",
        )
    one = Sourced(1, "default")
    source = mpi_ranks.source if ranks > 1 and mpi_ranks else None
    return Parallelism(
        devices, ranks, one, one, Sourced(0, "default"), 1, ranks, ranks, ranks_source=source
    )


class _Needs(msgspec.Struct, frozen=True):
    devices: Sourced | None
    ranks: Sourced | None
    model: str | None = None


def _needs(request: Request, selection: Selection, trail: Trail) -> _Needs:
    """GPUs and MPI ranks the selected tests need, the largest over every test. Where the
    command chooses tests by what cannot be read (`-k`, `-m`, a directory), or a test's body
    demands a count that cannot be evaluated, required_devices decides (else 1), with a
    warning that says which number was used."""
    from scriptast.builders.categories.pytest.devices import Need, read_needs

    devices: list[Need] = []
    ranks: list[Need] = []
    unevaluated: list[str] = []
    models: list[str | None] = []
    for located in selection.files:
        trail.add("test_file", located.path, f"test path in test_cmd ({located.form})")
        needs = read_needs(located.path, located.target)
        models.append(needs.model)
        devices += [needs.devices] if needs.devices else []
        ranks += [needs.ranks] if needs.ranks else []
        unevaluated += needs.unevaluated
    found = max(devices, key=lambda n: n.count) if devices else None
    file_devices = Sourced(found.count, found.source) if found else None
    given = request.required_devices
    fallback = Sourced(given or 1, "input required_devices" if given else "default")
    if selection.uninspected:
        what = ", ".join(selection.uninspected)
        # with -k/-m, the files' largest need may be a test the option leaves out
        narrowed = any(not u.startswith("the directory ") for u in selection.uninspected)
        if narrowed or file_devices is None or fallback.value > file_devices.value:
            file_devices = fallback
        trail.warn(
            f"test_cmd selects tests scriptast cannot read ({what}); {file_devices.value} "
            f"GPU(s) ({file_devices.source}) are used"
            + (f"; the files it names need up to {found.count}" if found else "")
            + ": pass --required-devices if the selected tests need more"
        )
    elif not selection.files:
        raise ResolveError(
            f"test_cmd {request.part(PytestRequest).test_cmd!r} names no test file (a path "
            "ending in .py) and selects no test",
            field="test_cmd",
        )
    if unevaluated:
        chosen = file_devices
        if given is not None and (chosen is None or given > chosen.value):
            chosen = fallback
        used = chosen or fallback
        trail.warn(
            f"a test demands GPUs scriptast cannot evaluate ({'; '.join(unevaluated)}); "
            f"{used.value} GPU(s) ({used.source}) are used: pass --required-devices if it "
            "needs more"
        )
        file_devices = used
    rank_need = max(ranks, key=lambda n: n.count) if ranks else None
    ranks_need = Sourced(rank_need.count, rank_need.source) if rank_need else None
    return _Needs(file_devices, ranks_need, models[0] if models else None)


def resolve(facts: Facts, trail: Trail) -> Resolution:
    """GPUs and MPI ranks, the largest over every selected test; the folder the test runs in."""
    from scriptast.builders.categories.pytest.selection import read_selection, run_folder

    request = facts.request
    test_cmd = request.part(PytestRequest).test_cmd
    assert test_cmd is not None
    selection = read_selection(test_cmd, request.repo_root)
    needs = _needs(request, selection, trail)
    par = pytest_parallelism(
        needs.devices,
        request.required_devices,
        request.node_count,
        facts.gpus_per_node,
        needs.ranks,
    )
    if par.world_size > 1 and request.placement.scheduler != SLURM:
        raise ResolveError(
            f"{par.ranks_source} needs {par.world_size} MPI ranks, and "
            f"{request.execution_scenario} runs one process; run it on Slurm (local_slurm or "
            "remote_slurm), where each rank is a task",
            field="test_cmd",
        )
    folder = run_folder(selection, request.repo_root)
    workdir = None if folder is None else posixpath.join(facts.project, folder).rstrip("/")
    tested = selection.files[0].target.names if selection.files else ()
    return Resolution(
        work=PytestWork(test=user_command(test_cmd, "test_cmd"), workdir=workdir),
        parallelism=par,
        derived_name=names.from_test(tested, needs.model),
        world_source=par.ranks_source or "one task",
        ntasks_source="MPI ranks, as TRT-LLM's CI runs such tests" if par.ntasks > 1 else "1",
        gpus_per_node=facts.gpus_per_node,
        gres_need=par.required_devices.value,
    )
