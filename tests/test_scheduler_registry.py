"""A scheduler is one folder and one registry line: a toy backend (mpirun on this host), registered
here with a scenario that places jobs on it, lowers every category's steps and runs through emit
(resolve, verify, job_spec.json, the summary) with no edit in any category; the scheduler and
transport seams keep apart."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import scriptast
from scriptast.builders.read_request import build_request
from scriptast.contract import axes
from scriptast.contract.job_spec import JobLogs
from scriptast.contract.run_record import JobState
from scriptast.emitters.bash import BashEmitter
from scriptast.errors import InputError
from scriptast.model.script import Script
from scriptast.model.statements import Comment, ShellStatement, cmd
from scriptast.pipeline.emit_job import generate
from scriptast.plan.launch import LaunchPlan
from scriptast.plan.steps import JobSteps
from scriptast.schedulers import registry
from scriptast.schedulers.backend import Lowered, SchedulerBackend
from scriptast.schedulers.shell import install_commands, payload, statements
from tests.site import Site

PACKAGE = Path(scriptast.__file__).resolve().parent
ROOT = Path(__file__).resolve().parent.parent


def _lower(job: LaunchPlan, planned: JobSteps) -> Lowered:
    """Each step as `mpirun -np N bash -c '...'` on this host, one after another."""
    body: list[ShellStatement] = list(install_commands(job)) if job.install else []
    for step in planned.steps:
        inner = [each for a in step.actions for each in statements(job, a, step.tasks)]
        text = BashEmitter().payload_text(payload(*inner))
        body.append(cmd("mpirun", "-np", str(step.tasks), "bash", "-c", text))
    script = Script(header=(Comment(text=f"{planned.title}, run with mpirun."),), body=tuple(body))
    logs = JobLogs(output=f"{job.work_dir}/{job.job_name}.log")
    return Lowered(main_name="run_job.sh", main=script, logs=logs)


TOY = SchedulerBackend(
    name="mpirun",
    lower=_lower,
    states={"RUNNING": JobState.RUNNING, "DONE": JobState.COMPLETED},
)


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(registry, "SCHEDULERS", dict(registry.SCHEDULERS))
    registry.register(TOY)
    # the one table every reader holds, grown in place (and put back after)
    monkeypatch.setitem(axes.PLACEMENTS, "local_mpirun", axes.Placement("mpirun", axes.LOCAL))
    yield


def _toy_request(site: Site, **fields: Any) -> Any:
    docker_free = {"slurm_env_file": None, "partition": None, "account": None}
    return build_request(
        site.fields(execution_scenario="local_mpirun", env_check={"gpus_per_node": 8},
                    **docker_free, **fields),
        {},
    )  # fmt: skip


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        (
            {"workflow_type": "bench", "bench_cmd": "trtllm-bench --model m throughput --tp 2"},
            "mpirun -np 2 bash -c",
        ),
        (
            {"workflow_type": "eval", "eval_cmd": "trtllm-eval --model /m/x gsm8k"},
            "mpirun -np 1 bash -c",
        ),
        (
            {"workflow_type": "custom", "custom_cmd": "echo hi", "required_devices": 2},
            "mpirun -np 2 bash -c",
        ),
    ],
)
def test_a_registered_scheduler_runs_through_emit(
    site: Site, registered: None, fields: dict[str, Any], expected: str
) -> None:
    output = generate(_toy_request(site, **fields), home=str(site.home))
    main = next(f for f in output.files if f.path == output.main_script)
    assert main.path.endswith("/run_job.sh") and expected in main.text
    assert "# TRT-LLM" in main.text and "run with mpirun." in main.text
    assert (output.job_spec.scheduler, output.job_spec.transport) == ("mpirun", "local")
    assert output.job_spec.logs.output.endswith(".log") and output.job_spec.slurm_params is None
    assert "Workflow: " in output.summary


def test_a_category_that_only_slurm_runs_is_refused_elsewhere(site: Site, registered: None) -> None:
    from scriptast.errors import ResolveError

    config = site.repo / "tests/scripts/perf-sanity/aggregated/llama_8b_aggr.yaml"
    with pytest.raises(ResolveError, match="need Slurm: local_mpirun is not supported"):
        generate(
            _toy_request(site, workflow_type="perf_sanity", perf_config_yaml=str(config)),
            home=str(site.home),
        )


def test_a_backend_maps_its_states_through_one_table() -> None:
    slurm = registry.scheduler("slurm")
    assert slurm.state("CANCELLED by 0") is JobState.CANCELLED
    assert slurm.state("COMPLETING") is JobState.RUNNING and not JobState.RUNNING.final
    assert slurm.state("NODE_FAIL") is JobState.NODE_FAIL
    assert slurm.state("SOMETHING_NEW") is JobState.UNKNOWN
    assert TOY.state("DONE") is JobState.COMPLETED


def test_a_name_is_registered_once_and_an_unknown_one_is_one_error() -> None:
    with pytest.raises(ValueError, match="registered already"):
        registry.register(registry.scheduler("slurm"))
    with pytest.raises(InputError, match="no scheduler backend 'pbs'; known: slurm, docker"):
        registry.scheduler("pbs")


def _imports(folder: str) -> set[str]:
    found: set[str] = set()
    for path in (PACKAGE / folder).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                found.add(node.module)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
    return found


def test_the_schedulers_and_the_transports_never_import_each_other() -> None:
    assert not any(m.startswith("scriptast.transports") for m in _imports("schedulers"))
    assert not any(m.startswith("scriptast.schedulers") for m in _imports("transports"))


def test_only_the_placement_table_names_the_scenarios() -> None:
    named = {"local_docker", "local_slurm", "remote_slurm"}
    found = []
    for path in PACKAGE.rglob("*.py"):
        if path.relative_to(PACKAGE).parts[0] in ("contract", "cli"):
            continue  # the table itself; the command line's help texts
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in named:
                found.append(f"{path.relative_to(PACKAGE)}: {node.attr}")
            elif isinstance(node, ast.Constant) and node.value in named:
                found.append(f"{path.relative_to(PACKAGE)}: {node.value!r}")
    assert found == []


def test_the_command_line_builds_no_client_and_names_no_backend() -> None:
    """The CLI reaches schedulers and transports through the executor and the registries, never
    a backend's or a transport's own module (it builds no client)."""
    named = []
    for path in sorted((PACKAGE / "cli").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                parts = node.module.split(".")
                if parts[:2] in (["scriptast", "schedulers"], ["scriptast", "transports"]) and (
                    len(parts) > 2 and parts[2] not in ("registry", "backend")
                ):
                    named.append(f"{path.relative_to(PACKAGE)} -> {node.module}")
    assert not named


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The scriptast command line as a process of its own, with the `here` backend registered
    (tests/here_backend.py: what a site's plugin does)."""
    return subprocess.run([sys.executable, "-m", "tests.here_backend", *args], cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
                          text=True, timeout=120)  # fmt: skip


