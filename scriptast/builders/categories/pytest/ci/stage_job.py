"""A pytest job that reproduces a CI stage (`ci_stage`): the stage's tests from the test-db
into `<work_dir>/test_list.txt`, the job sized from the stage's GPU and node count, and pytest
run as L0_Test.groovy runs it, every flag with where it came from."""

from __future__ import annotations

import os
import posixpath
import shlex

import msgspec

from scriptast.builders.categories.pytest.ci.conditions import stage_query
from scriptast.builders.categories.pytest.ci.stages import Stage, find_stage
from scriptast.builders.categories.pytest.ci.testdb_match import select
from scriptast.builders.categories.pytest.ci.waives import check_waives, default_waives
from scriptast.builders.categories.pytest.selection import DEFS
from scriptast.builders.request.parts import PytestRequest
from scriptast.builders.resolution.parallelism import Sourced
from scriptast.builders.resolution.trail import Trail
from scriptast.errors import InputError
from scriptast.plan.steps import UserCommand

TEST_LIST = "test_list.txt"
WAIVES_COPY = "waives.txt"
DURATIONS = ".test_durations"
PYTEST_TIMEOUT = 3600
"""L0_Test.groovy's pytestTestTimeout: a test's `TIMEOUT (N)` in the list overrides it (the
repository's conftest reads the list)."""


class StageRun(msgspec.Struct, frozen=True, kw_only=True):
    """What a stage gives the job: its test list's and waives' texts, the command, its JUnit."""

    stage: Stage
    test_list: str
    waives: str
    command: UserCommand
    junit: str


def _flag(trail: Trail, argv: list[str], words: list[str], source: str) -> None:
    argv += words
    trail.add("pytest_flag", " ".join(words), source)


def stage_size(request_repo: str, name: str) -> tuple[Stage, Sourced, int]:
    """The stage `name`, its GPUs (with their source) and its nodes."""
    stage = find_stage(request_repo, name)
    devices = Sourced(stage.config.gpuCount, f"gpuCount of {stage.config.name} in "
                      f"{stage.path} (1 when absent, as CI)")  # fmt: skip
    return stage, devices, stage.config.nodeCount


def stage_run(request_repo: str, project: str, log_dir: str, stage: Stage,
              waives_file: str | None, trail: Trail,
              only_tests: tuple[str, ...] | None = None) -> StageRun:  # fmt: skip
    """The stage as CI runs it: read from `request_repo` (this machine's checkout), run in
    `project` (the checkout where the job runs) with its files in `log_dir`; with
    `only_tests`, its list narrowed to them and not split."""
    name, config = stage.name, stage.config
    runs = (
        "with sbatch (runWithSbatch)"
        if config.runWithSbatch
        else "on a Slurm allocation"
        if config.slurm
        else "on Kubernetes (slurm false)"
    )
    split = f"split {stage.split} of {config.splits}"
    trail.add("ci_stage", name, f"{stage.path}: family {config.name}, {split}; CI runs it "
                                f"{runs}, on {config.platform}")  # fmt: skip
    query: dict[str, str] = {}
    for key, value, why in stage_query(name):
        query[key] = value
        trail.add(f"test_db_query.{key}", value, f"getMakoArgsFromStageName: {why}")
    selected = select(request_repo, config.testDB, query)
    if not selected.lines:
        raise InputError(f"ci_stage {name}: no block of {selected.path} matches the stage "
                         f"({', '.join(f'{k}={v}' for k, v in query.items())}): CI would run no "
                         "test there", field="ci_stage")  # fmt: skip
    trail.add(
        "test_list",
        f"{len(selected.lines)} test line(s)",
        f"{selected.path}: blocks at lines {', '.join(map(str, selected.blocks))}",
    )
    lines = _narrowed(selected.lines, only_tests, name, trail)
    waives = waives_file or default_waives(request_repo)
    waived, waives_text = check_waives(waives)
    whose = "request waives_file" if waives_file else "the repository's"
    trail.add("waives_file", waives, f"{whose}, {waived} waived; copied into the work "
                                     f"directory as {WAIVES_COPY}, as CI copies it")  # fmt: skip
    defs = posixpath.join(project, DEFS)
    listed = posixpath.join(log_dir, TEST_LIST)
    junit = posixpath.join(log_dir, "results.xml")
    argv = ["pytest"]
    groovy = "as L0_Test.groovy runs pytest"
    _flag(trail, argv, ["-v", "--timeout-method=thread"], groovy)
    timeout = f"{groovy} (pytestTestTimeout; a test's TIMEOUT (N) in the list wins)"
    _flag(trail, argv, [f"--timeout={PYTEST_TIMEOUT}"], timeout)
    _flag(
        trail, argv, [f"--test-list={listed}"], f"the stage's list, rendered from {selected.path}"
    )
    if not only_tests:
        _flag(trail, argv, ["--splitting-algorithm", "least_duration", "--splits",
                            str(config.splits), "--group", str(stage.split)],
              f"the stage's split {stage.split} of {config.splits} ({stage.path})")  # fmt: skip
    durations = posixpath.join(request_repo, DEFS, DURATIONS)
    if os.path.isfile(durations) and not only_tests:
        _flag(
            trail,
            argv,
            ["--durations-path", posixpath.join(defs, DURATIONS)],
            "the repository's durations file (pytest-split's least_duration)",
        )
    _flag(
        trail,
        argv,
        [f"--waives-file={posixpath.join(log_dir, WAIVES_COPY)}"],
        "the waives file above, in the work directory",
    )
    _flag(trail, argv, ["--rootdir", defs], groovy)
    _flag(trail, argv, [f"--test-prefix={name}"], f"{groovy} (the stage's name)")
    _flag(trail, argv, [f"--output-dir={log_dir}/"], "the work directory (mounted)")
    _flag(trail, argv, ["--junit-xml", junit, "-o", "junit_logging=out-err"],
          f"{groovy}; run judges every test from it")  # fmt: skip
    if "-Ray-" in name:
        _flag(trail, argv, ["--run-ray"], f"{groovy} for a -Ray- stage")
    return StageRun(stage=stage, test_list="".join(f"{line}\n" for line in lines),
                    waives=waives_text,
                    command=UserCommand(text=shlex.join(argv), argv=tuple(argv)),
                    junit=junit)  # fmt: skip


def _narrowed(lines: tuple[str, ...], only_tests: tuple[str, ...] | None, stage: str,
              trail: Trail) -> tuple[str, ...]:  # fmt: skip
    if not only_tests:
        return lines
    from scriptast.builders.categories.pytest.rerun import narrowed_list

    return narrowed_list(lines, only_tests, stage, trail)


def check_ci_request(part: PytestRequest) -> None:
    """A stage writes its own pytest command."""
    if part.ci_stage and part.test_cmd:
        raise InputError("ci_stage writes the stage's pytest command: drop test_cmd (or drop "
                         "ci_stage to run your own)", field="test_cmd")  # fmt: skip
