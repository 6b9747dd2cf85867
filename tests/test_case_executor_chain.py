"""scriptast as the script builder of upstream's chain (NVIDIA/TensorRT-LLM `.claude/skills/`):
trtllm-case-executor (9f6399f2) calls it with the fields of its Step 4 and stores the image it
resolved in job_spec.json first; exec-local-slurm (b744e0a5), exec-remote-slurm (af047f4a) and
exec-local-docker (f906c8e8) then read job_spec.json. The readers below are written from those
skills' own input tables, not from scriptast's types."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scriptast.builders.read_request import build_request
from scriptast.pipeline.emit_job import Output, generate, write_outputs
from tests.cases import CASES
from tests.site import Site
from tests.test_categories import site_fields

BENCH = "trtllm-bench --model meta-llama/Llama-3.1-8B-Instruct throughput --tp 2"


def _emit(site: Site, **fields: Any) -> Output:
    request = build_request(site.fields(workflow_type="bench", bench_cmd=BENCH, **fields), {})
    return generate(request, machine="x86_64", home=str(site.home))


def _spec(output: Output) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(next(f.text for f in output.files
                                           if f.path.endswith("job_spec.json")))  # fmt: skip
    return data


def _main(output: Output) -> str:
    return next(f.text for f in output.files if f.path == output.main_script)


def test_the_case_executors_step_4_fields_are_taken_each_by_its_rule(site: Site) -> None:
    """total_required_devices, required_devices_per_node, skip_install, skill_dir and
    node_count, as case-executor passes them: no field is refused; each feeds its rule."""
    output = _emit(site, total_required_devices=2, required_devices_per_node=2,
                   skip_install=True, skill_dir="/opt/skills/trtllm-test-script-builder",
                   node_count=1)  # fmt: skip
    trail = {e.field: (e.value, e.source) for e in output.job.trail}
    assert trail["total_required_devices"][1].endswith("taken as required_devices")
    assert trail["install"][0] == "False" and output.job.install is False
    assert "pip install" not in _main(output)
    assert output.job.warnings == ()


def test_a_caller_field_the_rules_disagree_with_is_a_warning_naming_the_winner(
    site: Site,
) -> None:
    output = _emit(site, total_required_devices=4, required_devices=2,
                   required_devices_per_node=8)  # fmt: skip
    assert output.job.warnings == (
        "total_required_devices = 4 and required_devices = 2 disagree: required_devices is "
        "used (the seed's field); pass one of them",
        "required_devices_per_node = 8 (trtllm-case-executor) differs from the 2 GPU(s) a node "
        "the rules give the job (--gres=gpu:N a node); 2 is used, since the script is sized by "
        "the rules: pass required_devices (or node_count) to change it",
    )
    assert "#SBATCH --gres=gpu:2" in _main(output)


@pytest.mark.parametrize(
    ("given", "in_script"),
    [("nvcr.io/nvidia/pytorch:25.01-py3", "nvcr.io#nvidia/pytorch:25.01-py3"),
     ("nvcr.io#nvidia/pytorch:25.01-py3", "nvcr.io#nvidia/pytorch:25.01-py3")],
)  # fmt: skip
def test_the_callers_container_image_is_stored_as_given(site: Site, given: str, in_script: str
                                                         ) -> None:  # fmt: skip
    """job_spec.json's container_image is the caller's, verbatim; pyxis's `registry#path` is
    written only where pyxis reads it, in the script."""
    output = _emit(site, container_image=given)
    assert _spec(output)["container_image"] == given
    assert f"--container-image={in_script} " in _main(output) or \
        f"--container-image={in_script}\n" in _main(output)  # fmt: skip


def test_the_image_the_case_executor_stored_in_job_spec_is_the_one_used(site: Site) -> None:
    """case-executor's Step 3 writes container_image (canonical) into job_spec.json before it
    calls the builder: the builder uses it, and keeps it canonical; an image scriptast stored
    itself is resolved again on a re-emit."""
    work = site.work("job")
    work.mkdir(parents=True)
    image = "nvcr.io/nvidia/tensorrt-llm/release:1.2.0"
    (work / "job_spec.json").write_text(json.dumps({"container_image": image,
                                                    "monitor_timeout_seconds": 7200}))  # fmt: skip
    output = _emit(site)
    assert _spec(output)["container_image"] == image
    assert "--container-image=nvcr.io#nvidia/tensorrt-llm/release:1.2.0" in _main(output)
    (entry,) = [e for e in output.job.trail if e.field == "docker_image"]
    assert "job_spec.json" in entry.source
    write_outputs(output)
    again = _emit(site)
    assert _spec(again)["container_image"].startswith("urm.nvidia.com/sw-tensorrt-docker/")


def test_monitor_timeout_seconds_is_kept_on_every_re_emit(site: Site) -> None:
    work = site.work("job")
    work.mkdir(parents=True)
    (work / "job_spec.json").write_text(json.dumps({"monitor_timeout_seconds": 5400}))
    first = _emit(site)
    assert _spec(first)["monitor_timeout_seconds"] == 5400
    write_outputs(first)
    second = _emit(site)
    assert _spec(second)["monitor_timeout_seconds"] == 5400
    for bad in (-1, 0, "1h", True, 1e12):
        (work / "job_spec.json").write_text(json.dumps({"monitor_timeout_seconds": bad}))
        assert "monitor_timeout_seconds" not in _spec(_emit(site))


READS: dict[str, dict[str, type | tuple[type, ...]]] = {
    # exec-local-slurm's "Input (from orchestrator prompt)" table, and case-executor's dispatch
    "local_slurm": {
        "scenario": str, "script_path": str, "work_dir": str, "model_name": str,
        "workflow_type": str, "success_patterns": list, "failure_patterns": list,
        "log_file_pattern": str, "persistent_mode": bool, "docker_image": str,
        "container_name": str, "container_mounts": str, "repo_root": str, "slurm_params": dict,
        "container_image": str,
    },
    # exec-remote-slurm's job spec fields (case-executor's Step 5 prompt)
    "remote_slurm": {
        "scenario": str, "script_path": str, "script_name": str, "work_dir": str,
        "model_name": str, "workflow_type": str, "success_patterns": list,
        "failure_patterns": list, "log_file_pattern": str, "remote_work_dir": str,
        "extra_files": list, "container_image": str, "node_count": int,
    },
    # exec-local-docker's input table and its Step 0
    "local_docker": {
        "scenario": str, "docker_cmd": str, "work_dir": str, "log_file": str, "model_name": str,
        "workflow_type": str, "success_patterns": list, "failure_patterns": list,
        "repo_root": str, "container_image": str,
    },
}  # fmt: skip
SLURM_PARAMS = ("partition", "account", "nodes", "ntasks", "ntasks_per_node")


@pytest.mark.parametrize(
    ("case", "scenario"),
    [("pytest_local_slurm", "local_slurm"), ("bench_remote_slurm_aarch64", "remote_slurm"),
     ("bench_local_docker", "local_docker")],
)  # fmt: skip
def test_the_exec_skills_find_every_field_they_read(site: Site, case: str, scenario: str) -> None:
    fields = {**CASES[case]}
    output = generate(build_request(site_fields(site, fields), {}), machine="x86_64",
                      home=str(site.home))  # fmt: skip
    spec = _spec(output)
    assert spec["scenario"] == spec["execution_scenario"] == scenario
    for name, kind in READS[scenario].items():
        assert name in spec, name
        assert isinstance(spec[name], kind), (name, spec[name])
    if scenario == "local_slurm":
        assert all(spec["slurm_params"].get(key) for key in SLURM_PARAMS), spec["slurm_params"]
        assert Path(spec["script_path"]).name == spec["script_name"]
    assert "#" not in spec["container_image"]  # canonical, as case-executor stores it