def test_a_registered_process_backend_emits_and_runs_to_a_verdict(
    site: Site, tmp_path: Path
) -> None:
    """A request naming the new scenario is read; its job_spec.json decodes; `run` launches
    the backend's script as a process and judges it (PASSED, then FAILED with the script's exit
    code); `run --detach` then `watch` follows it again by the launch kind run.json names."""
    import json

    verdicts = []
    for name, command in (("ok", "echo measured 42"), ("bad", "echo broken; exit 3")):
        work = tmp_path / name
        request = tmp_path / f"{name}.json"
        request.write_text(json.dumps(site.fields(
            execution_scenario="local_here", workflow_type="custom", custom_cmd=command,
            install=False, work_dir=str(work), slurm_env_file=None, partition=None,
            account=None, env_check={"gpus_per_node": 1})))  # fmt: skip
        emitted = _cli("emit", "--request", str(request))
        assert emitted.returncode == 0, emitted.stderr
        spec = json.loads((work / "job_spec.json").read_text())
        assert (spec["execution_scenario"], spec["scheduler"]) == ("local_here", "here")
        ran = _cli("run", str(work))
        found = json.loads((work / "run.json").read_text())
        verdicts.append((ran.returncode, found["verdict"], found["launch"], found.get("exit_code")))
        assert Path(found["out_log"]).read_text().startswith(command.split(";")[0][5:])
    assert verdicts == [(0, "PASSED", "process", 0), (10, "FAILED", "process", 3)]
    detached = _cli("run", str(tmp_path / "ok"), "--detach")
    assert detached.returncode == 0, detached.stderr
    watched = _cli("watch", str(tmp_path / "ok"))
    assert watched.returncode == 0, watched.stdout + watched.stderr
    assert json.loads((tmp_path / "ok" / "run.json").read_text())["verdict"] == "PASSED"


