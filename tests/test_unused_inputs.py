"""A value given and not used is said: node_count for a single-node workflow or a perf-sanity job,
a required_devices the test's marks overrule, remote paths work_dir's job_spec.json gives
otherwise; device_type is recorded in job_spec.json."""

from __future__ import annotations

import json
from typing import Any

from scriptast.pipeline.emit_job import write_outputs
from tests.site import Site
from tests.test_categories import run_case


def _spec(output: Any) -> dict[str, Any]:
    text = next(f.text for f in output.files if f.path.endswith("job_spec.json"))
    data: dict[str, Any] = json.loads(text)
    return data


def test_a_node_count_a_single_node_bench_does_not_take_is_named(site: Site) -> None:
    output = run_case(site, "bench_tp2_prepare", node_count=2)
    assert "node_count 2 is not used: bench runs on 1 node here" in output.job.warnings
    assert _spec(output)["node_count"] == 1


def test_a_node_count_that_is_the_one_written_is_no_warning(site: Site) -> None:
    output = run_case(site, "eval_tp2_hf_resolved", node_count=1)
    assert not any("node_count" in w for w in output.job.warnings)


def test_perf_sanity_names_every_sizing_input_submit_py_overrules(site: Site) -> None:
    output = run_case(site, "perf_sanity_local_slurm", node_count=3, required_devices=2)
    why = (
        "submit.py derives a perf-sanity job's nodes and GPUs from the config's hardware "
        "section alone"
    )
    assert f"node_count 3 is not used: {why}" in output.job.warnings
    assert f"required_devices 2 is not used: {why}" in output.job.warnings


def test_a_required_devices_the_marks_overrule_is_named(site: Site) -> None:
    output = run_case(site, "pytest_local_slurm", required_devices=2)
    assert output.job.required_devices == 4
    assert any(
        w.startswith("required_devices 2 is not used: the job needs 4 (")
        for w in output.job.warnings
    )
    same = run_case(site, "pytest_local_slurm", required_devices=4)
    assert not any("required_devices" in w for w in same.job.warnings)


def test_remote_paths_work_dirs_job_spec_gives_are_its_own(site: Site) -> None:
    """The seed: remote_work_dir is read from job_spec.json, trtllm-case-executor's single
    source of truth; a request that says otherwise is told its value is not used."""
    first = run_case(site, "bench_remote_slurm_aarch64")
    write_outputs(first)
    spec_path = site.work("job") / "job_spec.json"
    resolved = json.loads(spec_path.read_text(encoding="utf-8"))
    output = run_case(
        site, "bench_remote_slurm_aarch64", remote_work_dir="/home/alice/scratch/elsewhere"
    )
    assert (
        "remote_work_dir /home/alice/scratch/elsewhere is not used: "
        f"{spec_path} gives {resolved['remote_work_dir']}, the single source of truth for that "
        "path (trtllm-case-executor resolves it there); to change it, change it in that file, "
        "or remove the file"
    ) in output.job.warnings
    assert _spec(output)["remote_work_dir"] == resolved["remote_work_dir"]
    again = run_case(site, "bench_remote_slurm_aarch64")
    assert not any("is not used" in w for w in again.job.warnings)


def test_device_type_is_recorded_in_job_spec(site: Site) -> None:
    output = run_case(site, "custom_cmd_local_slurm", device_type="H100")
    assert _spec(output)["device_type"] == "H100"
    assert "device_type" not in _spec(run_case(site, "custom_cmd_local_slurm"))
