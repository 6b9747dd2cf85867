"""pytest's work and rule: the GPUs and MPI ranks the selected tests need (the largest over
every selected test), and the folder the test runs in."""

from __future__ import annotations

import posixpath
import shlex
from typing import TYPE_CHECKING

import msgspec

from scriptast.builders.category import MountFolders, Resolution, SharedResolution
from scriptast.builders.request.fields import Request
from scriptast.builders.request.parts import PerfSanityRequest, PytestRequest
from scriptast.builders.resolution import model_name as names
from scriptast.builders.resolution.commands import user_command
from scriptast.builders.resolution.job import ResolvedJob, Work
from scriptast.builders.resolution.parallelism import (
    Parallelism,
    Sourced,
    check_max,
    requested_devices,
)
from scriptast.builders.resolution.trail import Trail
from scriptast.contract.axes import SLURM
from scriptast.contract.measured import Measures
from scriptast.errors import ResolveError
from scriptast.plan.steps import UserCommand
from scriptast.readers.shellwords import Token, flag_value, tokenize

JUNIT_NAME = "results.xml"
"""The JUnit report's name in the work directory (TRT-LLM's CI judges its results.xml)."""

if TYPE_CHECKING:
    from scriptast.builders.categories.pytest.selection import Selection


class PytestWork(Work, frozen=True, kw_only=True, tag="pytest"):
    """The test command, the folder it runs in (None: the project folder) and the JUnit XML
    report it writes (None: a command scriptast cannot add `--junitxml` to)."""

    test: UserCommand
    workdir: str | None = None
    junit: str | None = None
    model: str | None = None
    """The model the selected tests declare (MODEL_NAME: the HF id), for the results store."""
    files: tuple[tuple[str, str], ...] = ()
    """(name, text) of the files a CI stage's run reads: its test list and waives."""
    said: tuple[str, ...] = ()
    """What the summary says of a CI stage's tests."""

    def commands(self) -> tuple[tuple[str, UserCommand], ...]:
        return (("test_cmd", self.test),)

    def data_files(self) -> tuple[tuple[str, str], ...]:
        return self.files

    def summary_lines(self) -> tuple[str, ...]:
        return self.said


