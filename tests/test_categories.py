"""Every category x scenario, snapshotted as the files a reviewer reads, each bash -n and
ShellCheck clean, plus the properties each category must have."""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from scriptast.builders.read_request import build_request
from scriptast.pipeline.emit_job import Output, generate
from tests.cases import CASES
from tests.shell_checks import assert_bash_syntax, assert_shellcheck_clean
from tests.site import Site
from tests.snapshot_files import EXTENSIONS

STAMP = re.compile(r"_test-[0-9]{8}_[0-9]{6}")
"""submit.py names its container after the time it ran."""


def site_fields(site: Site, fields: dict[str, Any]) -> dict[str, Any]:
    resolved: dict[str, Any] = {}
    for key, value in fields.items():
        if isinstance(value, str) and value.startswith("@scripts/"):
            value = str(site.scripts / value.removeprefix("@scripts/"))
        elif isinstance(value, str) and value.startswith("@repo/"):
            value = str(site.repo / value.removeprefix("@repo/"))
        elif isinstance(value, str) and value.startswith("@root/"):
            value = str(site.root / value.removeprefix("@root/"))
        resolved[key] = value
    return site.fields(**resolved)


def run_case(site: Site, name: str, **changes: Any) -> Output:
    request = build_request(site_fields(site, {**CASES[name], **changes}), {})
    return generate(request, machine="x86_64", home=str(site.home))


def normalized(site: Site, text: str) -> str:
    return STAMP.sub("_test-<timestamp>", site.normalize(text))


def checked_digests(output: Output, text: str) -> str:
    """job_spec.json with its `files` digests checked against the files written with it, then
    written as a placeholder (they hash the site's real paths, which differ on every run)."""
    work_dir = output.job.work_dir
    written = {posixpath.relpath(f.path, work_dir): f.text for f in output.files}
    digests = json.loads(text)["files"]
    assert set(digests) == set(written) - {"job_spec.json"}
    for name, digest in digests.items():
        assert digest == hashlib.sha256(written[name].encode()).hexdigest(), name
        text = text.replace(digest, "<sha256, checked>")
    return text


NOT_OURS = frozenset({"slurm_launch.sh", "slurm_run.sh", "slurm_install.sh"})


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_snapshots(site: Site, name: str, snapshot: SnapshotAssertion) -> None:
    output = run_case(site, name)
    for item in output.files:
        text = normalized(site, item.text)
        if posixpath.basename(item.path) == "job_spec.json":
            text = checked_digests(output, text)
        suffix = Path(item.path).suffix
        if suffix in (".slurm", ".sh"):
            assert_bash_syntax(item.text)
            # submit.py writes the launch script; the run and install scripts are the checkout's
            if posixpath.basename(item.path) not in NOT_OURS:
                assert_shellcheck_clean(item.text)
        relative = posixpath.relpath(item.path, output.job.work_dir)
        base = relative.rsplit(".", 1)[0].replace("/", "-")
        assert text == snapshot(name=f"{name}-{base}", extension_class=EXTENSIONS[suffix])


def test_matrix_has_at_least_25_snapshot_files() -> None:
    folder = Path(__file__).resolve().parent.parent / "snapshots" / "test_categories"
    assert len(list(folder.iterdir())) >= 25


def _main(output: Output) -> str:
    return next(f.text for f in output.files if f.path == output.main_script)


def _spec(output: Output) -> dict[str, Any]:
    text = next(f.text for f in output.files if f.path.endswith("job_spec.json"))
    data: dict[str, Any] = json.loads(text)
    return data


def test_pytest_script_shape(site: Site) -> None:
    output = run_case(site, "pytest_local_slurm")
    text = _main(output)
    assert output.main_script.endswith("/llama_3_1_8b_instruct_auto_test.slurm")
    assert "#SBATCH --gres=gpu:4" in text and "--mpi" not in text
    assert "#SBATCH --ntasks=1\n#SBATCH --ntasks-per-node=1\n" in text
    assert "cd " + str(site.repo / "tests/integration/defs") in text
    # `[tp2pp2]` is a glob to bash: the command runs as its own text, as `bash -c` would run it,
    # with the JUnit report it writes in the work dir
    assert (
        "bash -c '\\''pytest -v "
        "accuracy/test_llm_api_pytorch.py::TestLlama3_1_8BInstruct::test_param_mark[tp2pp2] "
        f"--junitxml={site.work('job')}/results.xml'\\''" in text
    )
    assert text.index("pip install --retries 10 -e .") < text.index("nvidia-smi")
    assert text.rstrip().endswith('exit "${rc}"')


