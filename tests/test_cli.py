"""The CLI end to end: through typer's runner and through the installed console script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from scriptast.cli.app import app
from tests.site import Site

runner = CliRunner()
ROOT = Path(__file__).resolve().parent.parent


def console_script() -> str:
    beside = Path(sys.executable).parent / "scriptast"
    found = str(beside) if beside.exists() else shutil.which("scriptast")
    assert found, "the scriptast console script is not installed"
    return found


def flags(fields: dict[str, Any]) -> list[str]:
    argv: list[str] = []
    for key, value in fields.items():
        if key == "env_check":
            for sub, number in value.items():
                argv += [f"--{sub.replace('_', '-')}", str(number)]
        elif isinstance(value, bool):
            argv.append(f"--{key.replace('_', '-')}" if value else f"--no-{key.replace('_', '-')}")
        else:
            argv += [f"--{key.replace('_', '-')}", str(value)]
    return argv


def emit(site: Site, workflow: str, **fields: Any) -> Any:
    result = runner.invoke(
        app, ["emit", workflow, *flags(site.fields(**fields))], env={"HOME": str(site.home)}
    )
    return result


def test_emit_writes_files_and_prints_the_summary(site: Site) -> None:
    result = emit(site, "bench", bench_cmd="trtllm-bench --model org/Llama-7B throughput --tp 2")
    assert result.exit_code == 0, result.output
    work = site.work("job")
    assert sorted(p.name for p in work.iterdir()) == ["job_spec.json", "llama_7b_bench.slurm"]
    lines = result.stdout.splitlines()
    assert lines[0] == f"Generated: {work / 'job_spec.json'}"
    assert lines[1] == f"Script: {work / 'llama_7b_bench.slurm'}"
    assert lines[2:5] == ["Workflow: bench", "Model: llama_7b", lines[4]]
    assert lines[4].startswith("Docker image: urm.nvidia.com/")
    assert lines[5] == "Devices: 2 GPUs across 1 node"
    assert os.access(work / "llama_7b_bench.slurm", os.X_OK)


def test_request_file_and_flags_override(site: Site, tmp_path: Path) -> None:
    request = tmp_path / "request.toml"
    fields = site.fields(
        workflow_type="bench", bench_cmd="trtllm-bench --model m throughput --tp 2", partition="arm"
    )
    request.write_text("\n".join(f"{k} = {json.dumps(v)}" for k, v in fields.items()) + "\n")
    result = runner.invoke(
        app, ["emit", "--request", str(request), "--partition", "batch", "--stdout"]
    )
    assert result.exit_code == 0, result.output
    assert "#SBATCH --partition=batch" in result.stdout
    assert not site.work("job").exists()


def test_request_from_stdin_and_explain(site: Site) -> None:
    fields = site.fields(workflow_type="eval", eval_cmd="trtllm-eval --model m mmlu")
    result = runner.invoke(
        app, ["emit", "--request", "-", "--explain", "--stdout"], input=json.dumps(fields)
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("#!/bin/bash\n")
    assert "mpi_plugin" in result.stderr and "slurm_env pmix.preferred" in result.stderr


def test_subcommand_contradicting_the_file_is_a_usage_error(site: Site, tmp_path: Path) -> None:
    request = tmp_path / "r.json"
    request.write_text(json.dumps(site.fields(workflow_type="eval", eval_cmd="x")))
    result = runner.invoke(app, ["emit", "bench", "--request", str(request)])
    assert result.exit_code == 2 and "contradicts" in result.stderr


def test_usage_errors_exit_2() -> None:
    assert runner.invoke(app, ["emit", "bench", "--no-such-flag"]).exit_code == 2
    assert runner.invoke(app, ["emit", "bench", "--required-devices", "two"]).exit_code == 2
    overview = runner.invoke(app, [])
    assert overview.exit_code == 0 and "Examples:" in overview.stdout


BAD_INPUTS: list[tuple[str, dict[str, Any], str]] = [
    (
        "bench",
        {"partition": None},
        "missing for bench on local_slurm: --partition; give each in the request file or as "
        "the flag; `scriptast probe-slurm -o slurm_env.json` writes the cluster's partitions "
        "and accounts",
    ),
    ("bench", {"account": None}, "missing for bench on local_slurm: --account;"),
    (
        "bench",
        {"partition": "gpu-a100"},
        "partition 'gpu-a100' is not in slurm_env.json (known: batch, arm, nogres, unknown_arch)",
    ),
    ("bench", {"account": "other"}, "account 'other' is not in slurm_env.json accounts"),
    ("bench", {"slurm_env_file": "/nonexistent/slurm_env.json"}, "did not run Step 2.5"),
    ("bench", {"execution_scenario": "cloud"}, "known execution_scenario values"),
    ("bench", {"bench_cmd": None}, "missing for bench on local_slurm: --bench-cmd;"),
    ("bench", {"hang_pattern": "stalled ("}, "hang_pattern 'stalled (' is not a regular"),
    ("bench", {"hang_pattern": "x?"}, "hang_pattern 'x?' matches an empty line"),
    ("bench", {"bench_cmd": "python x.py"}, "bench_cmd has no trtllm-bench invocation"),
    ("bench", {"bench_cmd": "a && b && trtllm-bench x"}, "2 top-level '&&'"),
    (
        "bench",
        {"partition": "arm", "bench_cmd": "trtllm-bench throughput --tp 8"},
        "multi-node trtllm-bench is not supported",
    ),
    (
        "pytest",
        {"test_cmd": "pytest test_unmarked.py", "required_devices": 9},
        "required_devices = 9 exceeds the maximum of 8 GPUs for pytest.",
    ),
    (
        "custom",
        {"custom_cmd": "x", "required_devices": 8, "partition": "arm"},
        "required_devices = 8 requires 2 nodes (gpus_per_node = 4), but custom commands are limited to 1 node. Reduce required_devices to at most 4.",
    ),
    (
        "eval",
        {"partition": "arm", "eval_cmd": "trtllm-eval --model m --tp_size 8 mmlu"},
        "pass --perf-config-yaml",
    ),
    (
        "bench",
        {
            "container_image": None,
            "partition": "arm",
            "bench_cmd": "trtllm-bench throughput",
            "repo_root": "@empty",
        },
        "key LLM_SBSA_DOCKER_IMAGE (arch aarch64) not found",
    ),
    (
        "pytest",
        {"test_cmd": "pytest missing_test.py"},
        "test file 'missing_test.py' not found (looked at",
    ),
    (
        "custom",
        {"custom_cmd": "x", "custom_env": "NOVALUE"},
        "custom_env entry 'NOVALUE' has no '='",
    ),
    (
        "custom",
        {"custom_cmd": "x", "custom_env": "A-B=1"},
        "custom_env key 'A-B' is not a shell identifier",
    ),
    (
        "bench",
        {
            "execution_scenario": "remote_slurm",
            "remote_work_dir": "/w",
            "remote_repo_path": "relative",
        },
        "must be an absolute path on the cluster",
    ),
    (
        "bench",
        {"execution_scenario": "remote_slurm", "remote_repo_path": "/r"},
        "missing for bench on remote_slurm: --remote-work-dir;",
    ),
    (
        "bench",
        {"execution_scenario": "remote_slurm", "remote_work_dir": "/w"},
        "missing for bench on remote_slurm: --remote-repo-path;",
    ),
    (
        "custom",
        {
            "execution_scenario": "remote_slurm",
            "remote_work_dir": "/w",
            "remote_repo_path": "/r",
            "custom_script": "scripts/not_here.sh",
        },
        "custom_script 'scripts/not_here.sh' is relative and no file here",
    ),
    (
        "bench",
        {"models_path": "/data/my models"},
        "contains a space, which pyxis --container-mounts cannot express",
    ),
    ("bench", {"llm_models_root": None}, "missing for bench on local_slurm: --llm-models-root;"),
    ("bench", {"time_limit": "2h"}, "not a Slurm time"),
    ("bench", {"time_limit": "10:00:00"}, "exceeds partition 'batch' MaxTime 4:00:00"),
    ("custom", {"custom_cmd": "x", "required_devices": 0}, "required_devices must be >= 1, got 0"),
    ("bench", {"reference": "/nonexistent/refs.toml"}, "cannot read references file"),
    (
        "custom",
        {"custom_cmd": "x", "reference": str(ROOT / "examples/references.yaml")},
        "a custom job prints no figures scriptast reads; drop the reference",
    ),
    (
        "custom",
        {"custom_cmd": "x", "baseline": "history"},
        "baseline history: a custom job prints no figures scriptast reads; drop the baseline",
    ),
    ("bench", {"baseline": "median"}, "baseline"),
]


@pytest.mark.parametrize(
    ("workflow", "fields", "message"), BAD_INPUTS, ids=[m[:40] for *_, m in BAD_INPUTS]
)
def test_bad_inputs_fail_cleanly_and_write_nothing(
    site: Site, workflow: str, fields: dict[str, Any], message: str
) -> None:
    defaults = {"bench": {"bench_cmd": "trtllm-bench --model m throughput"}}.get(workflow, {})
    merged = {**defaults, **fields}
    if merged.get("repo_root") == "@empty":
        empty = site.root / "empty_repo"
        (empty / "jenkins").mkdir(parents=True)
        merged["repo_root"] = str(empty)
    work = site.work("job")
    work.mkdir(parents=True)
    (work / "keep.txt").write_text("untouched")
    result = emit(site, workflow, **merged)
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert message in lines[0]
    assert sorted(p.name for p in work.iterdir()) == ["keep.txt"]
    assert (work / "keep.txt").read_text() == "untouched"


def test_unknown_request_field_in_a_file(site: Site, tmp_path: Path) -> None:
    request = tmp_path / "r.json"
    request.write_text(json.dumps({**site.fields(workflow_type="bench"), "bench_comd": "x"}))
    result = runner.invoke(app, ["emit", "--request", str(request)])
    assert result.exit_code == 1
    assert (
        "unknown request field 'bench_comd'" in result.stderr
        and "did you mean 'bench_cmd'" in result.stderr
    )
    assert not site.work("job").exists()


def test_console_script_in_a_subprocess(site: Site) -> None:
    env = {**os.environ, "HOME": str(site.home)}
    argv = [console_script(), "emit", "custom", *flags(site.fields(custom_cmd="echo hi"))]
    ok = subprocess.run(argv, capture_output=True, text=True, env=env)
    assert ok.returncode == 0, ok.stderr
    assert (site.work("job") / "slurm_run_custom.sh").is_file()
    bad = subprocess.run([*argv, "--custom-env", "X"], capture_output=True, text=True, env=env)
    assert (
        bad.returncode == 1 and bad.stderr.startswith("error: ") and "Traceback" not in bad.stderr
    )
    version = subprocess.run([console_script(), "--version"], capture_output=True, text=True)
    assert version.stdout.strip() == "scriptast 0.1.0"


def test_readme_main_job_example_runs(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    shutil.copytree(ROOT / "tests/fixtures", tmp_path / "tests/fixtures")
    result = subprocess.run(
        [console_script(), "emit", "--request", "examples/bench_local_slurm.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out/bench_local_slurm/job_spec.json").is_file()


@pytest.mark.parametrize("name", ["model", "request", "job-spec", "slurm-env"])
def test_schema(name: str) -> None:
    result = runner.invoke(app, ["schema", name])
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    assert "$defs" in schema


def test_request_schema_lists_every_field() -> None:
    schema = json.loads(runner.invoke(app, ["schema", "request"]).stdout)
    props = schema["$defs"]["Request"]["properties"]
    assert {"bench_cmd", "env_check", "remote_work_dir", "persistent_mode"} <= set(props)


def test_verify_good_and_bad_scripts(site: Site, tmp_path: Path) -> None:
    emit(site, "bench", bench_cmd="trtllm-bench --model m throughput --tp 2")
    good = next(site.work("job").glob("*.slurm"))
    assert runner.invoke(app, ["verify", str(good)]).exit_code == 0
    bad = tmp_path / "bad.slurm"
    bad.write_text(
        "#!/bin/bash\n#SBATCH --nodes=1\necho hi\n#SBATCH --time=01:00:00\n"
        "srun --container-mounts=/a b:/c --ntasks=2 bash -c 'echo'\n"
        "srun --contaner-image=x true\n"
    )
    result = runner.invoke(app, ["verify", str(bad)])
    assert result.exit_code == 1
    assert "sbatch ignores it" in result.stderr
    assert (
        f"{bad}:6: srun: note: --contaner-image is not an option of Slurm's srun or pyxis; a "
        "site's SPANK plugin may add it"
    ) in result.stderr
    assert "(did you mean --container-image?)" in result.stderr
    unparsable = tmp_path / "broken.sh"
    unparsable.write_text("echo 'unterminated\n")
    assert runner.invoke(app, ["verify", str(unparsable)]).exit_code == 1


EXAMPLES = sorted(
    p.name for p in (ROOT / "examples").glob("*_*.json") if p.name != "slurm_env.json"
)


def test_examples_cover_every_category_and_scenario() -> None:
    pairs = {tuple(name.removesuffix(".json").rsplit("_", 2)[-2:]) for name in EXAMPLES}
    stems = {name.removesuffix(".json") for name in EXAMPLES}
    for workflow in ("pytest", "bench", "eval", "custom"):
        for scenario in ("local_slurm", "remote_slurm", "local_docker"):
            assert f"{workflow}_{scenario}" in stems, (workflow, scenario, pairs)
    assert {"perf_sanity_local_slurm", "perf_sanity_remote_slurm"} <= stems


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_example_emits(name: str, tmp_path: Path) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    shutil.copytree(ROOT / "tests/fixtures", tmp_path / "tests/fixtures")
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = runner.invoke(app, ["emit", "--request", f"examples/{name}"])
    finally:
        os.chdir(old)
    assert result.exit_code == 0, result.output
    spec = json.loads((tmp_path / "out" / name.removesuffix(".json") / "job_spec.json").read_text())
    assert spec["execution_scenario"] in name


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{nope", "is not JSON"),
        ('{"partitions": 3}', "wrong shape"),
        (None, "did not run Step 2.5"),
    ],
)
def test_bad_slurm_env_end_to_end(site: Site, content: str | None, message: str) -> None:
    if content is None:
        site.slurm_env.unlink()
    else:
        site.slurm_env.write_text(content)
    result = emit(site, "bench", bench_cmd="trtllm-bench throughput")
    assert (
        result.exit_code == 1 and message in result.stderr and len(result.stderr.splitlines()) == 1
    )
    assert not site.work("job").exists()


def test_unknown_workflow_type_in_a_request_file(site: Site, tmp_path: Path) -> None:
    request = tmp_path / "r.json"
    request.write_text(json.dumps(site.fields(workflow_type="benchmark")))
    result = runner.invoke(app, ["emit", "--request", str(request)])
    assert (
        result.exit_code == 1
        and "known workflow_type values: pytest, eval, bench, custom, perf_sanity" in result.stderr
    )


def test_a_bad_request_on_stdin_is_named_stdin(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(Path(sys.executable).parent / "scriptast"), "emit", "bench", "--request", "-",
         "--work-dir", str(tmp_path / "w")],
        input="{bad", capture_output=True, text=True,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith("error: request file stdin is not valid: Expecting property")
    assert not (tmp_path / "w").exists()


@pytest.mark.parametrize("step", ["srun -n x hostname", "srun --ntasks=x hostname"])
def test_verify_says_a_count_that_is_none_in_its_own_words(tmp_path: Path, step: str) -> None:
    script = tmp_path / "job.sh"
    script.write_text(f"#!/bin/bash\n#SBATCH --nodes=1\n{step}\n")
    done = subprocess.run([str(Path(sys.executable).parent / "scriptast"), "verify", str(script)],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 1
    assert f"{script}:3: srun: --ntasks=x: not a whole number; srun refuses it" in done.stderr
    assert "invalid literal" not in done.stderr + done.stdout