def check_request(request: Request) -> None:
    """test_cmd is required, or a ci_stage (not both)."""
    part = request.part(PytestRequest)
    if part.only_tests is not None:
        from scriptast.builders.categories.pytest.rerun import check_test_ids

        check_test_ids(part.only_tests)
    if part.ci_stage:
        from scriptast.builders.categories.pytest.ci.stage_job import check_ci_request

        check_ci_request(part)
        return
    if part.all_splits or part.waives_file:
        raise ResolveError("all_splits and waives_file go with ci_stage: name the stage",
                           field="ci_stage")  # fmt: skip
    if not part.test_cmd:
        raise ResolveError("test_cmd is required for workflow_type pytest (or ci_stage)",
                           field="test_cmd")  # fmt: skip


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
    every_model: str | None = None
    """The model every selected test declares (its class's MODEL_NAME), when they agree."""


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
        for launched in needs.shared:
            trail.add("mpirun_ranks", launched, "ranks that share the test's GPUs, not GPUs: "
                      "upstream's test-db runs such tests on a 1-GPU stage (l0_a10)")  # fmt: skip
    found = max(devices, key=lambda n: n.count) if devices else None
    file_devices = Sourced(found.count, found.source) if found else None
    listed = _listed(request, selection, found.count if found else None, trail)
    current = file_devices.value if file_devices else (request.required_devices or 1)
    if listed is not None and listed.value > current:  # CI runs it on more than marks say
        file_devices = listed
    given = request.required_devices
    fallback = Sourced(given or 1, "input required_devices" if given else "default")
    # with -k/-m, the files' largest need may be a test the option leaves out
    narrowed = any(not u.startswith("the directory ") for u in selection.uninspected)
    if selection.uninspected:
        what = ", ".join(selection.uninspected)
        if narrowed or file_devices is None or fallback.value > file_devices.value:
            file_devices = fallback
        rank_note = ""
        if narrowed and ranks:
            most = max(ranks, key=lambda n: n.count)
            rank_note = (f"; one task, no --mpi: the {most.count} MPI ranks of {most.source} "
                         "count only for a test the selection is known to include")  # fmt: skip
        trail.warn(
            f"test_cmd selects tests scriptast cannot read ({what}); {file_devices.value} "
            f"GPU(s) ({file_devices.source}) are used"
            + (f"; the files it names need up to {found.count}" if found else "")
            + rank_note
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
    rank_need = max(ranks, key=lambda n: n.count) if ranks and not narrowed else None
    ranks_need = Sourced(rank_need.count, rank_need.source) if rank_need else None
    same = models[0] if models and all(m == models[0] for m in models) else None
    return _Needs(file_devices, ranks_need, models[0] if models else None, same)


def _listed(
    request: Request, selection: Selection, marks: int | None, trail: Trail
) -> Sourced | None:
    """The GPUs the test-db's blocks run the selected tests on, when it lists them (CI's
    count: a test that launches `mpirun -n 2` while its marks ask for 1 GPU is listed on 2);
    each disagreement with the marks is a warning."""
    from scriptast.builders.categories.pytest.ci.listed import test_db_gpus
    from scriptast.builders.categories.pytest.selection import DEFS

    if not request.repo_root:
        return None
    defs = posixpath.join(request.repo_root, DEFS)
    ids = []
    for located in selection.files:
        relative = posixpath.relpath(str(located.path), defs)
        if relative.startswith("..") or not located.target.names:
            continue
        target = located.target
        param = f"[{target.param_id}]" if target.param_id is not None else ""
        ids.append("::".join((relative, *target.names)) + param)
    listed = test_db_gpus(request.repo_root, ids, marks)
    for disagreement in listed.disagreements:
        trail.warn(f"the marks, the id and the test-db disagree: {disagreement}")
    if listed.gpus is None:
        return None
    trail.add("test_db", listed.gpus, listed.source)
    return Sourced(listed.gpus, listed.source)


def with_junit(command: UserCommand, log_dir: str, cwd: str) -> tuple[UserCommand, str | None]:
    """The test command writing a JUnit XML report, and the report's path: its own
    `--junitxml`, else `--junitxml=<log_dir>/results.xml` added (the name TRT-LLM's CI gives
    it). A command that is not one pytest run (an `&&`, a pipe, a redirection) is left as it
    is, with no report known."""
    tokens = tokenize(command.text, "test_cmd")
    if any(t.kind != "word" for t in tokens):
        return command, None
    words = tuple(t.value for t in tokens)
    if not words or not _runs_pytest(words):
        return command, None
    own = _own_junit(tokens)
    if own is not None:
        path, expands = own
        return command, None if expands else posixpath.normpath(posixpath.join(cwd, path))
    junit = posixpath.join(log_dir, JUNIT_NAME)
    flag = f"--junitxml={junit}"
    text = f"{command.text} {shlex.quote(flag)}"
    argv = None if command.argv is None else (*command.argv, flag)
    return UserCommand(text=text, argv=argv, redirects=command.redirects), junit


def _own_junit(tokens: list[Token]) -> tuple[str, bool] | None:
    """The command's own `--junitxml` (the last one), and whether the shell expands it."""
    found = None
    for index, token in enumerate(tokens):
        for name in ("--junitxml", "--junit-xml"):
            if token.value.startswith(name + "="):
                found = (token.value[len(name) + 1 :], token.expands)
            elif token.value == name and index + 1 < len(tokens):
                found = (tokens[index + 1].value, tokens[index + 1].expands)
    return found


def _runs_pytest(argv: tuple[str, ...]) -> bool:
    program = posixpath.basename(argv[0])
    if program in ("pytest", "py.test"):
        return True
    return program.startswith("python") and argv[1:3] == ("-m", "pytest")


def mount_folders(request: Request, log_dir: str) -> MountFolders:
    """The work directory, where the JUnit report is written."""
    return MountFolders(folders=((log_dir, "work directory (the JUnit report)"),))


def resolve(facts: SharedResolution, trail: Trail) -> Resolution:
    """GPUs and MPI ranks, the largest over every selected test; the folder the test runs in."""
    from scriptast.builders.categories.pytest.selection import read_selection, run_folder

    request = facts.request
    if request.part(PytestRequest).ci_stage:
        return _stage_resolution(facts, trail)
    test_cmd = request.part(PytestRequest).test_cmd
    assert test_cmd is not None
    only = request.part(PytestRequest).only_tests
    if only:
        from scriptast.builders.categories.pytest.rerun import narrowed_command

        test_cmd = narrowed_command(test_cmd, only, request.repo_root, trail)
    selection = read_selection(test_cmd, request.repo_root)
    needs = _needs(request, selection, trail)
    par = pytest_parallelism(
        needs.devices,
        request.required_devices,
        request.node_count,
        facts.gpus_per_node,
        needs.ranks,
    )
    if par.world_size > 1 and facts.placement.scheduler != SLURM:
        raise ResolveError(
            f"{par.ranks_source} needs {par.world_size} MPI ranks, and "
            f"{request.execution_scenario} runs one process; run it on Slurm (local_slurm or "
            "remote_slurm), where each rank is a task",
            field="test_cmd",
        )
    folder = run_folder(selection, request.repo_root)
    workdir = None if folder is None else posixpath.join(facts.project, folder).rstrip("/")
    tested = selection.files[0].target.names if selection.files else ()
    test, junit = with_junit(
        user_command(test_cmd, "test_cmd"), facts.log_dir, workdir or facts.project
    )
    if junit is not None:
        trail.add("junit", junit, "--junitxml of test_cmd, else added in the work directory")
    return Resolution(
        work=PytestWork(test=test, workdir=workdir, junit=junit, model=needs.every_model),
        parallelism=par,
        derived_name=names.from_test(tested, needs.model),
        world_source=par.ranks_source or "one task",
        ntasks_source="MPI ranks, as TRT-LLM's CI runs such tests" if par.ntasks > 1 else "1",
        gpus_per_node=facts.gpus_per_node,
        gres_need=par.required_devices.value,
    )


def _stage_resolution(facts: SharedResolution, trail: Trail) -> Resolution:
    """A CI stage: its tests, its GPUs and nodes (the seed's pytest limits hold: one node, at
    most 8 GPUs), pytest as CI runs it in tests/integration/defs."""
    from scriptast.builders.categories.pytest.ci.stage_job import (
        TEST_LIST,
        WAIVES_COPY,
        stage_run,
        stage_size,
    )
    from scriptast.builders.categories.pytest.selection import DEFS

    request = facts.request
    part = request.part(PytestRequest)
    assert part.ci_stage is not None and request.repo_root is not None
    stage, devices, nodes = stage_size(request.repo_root, part.ci_stage)
    if request.required_devices is not None and request.required_devices != devices.value:
        trail.warn(f"required_devices {request.required_devices} is not the stage's: "
                   f"{devices.value} GPU(s) ({devices.source}) are used")  # fmt: skip
    try:
        par = pytest_parallelism(devices, None, nodes, facts.gpus_per_node)
    except ResolveError as error:
        raise ResolveError(f"ci_stage {part.ci_stage} runs on {nodes} node(s) with "
                           f"{devices.value} GPU(s) ({stage.path}), and a pytest job "
                           f"cannot: {error}", field="ci_stage") from None  # fmt: skip
    run = stage_run(request.repo_root, facts.project, facts.log_dir, stage, part.waives_file,
                    trail, part.only_tests)  # fmt: skip
    trail.add("node_count", nodes, f"nodeCount of {stage.config.name} in {stage.path} (1 when "
                                   "absent, as CI)")  # fmt: skip
    trail.add("junit", run.junit, "--junit-xml of the stage's pytest command")
    work = PytestWork(test=run.command, workdir=posixpath.join(facts.project, DEFS),
                      junit=run.junit,
                      files=((TEST_LIST, run.test_list), (WAIVES_COPY, run.waives)),
                      said=_stage_tests(run.test_list, posixpath.join(request.work_dir, TEST_LIST),
                                        stage.split, stage.config.splits,
                                        bool(part.only_tests)))  # fmt: skip
    return Resolution(
        work=work,
        parallelism=par,
        derived_name=names.normalize_model_name(part.ci_stage),
        derived_source="from the CI stage's name",
        world_source="one pytest process, as CI runs a stage",
        gpus_per_node=facts.gpus_per_node,
        gres_need=par.required_devices.value,
    )


SHOWN_TESTS = 3


def _stage_tests(listed: str, path: str, split: int, splits: int, narrowed: bool
                 ) -> tuple[str, ...]:  # fmt: skip
    """The summary's lines of a CI stage: how many test lines its list holds, the first ones,
    which split of them pytest-split runs, and where the whole list is."""
    lines = [line.split(" ", 1)[0] for line in listed.splitlines() if line.strip()]
    shown = ", ".join(lines[:SHOWN_TESTS]) + (", ..." if len(lines) > SHOWN_TESTS else "")
    how = ("all of them (narrowed to the tests asked for, not split)" if narrowed or splits == 1
           else f"split {split} of {splits} of them, which pytest-split (least_duration) "
           "chooses as CI does when the job starts")  # fmt: skip
    return (
        f"Tests: {len(lines)} test line(s) in the stage's list: {shown}",
        f"Runs: {how}; the whole list: {path}",
    )


def measures(job: ResolvedJob) -> Measures | None:
    """The JUnit report the test command writes (None: it writes none scriptast knows of)."""
    work = job.work_as(PytestWork)
    if work.junit is None:
        return None
    argv = list(work.test.argv or ())
    return Measures(kind="pytest", junit=work.junit, gpu_type=job.request.device_type,
                    test_prefix=flag_value(argv, "--test-prefix"), model=work.model)  # fmt: skip
