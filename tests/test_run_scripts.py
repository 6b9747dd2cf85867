"""Generated scripts RUN under plain bash, with srun/docker replaced by shims that execute each
step's command on this host and pip, nvidia-smi, pytest, trtllm-* replaced by recorders."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from scriptast.builders.read_request import build_request
from scriptast.pipeline.emit_job import Output, generate, write_outputs
from tests.cases import CASES
from tests.shim_recorder import MPI_PREFIXES, Shims
from tests.site import Site
from tests.test_categories import site_fields


def emit_case(site: Site, name: str, **changes: Any) -> Output:
    fields = {**CASES[name], **changes}
    output = generate(
        build_request(site_fields(site, fields), {}), machine="x86_64", home=str(site.home)
    )
    write_outputs(output)
    return output


def run(output: Output, shims: Shims, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {
        "PATH": f"{shims.bin}:{os.environ['PATH']}",
        "SHIM_LOG": str(shims.log),
        "HOME": os.environ.get("HOME", "/root"),
        "SLURM_JOB_ID": "4242",
        "SLURM_NTASKS": "2",
        "PMI_FD": "9",
        "OMPI_MCA_plm": "slurm",
        **env,
    }
    return subprocess.run(
        ["bash", output.main_script], env=environment, capture_output=True, text=True, timeout=120
    )


def mpi_vars(record: dict[str, Any]) -> dict[str, str]:
    return {k: v for k, v in record["env"].items() if k.startswith(MPI_PREFIXES)}


def test_pytest_job(site: Site, shims: Shims) -> None:
    output = emit_case(site, "pytest_local_slurm")
    result = run(output, shims)
    assert result.returncode == 0, result.stderr
    assert [r["argv"] for r in shims.records("pip")] == [
        ["install", "--retries", "10", "-e", "."],
        ["install", "--retries", "10", "-r", "requirements-dev.txt"],
    ]
    assert len(shims.records("nvidia-smi")) == 1
    (test,) = shims.records("pytest")
    assert test["argv"] == [
        "-v",
        "accuracy/test_llm_api_pytorch.py::TestLlama3_1_8BInstruct::test_param_mark[tp2pp2]",
        f"--junitxml={output.job.log_dir}/results.xml",
    ]
    assert test["cwd"] == str(site.repo / "tests/integration/defs")
    assert test["env"]["LLM_MODELS_ROOT"] == "/models"
    assert mpi_vars(test) == {}
    assert {k for k in test["env"] if k.startswith("SLURM")} == {"SLURM_PROCID"}
    assert "0: Test finished with exit code 0" not in result.stdout
    assert "Test finished with exit code 0" in result.stdout


def test_failing_test_sets_the_exit_code_and_logs_it(site: Site, shims: Shims) -> None:
    output = emit_case(site, "pytest_local_slurm")
    result = run(output, shims, SHIM_EXIT_PYTEST="3")
    assert result.returncode == 3
    assert "Test finished with exit code 3" in result.stdout


def test_bench_with_prepare_and_two_ranks(site: Site, shims: Shims) -> None:
    output = emit_case(site, "bench_tp2_prepare")
    result = run(output, shims)
    assert result.returncode == 0, result.stderr
    prepare, bench = shims.records("trtllm-bench")  # rank 0 runs it; rank 1 serves it
    assert "prepare-dataset" in prepare["argv"] and mpi_vars(prepare) == {}
    assert prepare["env"]["SLURM_LOCALID"] == "0"
    launches = shims.records("trtllm-llmapi-launch")
    assert sorted(r["env"]["PMIX_RANK"] for r in launches) == ["0", "1"]
    assert bench["env"]["PMIX_RANK"] == "0" and bench["argv"][-2:] == ["--tp", "2"]
    sruns = shims.records("srun")
    assert [s["argv"].count("--mpi=pmix_v4") for s in sruns] == [0, 0, 1]


def test_bench_single_rank_clears_mpi(site: Site, shims: Shims) -> None:
    output = emit_case(site, "bench_tp1_no_prepare")
    assert run(output, shims).returncode == 0
    (bench,) = shims.records("trtllm-bench")
    assert mpi_vars(bench) == {}
    assert {k for k in bench["env"] if k.startswith("SLURM")} == {"SLURM_PROCID", "SLURM_LOCALID"}
    assert shims.records("trtllm-llmapi-launch") == []


def test_eval_single_task_keeps_its_pmix(site: Site, shims: Shims) -> None:
    output = emit_case(site, "eval_tp1_local_slurm")
    assert run(output, shims).returncode == 0
    (evaluation,) = shims.records("trtllm-eval")
    assert evaluation["env"]["PMIX_RANK"] == "0"
    assert evaluation["argv"] == ["--model", "/models/llama-3.1-8b", "mmlu"]
    assert [r["argv"][-1] for r in shims.records("pip")][
        -1
    ] == "examples/trtllm-eval/requirements.txt"


def test_custom_command_reaches_python_byte_exact(site: Site, shims: Shims) -> None:
    output = emit_case(site, "custom_cmd_local_slurm")
    result = run(output, shims, HOME="/home/with space")
    assert result.returncode == 0, result.stderr
    expected = "it's bar ['x', '/home/with space', '`not run`']"
    for rank in (0, 1):
        assert f"{rank}: {expected}" in result.stdout
        assert f"{rank}: rank={rank}" in result.stdout
        assert f"{rank}: Rank{rank} Custom command finished with exit code 0" in result.stdout


def test_custom_exports_env_and_clears_mpi(site: Site, shims: Shims) -> None:
    command = "pytest -q 'a b' && trtllm-bench --x \"$MSG\""
    output = emit_case(site, "custom_cmd_local_slurm", custom_cmd=command, required_devices=1)
    assert run(output, shims).returncode == 0
    (test,) = shims.records("pytest")
    assert test["argv"] == ["-q", "a b"] and test["env"]["FOO"] == "bar"
    assert mpi_vars(test) == {}
    (bench,) = shims.records("trtllm-bench")
    assert bench["argv"] == ["--x", "two words"]


def test_failing_custom_command(site: Site, shims: Shims) -> None:
    output = emit_case(
        site, "custom_cmd_local_slurm", custom_cmd="echo before; exit 7", required_devices=1
    )
    result = run(output, shims)
    assert result.returncode == 7
    assert "0: Rank0 Custom command finished with exit code 7" in result.stdout
    assert "command failed: bash -c" in result.stderr
    assert "Custom job finished with exit code 7" in result.stdout


def test_custom_script(site: Site, shims: Shims) -> None:
    output = emit_case(site, "custom_script_local_slurm", custom_env="FOO=from-env")
    result = run(output, shims)
    assert result.returncode == 0, result.stderr
    assert f"0: custom script ran in {site.repo} with FOO=from-env" in result.stdout


@pytest.mark.parametrize(
    "name", ["pytest_local_docker", "bench_local_docker", "custom_local_docker"]
)
def test_docker_payloads_run(site: Site, shims: Shims, name: str) -> None:
    fields = {"custom_cmd": "pytest -k 'it''s'"} if name == "custom_local_docker" else {}
    output = emit_case(site, name, **fields)
    result = run(output, shims)
    tensorrt_llm_missing = "No module named 'tensorrt_llm'" in result.stderr
    assert result.returncode == 1 and tensorrt_llm_missing, result.stderr
    (docker,) = shims.records("docker")
    assert docker["image"].startswith("urm.nvidia.com/")
    assert [r["argv"][0] for r in shims.records("pip")] == ["install", "install"]


@pytest.mark.parametrize(
    "name", ["pytest_local_docker", "bench_local_docker", "custom_local_docker"]
)
def test_docker_payloads_reach_their_programs(
    site: Site, shims: Shims, tmp_path: Path, name: str
) -> None:
    fake = tmp_path / "pkgs" / "tensorrt_llm"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    fields = {"custom_cmd": "pytest -k 'it''s'"} if name == "custom_local_docker" else {}
    output = emit_case(site, name, **fields)
    result = run(output, shims, PYTHONPATH=str(fake.parent))
    assert result.returncode == 0, result.stderr
    programs = [r["prog"] for r in shims.records() if r["prog"] not in ("docker", "pip")]
    expected = {
        "pytest_local_docker": ["pytest"],
        "bench_local_docker": ["trtllm-bench", "trtllm-bench"],
        "custom_local_docker": ["pytest"],
    }[name]
    assert programs == expected
    if name == "custom_local_docker":
        assert shims.records("pytest")[0]["argv"] == ["-k", "its"]
        assert shims.records("pytest")[0]["env"]["FOO"] == "bar"