def test_job_spec_fields_per_scenario(site: Site) -> None:
    local = _spec(run_case(site, "pytest_local_slurm"))
    assert list(local)[:6] == [
        "workflow_type",
        "model_name",
        "execution_scenario",
        "docker_image",
        "script_path",
        "script_name",
    ]
    assert (
        local["persistent_mode"] is True
        and local["container_name"] == "llama_3_1_8b_instruct_auto_test"
    )
    # the seed's order: home, project, then the models
    home, project = str(site.home), str(site.repo)
    assert local["container_mounts"] == (
        f"{home}:{home},{project}:{project},{site.root / 'data/models'}:/models"
    )
    assert (
        local["slurm_params"]["gres"] == "gpu:4"
        and local["slurm_params"]["mpi_plugin"] == "pmix_v4"
    )
    assert local["slurm_env"]["probe"] == {"host": "login-01", "slurm_version": "24.05.4"}
    assert (local["success_patterns"], local["failure_patterns"]) == (
        ["passed"],
        ["FAILED", "ERROR"],
    )
    assert "remote_repo_path" not in local
    off = _spec(run_case(site, "pytest_local_slurm_not_persistent"))
    assert "persistent_mode" not in off and "container_mounts" not in off
    remote = _spec(run_case(site, "bench_remote_slurm_aarch64"))
    assert remote["remote_repo_path"] == "/home/alice/scratch/TensorRT-LLM"
    assert remote["remote_work_dir"] == "/home/alice/scratch/work_dirs/case"
    assert "persistent_mode" not in remote
    assert remote["script_path"].startswith(str(site.home / "work"))
    docker = _spec(run_case(site, "bench_local_docker"))
    assert "script_path" not in docker and docker["docker_cmd"].startswith("docker run \\\n")
    assert docker["log_file"] == str(site.work("job") / "llama_3_1_8b_instruct_local.log")
    assert "slurm_params" not in docker


def test_remote_scripts_use_remote_paths_and_install_from_the_remote_checkout(
    site: Site,
) -> None:
    """The image is a development image (nothing of TRT-LLM in it): a remote job installs as
    a local one does, from the checkout at remote_repo_path."""
    output = run_case(site, "bench_remote_slurm_aarch64")
    text = _main(output)
    assert "#SBATCH --output=/home/alice/scratch/work_dirs/case/" in text
    assert "--container-workdir=/home/alice/scratch/TensorRT-LLM" in text
    assert "cd /home/alice/scratch/TensorRT-LLM\npip install --retries 10 -e ." in text
    wheel = _main(run_case(site, "bench_remote_slurm_aarch64", install_mode="wheel"))
    assert "cd /home/alice/scratch/TensorRT-LLM\n" in wheel and "build/tensorrt_llm-*.whl" in wheel
    skipped = _main(run_case(site, "bench_remote_slurm_aarch64", install=False))
    assert "pip install" not in skipped
    assert "aarch64" in text and "--mpi=pmix_v4" in text and "#SBATCH --gres=gpu:4" in text


def test_bench_steps(site: Site) -> None:
    two = _main(run_case(site, "bench_tp2_prepare"))
    steps = two.split("srun -l")[1:]
    assert len(steps) == 3
    _install, prepare, run = steps
    assert "--mpi" not in prepare and "--ntasks=1" in prepare and "prepare-dataset" in prepare
    assert "--ntasks=2" in run and "--mpi=pmix_v4" in run
    assert "trtllm-llmapi-launch trtllm-bench" in run and "mpi_var" not in run
    one = _main(run_case(site, "bench_tp1_no_prepare"))
    steps = one.split("srun -l")[1:]
    assert len(steps) == 2 and "--mpi" not in one and "trtllm-llmapi-launch" not in one
    assert '[ "${mpi_var}" != SLURM_LOCALID ]' in steps[1]


def test_eval_always_under_mpi(site: Site) -> None:
    one = _main(run_case(site, "eval_tp1_local_slurm"))
    assert "--mpi=pmix_v4" in one and "trtllm-llmapi-launch" not in one
    assert "export LLM_MODELS_ROOT=/models" in one
    assert "pip install --retries 10 -r examples/trtllm-eval/requirements.txt" in one
    two = _main(run_case(site, "eval_tp2_hf_resolved"))
    assert (
        "trtllm-llmapi-launch trtllm-eval --model /models/meta-llama/Llama-3.1-8B-Instruct" in two
    )


def test_custom_writes_the_run_script(site: Site) -> None:
    output = run_case(site, "custom_cmd_local_slurm")
    runner = next(f for f in output.files if f.path.endswith("slurm_run_custom.sh"))
    assert runner.executable
    assert "trap " in runner.text and "set -Eeuo pipefail" in runner.text
    assert "export 'MSG=two words'" in runner.text or "export MSG='two words'" in runner.text
    assert _spec(output)["extra_files"] == [runner.path]
    slurm = _main(output)
    assert f"bash {runner.path}" in slurm and "--ntasks=2" in slurm and "--gres" not in slurm
    script = run_case(site, "custom_script_local_slurm")
    runner_text = next(f.text for f in script.files if f.path.endswith("slurm_run_custom.sh"))
    assert f"bash {site.scripts / 'run_custom.sh'}" in runner_text


def test_docker_command(site: Site) -> None:
    text = _main(run_case(site, "pytest_local_docker"))
    for flag in (
        "--rm",
        "--net=host",
        "--runtime=nvidia",
        "--ipc=host",
        "--cap-add=SYS_PTRACE",
        "--cap-add=SYS_ADMIN",
        "--cap-add=DAC_READ_SEARCH",
        "--security-opt seccomp=unconfined",
        "-e LLM_MODELS_ROOT=/models",
        "--name llama_3_1_8b_instruct_auto_test",
    ):
        assert flag in text
    assert " -it" not in text and "python3 -c 'import tensorrt_llm'" in text
    assert f"--mount type=bind,source={site.models},target=/models" in text
    assert "urm.nvidia.com/sw-tensorrt-docker" in text and "#sw-tensorrt" not in text


def test_generation_is_deterministic(site: Site) -> None:
    first = run_case(site, "bench_tp2_prepare")
    second = run_case(site, "bench_tp2_prepare")
    assert [f.text for f in first.files] == [f.text for f in second.files]
