"""The contract between emit and run: job_spec.json's schema types every property, the scenario
is mapped onto its two axes in one table, slurm_env is typed for reading yet written verbatim,
and the executor learns the logs and the remote flag from job_spec.json, not from the script."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import msgspec
import pytest

from scriptast.builders.read_request import build_request
from scriptast.contract.axes import PLACEMENTS, ExecutionScenario, WorkflowType, placement
from scriptast.contract.job_spec import JobSpec
from scriptast.contract.slurm_env import SlurmEnv
from scriptast.errors import InputError
from scriptast.executor.job_files import load_job
from scriptast.pipeline.emit_job import generate, write_outputs
from scriptast.schedulers.registry import scheduler
from tests.site import Site

ROOT = Path(__file__).resolve().parent.parent
TYPED = ("type", "$ref", "enum", "anyOf")


def _untyped(schema: dict[str, Any]) -> list[str]:
    """Every property of every definition without a type, and every object without its
    properties (an object with no properties holds whatever it is given)."""
    found = []
    for name, definition in schema["$defs"].items():
        for field, prop in definition.get("properties", {}).items():
            for each in prop.get("anyOf", [prop]):
                if not any(key in each for key in TYPED):
                    found.append(f"{name}.{field}")
                if each.get("type") == "object" and not (
                    "properties" in each or "additionalProperties" in each
                ):
                    found.append(f"{name}.{field} (an object without properties)")
    return found


def _schema(name: str) -> dict[str, Any]:
    done = subprocess.run(
        [str(ROOT / ".venv/bin/scriptast"), "schema", name], capture_output=True, check=True
    )
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def test_the_job_spec_schema_has_no_untyped_property() -> None:
    schema = _schema("job-spec")
    assert _untyped(schema) == []
    spec = schema["$defs"]["JobSpec"]["properties"]
    assert spec["workflow_type"] == {"$ref": "#/$defs/WorkflowType"}
    # text checked against the registry of placements, its values listed from it
    assert spec["execution_scenario"] == {"type": "string", "enum": list(PLACEMENTS)}
    assert list(PLACEMENTS) == ["local_docker", "local_slurm", "remote_slurm"]
    run = _schema("run")["$defs"]["RunRecord"]["properties"]["execution_scenario"]
    assert {"type": "string", "enum": list(PLACEMENTS)} in run["anyOf"]
    assert set(schema["$defs"]["WorkflowType"]["enum"]) == {w.value for w in WorkflowType}
    env = spec["slurm_env"]["anyOf"][0]
    assert env == {"$ref": "#/$defs/SlurmEnv"}
    assert {"user", "partitions", "pmix", "ssh_host"} <= set(
        schema["$defs"]["SlurmEnv"]["properties"]
    )


def test_the_untyped_check_sees_an_untyped_property() -> None:
    class Loose(msgspec.Struct):
        anything: Any
        bag: dict[str, Any]

    found = _untyped(msgspec.json.schema(Loose))
    assert found == ["Loose.anything", "Loose.bag (an object without properties)"]


def test_the_run_record_schema_has_no_untyped_property() -> None:
    assert _untyped(_schema("run")) == []


def test_each_scenario_is_one_placement_on_the_two_axes() -> None:
    assert {str(s) for s in ExecutionScenario} == set(PLACEMENTS)
    assert (placement("local_slurm").scheduler, placement("local_slurm").transport) == (
        "slurm",
        "local",
    )
    assert placement("remote_slurm").remote and not placement("local_docker").remote
    with pytest.raises(InputError, match="execution_scenario 'cloud' is not one of"):
        placement("cloud")


def _emitted(site: Site, **fields: Any) -> tuple[dict[str, Any], Path]:
    request = build_request(
        site.fields(workflow_type="bench", bench_cmd="trtllm-bench --model m throughput", **fields),
        {},
    )
    output = generate(request, machine="x86_64", home=str(site.home))
    write_outputs(output)
    work = Path(output.job.work_dir)
    data: dict[str, Any] = json.loads((work / "job_spec.json").read_text())
    return data, work


def test_slurm_env_is_written_verbatim_and_read_typed(site: Site) -> None:
    env = json.loads(Path(site.slurm_env).read_text())
    env["site_extra"] = {"kept": [1, 2]}
    env["ssh_host"] = "login.example"
    Path(site.slurm_env).write_text(json.dumps(env))
    written, work = _emitted(site)
    assert written["slurm_env"] == env  # unknown keys too, as the file held them
    job = load_job(str(work))
    assert isinstance(job.spec.slurm_env, SlurmEnv)
    assert job.spec.slurm_env.front_door == "login.example"
    assert job.spec.workflow_type is WorkflowType.bench


def test_the_logs_and_the_axes_are_written_by_emit_and_read_by_run(site: Site) -> None:
    written, work = _emitted(site)
    assert (written["scheduler"], written["transport"]) == ("slurm", "local")
    out = f"{work}/m_bench_%j.out"
    assert written["logs"] == {
        "output": out,
        "error": f"{work}/m_bench_%j.err",
        "job_name": "m_bench",
    }
    job = load_job(str(work))
    # run takes the log names from job_spec.json: a script whose header says otherwise changes
    # nothing (the digests refuse such a script anyway)
    script = Path(job.script)
    script.write_text(script.read_text().replace("_%j.out", "_other_%j.out"))
    assert scheduler("slurm").launcher().log_files(job, "42") == (
        f"{work}/m_bench_42.out",
        f"{work}/m_bench_42.err",
    )
    assert job.spec.transport == "local"


def test_a_remote_job_says_so_in_its_job_spec(site: Site) -> None:
    written, work = _emitted(
        site,
        execution_scenario="remote_slurm",
        remote_repo_path="/lustre/u/TensorRT-LLM",
        remote_work_dir="/lustre/u/work",
        remote_home="/lustre/u",
    )
    assert (written["scheduler"], written["transport"]) == ("slurm", "ssh")
    assert written["logs"]["output"] == "/lustre/u/work/m_bench_%j.out"
    assert load_job(str(work)).spec.transport == "ssh"


def test_a_job_spec_without_the_contracts_fields_is_refused(site: Site) -> None:
    from scriptast.errors import RunError

    written, work = _emitted(site)
    del written["logs"]
    (work / "job_spec.json").write_text(json.dumps(written))
    with pytest.raises(RunError, match="was not written by this version of scriptast"):
        load_job(str(work))
    # files, then array and processes last: a sweep's task is told its array (a docker job:
    # its processes) in a job_spec.json written before (pipeline/sweep_arrays.py puts the
    # field last of emit's own, and a job has one of the two)
    assert JobSpec.__struct_fields__[-3:] == ("files", "array", "processes")
