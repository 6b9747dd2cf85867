"""job_spec.json as the case-executor and the executors use it: values the case-executor already
resolved into work_dir's job_spec.json are read when the request lacks them (the trail says so),
a re-emit keeps the fields it does not own, and the fields the executors read (work_dir,
repo_root, node_count, container_image in its canonical form) are written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scriptast.builders.read_request import build_request
from scriptast.errors import InputError
from scriptast.pipeline.emit_job import Output, generate, write_outputs
from tests.site import Site

EVAL = "trtllm-eval --model meta-llama/Llama-3.1-8B-Instruct mmlu"


def _emit(site: Site, **fields: Any) -> Output:
    request = build_request(site.fields(workflow_type="eval", eval_cmd=EVAL, **fields), {})
    output = generate(request, machine="x86_64", home=str(site.home))
    write_outputs(output)
    return output


def _spec(site: Site) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((site.work("job") / "job_spec.json").read_text())
    return data


def _forwarded(site: Site, **values: Any) -> None:
    work = site.work("job")
    work.mkdir(parents=True, exist_ok=True)
    (work / "job_spec.json").write_text(json.dumps(values))


def test_resolved_values_are_read_from_work_dirs_job_spec(site: Site) -> None:
    _forwarded(
        site,
        remote_repo_path="/lustre/alice/TensorRT-LLM",
        remote_work_dir="/lustre/alice/work_dirs/case",
        llm_models_root="/lustre/models",
        device_type="H100",
    )
    output = _emit(
        site, execution_scenario="remote_slurm", llm_models_root=None, models_path="/lustre/m"
    )
    sources = {e.field: (e.value, e.source) for e in output.job.trail}
    source = "work_dir's job_spec.json (resolved by trtllm-case-executor)"
    assert sources["project_path"] == ("/lustre/alice/TensorRT-LLM", f"{source} remote_repo_path")
    assert sources["log_dir"] == ("/lustre/alice/work_dirs/case", f"{source} remote_work_dir")
    assert sources["llm_models_root"] == ("/lustre/models", f"{source} llm_models_root")
    spec = _spec(site)
    assert spec["remote_repo_path"] == "/lustre/alice/TensorRT-LLM"
    assert spec["device_type"] == "H100"  # the orchestrator's, recorded again
    script = Path(output.main_script).read_text()
    assert "cd /lustre/alice/TensorRT-LLM" in script or "/lustre/alice/TensorRT-LLM" in script


def test_the_request_wins_over_work_dirs_job_spec(site: Site) -> None:
    _forwarded(site, llm_models_root="/elsewhere")
    output = _emit(site)
    sources = {e.field: (e.value, e.source) for e in output.job.trail}
    assert sources["llm_models_root"] == ("/models", "input llm_models_root")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"llm_models_root": "models"}', "llm_models_root 'models' in {path} is not an absolute"),
        ("{not json", "{path} is not JSON"),
        ("[1, 2]", "{path} is not a JSON object"),
    ],
)
def test_a_job_spec_that_cannot_give_a_value_is_one_error(
    site: Site, content: str, message: str
) -> None:
    work = site.work("job")
    work.mkdir(parents=True)
    path = work / "job_spec.json"
    path.write_text(content)
    with pytest.raises(InputError, match="^" + message.format(path=path).replace("[", r"\[")):
        _emit(site, llm_models_root=None)
    assert path.read_text() == content  # nothing written


def test_a_re_emit_keeps_the_orchestrators_fields(site: Site) -> None:
    _emit(site)
    spec = _spec(site)
    spec["device_type"] = "B200"
    spec["build_project"] = False
    spec["model_name"] = "edited"
    (site.work("job") / "job_spec.json").write_text(json.dumps(spec))
    _emit(site)
    again = _spec(site)
    assert again["model_name"] == "llama_3_1_8b_instruct"  # emit's own field, written anew
    assert list(again)[-1:] == ["build_project"]
    assert (again["device_type"], again["build_project"]) == ("B200", False)


def test_the_fields_executors_read_are_written(site: Site) -> None:
    _emit(site)
    spec = _spec(site)
    assert spec["work_dir"] == str(site.work("job"))
    assert spec["repo_root"] == str(site.repo)
    assert spec["node_count"] == spec["slurm_params"]["nodes"] == 1
    # canonical, as trtllm-case-executor stores it: pyxis's `registry#path` is the script's
    assert spec["container_image"] == spec["docker_image"] and "#" not in spec["container_image"]
    docker = build_request(
        site.fields(
            workflow_type="eval", eval_cmd=EVAL, execution_scenario="local_docker",
            slurm_env_file=None, partition=None, account=None, work_dir=str(site.work("d")),
            env_check={"gpus_per_node": 8},
        ),
        {},
    )  # fmt: skip
    output = generate(docker, machine="x86_64", home=str(site.home))
    assert output.job_spec.container_image == output.job_spec.docker_image
    assert output.job_spec.node_count is None


def test_a_remote_eval_never_searches_this_machine_for_a_cluster_path(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The models host path of a remote job is the cluster's: the same path here may hold
    anything, or hang; the HF id stays, with a warning."""
    import scriptast.builders.categories.eval.work as eval_category

    def searched(*_: Any) -> str:
        raise AssertionError("searched this machine")

    monkeypatch.setattr(eval_category, "find_model_dir", searched)
    output = _emit(
        site, execution_scenario="remote_slurm", models_path=str(site.models),
        remote_repo_path="/lustre/r", remote_work_dir="/lustre/w",
    )  # fmt: skip
    assert any(
        "is on the cluster, which scriptast does not search" in w for w in output.job.warnings
    )
    assert "--model meta-llama/Llama-3.1-8B-Instruct" in Path(output.main_script).read_text()
