"""Generated scripts under a real Slurm 22.05 cluster: accepted by sbatch --test-only, then run
for real with recording shims; Slurm's verdicts match the resolver's on bad inputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scriptast import SbatchDirective, Script, cmd, emit
from scriptast.builders.read_request import build_request
from scriptast.cluster.probe import probe
from scriptast.errors import ResolveError
from scriptast.pipeline.emit_job import Output, generate, write_outputs
from tests.cases import CASES
from tests.shim_recorder import Shims
from tests.site import Site
from tests.slurm_cluster import Cluster
from tests.test_categories import site_fields

pytestmark = pytest.mark.slurm

SLURM_CASES = sorted(
    name
    for name, fields in CASES.items()
    if fields.get("execution_scenario") != "local_docker" and "perf" not in name
)


@pytest.fixture
def cluster_site(site: Site, cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> Site:
    """The site, with slurm_env.json probed from the test cluster."""
    monkeypatch.setenv("SLURM_CONF", str(cluster.conf))
    probed = probe()
    probed["remote_cwd"] = str(site.home / "scratch")
    site.slurm_env.write_text(json.dumps(probed, indent=2))
    return site


def emit_for_cluster(site: Site, name: str, **changes: Any) -> Output:
    fields = {**CASES[name], **changes}
    if fields.get("partition") not in (None, "batch", "short"):
        fields["partition"] = "batch"
    if fields.get("execution_scenario") == "remote_slurm":
        fields["remote_repo_path"] = str(site.repo)
        fields["remote_work_dir"] = str(site.work("remote"))
    fields["account"] = "root"
    output = generate(build_request(site_fields(site, fields), {}), home=str(site.home))
    write_outputs(output)
    if output.job.log_dir != output.job.work_dir:
        Path(output.job.log_dir).mkdir(parents=True, exist_ok=True)
        for item in output.files:
            if item.path.endswith("slurm_run_custom.sh"):
                Path(output.job.log_dir, "slurm_run_custom.sh").write_text(item.text)
    return output


def submit(cluster: Cluster, shims: Shims, script: str, **env: str) -> tuple[dict[str, str], str]:
    environment = cluster.env(
        PATH=f"{shims.bin}:/usr/bin:/bin:/usr/sbin:/sbin", SHIM_LOG=str(shims.log), **env
    )
    for name in ("srun", "docker"):
        (shims.bin / name).unlink()
    checked = cluster.run("sbatch", "--test-only", script, env=environment)
    assert checked.returncode == 0, checked.stderr
    submitted = cluster.run("sbatch", "--parsable", script, env=environment)
    assert submitted.returncode == 0, submitted.stderr
    job_id = submitted.stdout.strip().split(";")[0]
    return cluster.wait(job_id), job_id


def log_of(output: Output, job_id: str) -> str:
    return Path(output.job.log_dir, f"{output.job.job_name}_{job_id}.out").read_text()


def pyxis_records(cluster: Cluster, job_id: str) -> list[dict[str, Any]]:
    lines = cluster.pyxis_log.read_text().splitlines()
    return [r for r in map(json.loads, lines) if str(r["job"]) == job_id and r["step"] < 4294967000]


def test_probe_slurm_end_to_end(cluster: Cluster, tmp_path: Path) -> None:
    import subprocess
    import sys

    target = tmp_path / "slurm_env.json"
    script = Path(sys.executable).parent / "scriptast"
    result = subprocess.run(
        [str(script), "probe-slurm", "-o", str(target)],
        env=cluster.env(),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    env = json.loads(target.read_text())
    assert [p["name"] for p in env["partitions"]] == ["batch", "short"]
    batch = env["partitions"][0]
    assert (batch["arch"], batch["gres"], batch["gpus_per_node"], batch["time_limit"]) == (
        "x86_64",
        "gpu:8",
        8,
        "04:00:00",
    )
    assert env["pmix"]["preferred"] == "pmix_v4" and "pmix" in env["pmix"]["available"]
    assert env["default_partition"] == "batch"
    release = subprocess.run(["sinfo", "--version"], env=cluster.env(), capture_output=True)
    assert env["probe"]["slurm_version"] == release.stdout.decode().split()[1]  # "slurm 22.05.8"
    assert env["cluster_name"] == "scriptast"  # cluster.sh's ClusterName
    assert env["home"] == str(Path.home())


@pytest.mark.parametrize("name", SLURM_CASES)
def test_case_runs_under_slurm(
    cluster_site: Site, cluster: Cluster, tmp_path: Path, name: str
) -> None:
    if name == "bench_wheel_install":
        (cluster_site.repo / "build").mkdir()
        (cluster_site.repo / "build/tensorrt_llm-1.2.0-cp312-linux_x86_64.whl").write_text("")
    output = emit_for_cluster(cluster_site, name)
    shims = Shims(tmp_path / "shims")
    state, job_id = submit(cluster, shims, output.main_script)
    log = log_of(output, job_id)
    assert state["JobState"] == "COMPLETED", (
        log + Path(output.job.log_dir, f"{output.job.job_name}_{job_id}.err").read_text()
    )
    assert "finished with exit code 0" in log
    steps = pyxis_records(cluster, job_id)
    job = output.job
    assert steps and all(s["options"]["container-image"] == job.image_enroot for s in steps)
    mounts = ",".join(f"{m.source}:{m.target}" for m in job.mounts)
    assert all(s["options"]["container-mounts"] == mounts for s in steps)
    assert all(s["options"]["container-workdir"] == job.project_path for s in steps)
    assert all(s["options"]["container-name"] == job.job_name for s in steps)
    expected_steps = (1 if job.install else 0) + (2 if getattr(job.work, "prepare", None) else 1)
    assert len({s["step"] for s in steps}) == expected_steps
    for record in shims.records():
        if job.category == "custom" or (
            job.category in ("bench", "pytest") and job.world_size == 1
        ):
            assert not any(k.startswith(("PMI", "OMPI")) for k in record["env"]), record
    if name == "pytest_mpi_world_size":
        (test,) = shims.records("pytest")  # rank 0 runs it, as upstream's launcher does
        launches = shims.records("trtllm-llmapi-launch")
        assert sorted(t["env"]["PMIX_RANK"] for t in launches) == ["0", "1", "2", "3"]
        assert test["env"]["PMIX_RANK"] == "0"
    if name == "bench_wheel_install":
        assert shims.records("pip")[0]["argv"][-1] == (
            "build/tensorrt_llm-1.2.0-cp312-linux_x86_64.whl"
        )
    if name == "bench_tp2_prepare":
        prepare, bench = shims.records("trtllm-bench")
        assert "prepare-dataset" in prepare["argv"] and not any(
            k.startswith("PMIX") for k in prepare["env"]
        )
        launches = shims.records("trtllm-llmapi-launch")
        assert sorted(r["env"]["PMIX_RANK"] for r in launches) == ["0", "1"]
        assert bench["env"]["PMIX_RANK"] == "0"
    if name == "pytest_local_slurm":
        (test,) = shims.records("pytest")
        assert test["argv"] == [
            "-v",
            "accuracy/test_llm_api_pytorch.py::TestLlama3_1_8BInstruct::test_param_mark[tp2pp2]",
            f"--junitxml={output.job.log_dir}/results.xml",
        ]
        assert test["env"]["LLM_MODELS_ROOT"] == "/models"
    if name == "eval_tp1_local_slurm":
        (evaluation,) = shims.records("trtllm-eval")
        assert evaluation["env"]["PMIX_RANK"] == "0"
    if name == "custom_cmd_local_slurm":
        assert "it's bar ['x', " in log and "Rank1 Custom command finished with exit code 0" in log


def test_failing_job_ends_failed_with_its_exit_code(
    cluster_site: Site, cluster: Cluster, tmp_path: Path
) -> None:
    output = emit_for_cluster(cluster_site, "pytest_local_slurm")
    state, job_id = submit(
        cluster, Shims(tmp_path / "shims"), output.main_script, SHIM_EXIT_PYTEST="3"
    )
    assert state["JobState"] == "FAILED" and state["ExitCode"] == "3:0"
    assert "Test finished with exit code 3" in log_of(output, job_id)


def _hand_built(directives: tuple[SbatchDirective, ...], tmp_path: Path) -> str:
    path = tmp_path / "hand.slurm"
    path.write_text(emit(Script(directives=directives, body=(cmd("true"),))))
    return str(path)


def test_time_over_max_time_refused_by_both(
    cluster_site: Site, cluster: Cluster, tmp_path: Path
) -> None:
    with pytest.raises(ResolveError, match="exceeds partition 'short' MaxTime 00:30:00"):
        emit_for_cluster(
            cluster_site, "bench_tp1_no_prepare", partition="short", time_limit="01:00:00"
        )
    script = _hand_built(
        (
            SbatchDirective(option="partition", value="short"),
            SbatchDirective(option="time", value="01:00:00"),
        ),
        tmp_path,
    )
    assert cluster.run("sbatch", "--test-only", script).returncode != 0
    fine = _hand_built(
        (
            SbatchDirective(option="partition", value="short"),
            SbatchDirective(option="time", value="00:30:00"),
        ),
        tmp_path,
    )
    assert cluster.run("sbatch", "--test-only", fine).returncode == 0


def test_more_gpus_than_a_node_refused_by_both(
    cluster_site: Site, cluster: Cluster, tmp_path: Path
) -> None:
    with pytest.raises(ResolveError, match="exceeds gpus_per_node = 8"):
        emit_for_cluster(
            cluster_site,
            "bench_tp1_no_prepare",
            bench_cmd=f"{CASES['bench_tp1_no_prepare']['bench_cmd']} --tp 16",
        )
    too_many = _hand_built(
        (SbatchDirective(option="nodes", value=1), SbatchDirective(option="gres", value="gpu:16")),
        tmp_path,
    )
    assert cluster.run("sbatch", "--test-only", too_many).returncode != 0
    fits = _hand_built(
        (SbatchDirective(option="nodes", value=1), SbatchDirective(option="gres", value="gpu:8")),
        tmp_path,
    )
    assert cluster.run("sbatch", "--test-only", fits).returncode == 0


def test_a_work_dir_with_percent_signs_logs_where_job_spec_says(
    cluster_site: Site, cluster: Cluster, tmp_path: Path
) -> None:
    work = cluster_site.work("100%used_%j_%u")
    output = emit_for_cluster(cluster_site, "bench_tp1_no_prepare", work_dir=str(work))
    state, job_id = submit(cluster, Shims(tmp_path / "shims"), output.main_script)
    assert state["JobState"] == "COMPLETED"
    pattern = output.job_spec.log_file_pattern
    log = work / pattern.replace("%j", job_id)  # what an executor does with the pattern
    assert log.is_file() and "finished with exit code 0" in log.read_text()
    assert sorted(p.name for p in work.parent.iterdir()) == [work.name]


@pytest.mark.parametrize(
    ("data", "finding"),
    [
        (b"#!/bin/bash\r\n#SBATCH --nodes=1\r\ntrue\r\n", "DOS line breaks"),
        (b"#!/bin/bash\n#SBATCH --nodes=1\ntrue\x00\n", "NUL byte"),
    ],
    ids=["crlf", "nul"],
)
def test_what_verify_refuses_sbatch_refuses(
    cluster: Cluster, tmp_path: Path, data: bytes, finding: str
) -> None:
    from scriptast.readers.linter.lint import lint_text

    script = tmp_path / "s.slurm"
    script.write_bytes(data)
    assert cluster.run("sbatch", "--test-only", str(script)).returncode != 0
    report = lint_text(data.decode())
    assert any(finding in f.message for f in report.findings)
    fixed = tmp_path / "fixed.slurm"
    fixed.write_bytes(data.replace(b"\r", b"").replace(b"\x00", b""))
    assert cluster.run("sbatch", "--test-only", str(fixed)).returncode == 0
    assert lint_text(fixed.read_text()).findings == ()
