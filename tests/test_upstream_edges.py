"""Cases seen against the real TensorRT-LLM repository: each is one clear error or warning, or
the value the engineer gave, never a traceback or a silent change."""

from __future__ import annotations

from typing import Any

import pytest

from scriptast.builders.resolution.job import ResolvedJob
from scriptast.builders.resolve import resolve
from scriptast.errors import ResolveError
from tests.cases import DOCKER
from tests.site import Site
from tests.test_categories import site_fields
from tests.test_perf_sanity import AGGR, _flags, _generate


def _job(site: Site, **fields: Any) -> ResolvedJob:
    from scriptast.builders.read_request import build_request

    return resolve(
        build_request(site_fields(site, fields), {}), machine="x86_64", home=str(site.home)
    )


def test_multi_node_eval_in_docker_is_one_error(site: Site) -> None:
    with pytest.raises(ResolveError, match="local_docker runs on this one machine"):
        _job(
            site,
            workflow_type="eval",
            eval_cmd="trtllm-eval --model m --tp_size 16 gsm8k",
            perf_config_yaml="@repo/tests/scripts/perf-sanity/disaggregated/deepseek_r1_2_nodes.yaml",
            **DOCKER,
        )


def test_a_repo_root_that_does_not_exist_is_refused(site: Site) -> None:
    with pytest.raises(ResolveError, match=r"repo_root .*/nowhere is not a directory"):
        _job(
            site,
            workflow_type="custom",
            custom_cmd="true",
            repo_root=str(site.root / "nowhere"),
            container_image="nvcr.io/nvidia/pytorch:25.01-py3",
        )


def test_ep_that_does_not_divide_tp_warns(site: Site) -> None:
    job = _job(site, workflow_type="bench", bench_cmd="trtllm-bench --model m throughput --ep 8")
    (warning,) = job.warnings
    assert "--ep 8 with --tp 1" in warning and "did you mean --tp 8 --ep 8?" in warning
    fine = _job(
        site, workflow_type="bench", bench_cmd="trtllm-bench --model m throughput --tp 8 --ep 8"
    )
    assert fine.warnings == () and fine.world_size == 8


@pytest.mark.parametrize("given", ["Llama-3.1-8B", "my.model+fp8"])
def test_an_explicit_model_name_is_kept(site: Site, given: str) -> None:
    job = _job(site, workflow_type="custom", custom_cmd="true", model_name=given)
    assert job.model_name == given and job.job_name == f"{given}_custom"
    assert job.warnings == ()


def test_an_unsafe_model_name_is_made_safe_with_a_warning(site: Site) -> None:
    job = _job(site, workflow_type="custom", custom_cmd="true", model_name="org/Llama 3")
    assert job.model_name == "org_llama_3"
    assert job.warnings == (
        "model_name 'org/Llama 3' is not a safe file name; 'org_llama_3' is used",
    )


def test_perf_sanity_passes_the_install_mode_to_submit_py(site: Site) -> None:
    output = _generate(
        site,
        workflow_type="perf_sanity",
        perf_config_yaml=AGGR,
        perf_test_name="llama_8b_tp4",
        install_mode="wheel",
        wheel_path="/wheels/tensorrt_llm-1.2.0.whl",
    )
    flags = _flags(output)
    assert flags["--install-mode"] == "wheel"
    assert flags["--wheel-path"] == "/wheels/tensorrt_llm-1.2.0.whl"
    launch = next(f.text for f in output.files if f.path.endswith("slurm_launch.sh"))
    assert "export INSTALL_MODE='wheel'" in launch
    assert "export WHEEL_PATH='/wheels/tensorrt_llm-1.2.0.whl'" in launch