def test_a_job_spec_naming_no_registered_scenario_is_refused_in_one_line(
    site: Site, tmp_path: Path
) -> None:
    import json

    work = tmp_path / "gone"
    request = tmp_path / "gone.json"
    request.write_text(json.dumps(site.fields(
        execution_scenario="local_here", workflow_type="custom", custom_cmd="true",
        install=False, work_dir=str(work), slurm_env_file=None, partition=None, account=None,
        env_check={"gpus_per_node": 1})))  # fmt: skip
    assert _cli("emit", "--request", str(request)).returncode == 0
    spec = json.loads((work / "job_spec.json").read_text())
    (work / "job_spec.json").write_text(json.dumps({**spec, "execution_scenario": "local_nowhere"}))
    refused = _cli("run", str(work))
    assert refused.returncode == 2 and len(refused.stderr.splitlines()) == 1, refused.stderr
    assert (
        "execution_scenario 'local_nowhere' is not one of local_docker, local_slurm, "
        "remote_slurm, local_here" in refused.stderr
    )
    assert not (work / "run.json").exists()


def test_the_executor_reaches_backends_through_the_seam() -> None:
    """The executor imports no module of a backend's own folder: it reaches each through the
    registry and the record the backend fills (its client, states, allocations)."""
    named = set()
    for path in sorted((PACKAGE / "executor").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                parts = node.module.split(".")
                if parts[:2] == ["scriptast", "schedulers"] and len(parts) > 3:
                    named.add(str(path.relative_to(PACKAGE)))
    assert named == set()


def test_run_loads_no_builder_emitter_or_pipeline() -> None:
    """The executor and the backends it loads (their clients, states and allocations) stand
    beside the builders: run lowers nothing, so none of the builders', emitters' or
    pipeline's modules is loaded (a backend's lowering is loaded by emit only)."""
    code = (
        "import sys, scriptast.executor.run, scriptast.executor.allocations\n"
        "from scriptast.schedulers.registry import every_scheduler\n"
        "for backend in every_scheduler(): backend.client and backend.allocations\n"
        "for backend in every_scheduler(): backend.launcher()\n"
        "print(sorted(m for m in sys.modules if m.startswith(('scriptast.builders', "
        "'scriptast.emitters', 'scriptast.pipeline'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[]\n"


def test_each_lazily_named_part_of_a_shipped_backend_is_there() -> None:
    """A backend names its lowering, launcher, client and allocation functions by module and name; each
    of them imports and is callable (a misspelt name would fail only when first used)."""
    import inspect

    from scriptast.common.lazy import LazyFunction

    checked = 0
    for backend in registry.every_scheduler():
        parts: list[object] = [backend.lower, backend.launcher, backend.client]
        if backend.allocations is not None:
            capability = backend.allocations
            parts += [capability.held, capability.release, capability.acquire,
                      capability.step_env, capability.dry_run]  # fmt: skip
        for part in parts:
            if isinstance(part, LazyFunction):
                assert callable(part.resolved()), (backend.name, part.name)
                assert inspect.signature(part.resolved()) is not None
                checked += 1
    # slurm: lower, launcher, client and five allocation parts; docker: lower and launcher
    assert checked == 10
