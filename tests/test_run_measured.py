"""`scriptast run` judges what the job measured, on the real loopback Slurm cluster: stand-ins
for trtllm-eval, trtllm-bench and pytest print and write upstream's exact formats
(tests/shims/upstream.py); the accuracy references are the checkout's own
(tests/integration/defs/accuracy/references/*.yaml), the bench references a team's file."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.run_site import BENCH, RunSite, record

pytestmark = pytest.mark.slurm

EVAL = "trtllm-eval --model meta-llama/Llama-3.1-8B-Instruct --tp_size 1 gsm8k"
UPSTREAM_EVAL = {"SHIM_EVAL_MODE": "upstream"}
PYTEST = "pytest -v test_unmarked.py::test_plain"


def figure(found: dict[str, Any], name: str) -> dict[str, Any]:
    figures: list[dict[str, Any]] = found["figures"]
    return next(f for f in figures if f["name"] == name)


def test_an_eval_below_its_threshold_is_regressed(runs: RunSite) -> None:
    """41% on gsm8k, where upstream's threshold for Llama-3.1-8B-Instruct is 74.20 +
    z(0.05) * sqrt(2 * 50^2 / 1319) = 71.00: REGRESSED, exit 17, though every step passed."""
    work = runs.emit("low", workflow_type="eval", eval_cmd=EVAL, persistent_mode=False)
    done = runs.run("run", str(work), SHIM_EVAL_ACCURACY="41.00", **UPSTREAM_EVAL)
    assert done.returncode == 17, done.stdout + done.stderr
    found = record(work)
    assert (found["verdict"], found["exit_code"]) == ("REGRESSED", 0)
    score = figure(found, "gsm8k accuracy")
    assert score["value"] == 41.0 and score["headline"] is True
    assert score["source"]["line"] > 0 and score["source"]["file"] == found["out_log"]
    check = score["check"]
    assert check["reference"] == 74.2 and check["lower"] == pytest.approx(71.0, abs=0.01)
    assert check["ok"] is False and check["margin"] == pytest.approx(-30.0, abs=0.01)
    assert "gsm8k.yaml: meta-llama/Llama-3.1-8B-Instruct" in check["origin"]
    assert "gsm8k accuracy 41.00 (threshold 71.00, reference 74.20, margin -30.00): " \
        "REGRESSED" in done.stdout  # fmt: skip


def test_an_eval_above_its_threshold_passes_showing_its_figure(runs: RunSite) -> None:
    work = runs.emit("high", workflow_type="eval", eval_cmd=EVAL, persistent_mode=False)
    done = runs.run("run", str(work), SHIM_EVAL_ACCURACY="74.52", **UPSTREAM_EVAL)
    assert done.returncode == 0, done.stdout + done.stderr
    assert record(work)["verdict"] == "PASSED"
    assert "gsm8k accuracy 74.52 (threshold 71.00, reference 74.20, margin +3.52): ok" in (
        done.stdout
    )


def test_an_eval_that_prints_no_accuracy_is_inconclusive(runs: RunSite) -> None:
    work = runs.emit("silent", workflow_type="eval", eval_cmd=EVAL, persistent_mode=False)
    done = runs.run("run", str(work), **UPSTREAM_EVAL)
    assert done.returncode == 11, done.stdout + done.stderr
    found = record(work)
    assert (found["verdict"], found["exit_code"]) == ("INCONCLUSIVE", 0)
    assert found["missing"] == ["gsm8k accuracy"]
    assert "missing figure: gsm8k accuracy (expected, never printed)" in done.stdout


def test_a_pytest_job_with_two_of_ten_failing_is_failed_naming_both(runs: RunSite) -> None:
    work = runs.emit("two_fail", workflow_type="pytest", test_cmd=PYTEST, persistent_mode=False)
    done = runs.run("run", str(work), SHIM_PYTEST_RESULTS="passed=8,failed=2")
    assert done.returncode == 10, done.stdout + done.stderr
    found = record(work)
    assert found["verdict"] == "FAILED"
    tests = found["tests"]
    assert (tests["tests"], tests["failures"], tests["errors"], tests["skipped"]) == (10, 2, 0, 0)
    assert tests["source"] == str(work / "results.xml")
    assert [(t["id"], t["message"]) for t in tests["failed"]] == [
        ("accuracy/test_llm_api_pytorch.py::test_case[0]", "AssertionError: assert 40.0 >= 71.0"),
        ("accuracy/test_llm_api_pytorch.py::test_case[1]", "AssertionError: assert 41.0 >= 71.0"),
    ]
    assert "tests: 10 run, 8 passed, 2 failed, 0 errors, 0 skipped" in done.stdout
    assert "FAILED accuracy/test_llm_api_pytorch.py::test_case[1]: AssertionError" in done.stdout


def test_a_pytest_job_whose_every_test_skipped_is_inconclusive(runs: RunSite) -> None:
    work = runs.emit("skips", workflow_type="pytest", test_cmd=PYTEST, persistent_mode=False)
    done = runs.run("run", str(work), SHIM_PYTEST_RESULTS="skipped=10")
    assert done.returncode == 11, done.stdout + done.stderr
    found = record(work)
    assert (found["verdict"], found["exit_code"]) == ("INCONCLUSIVE", 0)
    assert found["tests"]["skipped"] == 10 and found["tests"]["tests"] == 10
    assert "every test was skipped" in done.stdout


def test_a_pytest_job_whose_junit_is_not_xml_is_inconclusive(runs: RunSite) -> None:
    """The JUnit file is there but is not XML: the results could not be read, and the job is
    never passed on its exit code alone."""
    command = f"{PYTEST} --junitxml=broken.xml"
    work = runs.emit("broken", workflow_type="pytest", test_cmd=command, persistent_mode=False)
    junit = runs.site.repo / "tests/integration/defs/broken.xml"
    done = runs.run("run", str(work), SHIM_PYTEST_RESULTS="passed=3",
                    SHIM_PYTEST_BROKEN_JUNIT="this is not <xml")  # fmt: skip
    assert done.returncode == 11, done.stdout + done.stderr
    found = record(work)
    assert (found["verdict"], found["exit_code"]) == ("INCONCLUSIVE", 0)
    assert found["unread"][0].startswith(f"{junit}: not XML")
    assert f"could not read {junit}: not XML" in done.stdout


def test_a_junit_report_an_earlier_run_left_is_not_this_runs(runs: RunSite) -> None:
    work = runs.emit("stale", workflow_type="pytest", test_cmd=PYTEST, persistent_mode=False)
    first = runs.run("run", str(work), SHIM_PYTEST_RESULTS="passed=3")
    assert first.returncode == 0 and record(work)["tests"]["tests"] == 3, first.stdout
    time.sleep(2.1)  # run.json's time is to the second
    again = runs.run("run", str(work), SHIM_SAY_PYTEST="3 passed")  # writes no JUnit this time
    assert again.returncode == 11, again.stdout + again.stderr
    assert record(work)["unread"] == [
        f"{work}/results.xml: it was written before this run (an earlier run's)"
    ]


def references(tmp_path: Path, value: float) -> Path:
    path = tmp_path / "references.toml"
    path.write_text(
        '["meta-llama/Llama-3.1-8B-Instruct".batch]\n'
        f'output_throughput = [{value}, -0.10, 0.50, "tokens/s"]\n'
    )
    return path


def test_a_bench_run_within_its_reference_passes(runs: RunSite, tmp_path: Path) -> None:
    reference = references(tmp_path, 5000.0)
    work = runs.emit("bench_ok", workflow_type="bench", bench_cmd=f"{BENCH} --tp 1",
                     persistent_mode=False, reference=str(reference))  # fmt: skip
    done = runs.run("run", str(work), SHIM_BENCH_TPS="4800.5")
    assert done.returncode == 0, done.stdout + done.stderr
    found = record(work)
    assert found["verdict"] == "PASSED"
    throughput = figure(found, "output_throughput")
    assert throughput["value"] == 4800.5 and throughput["unit"] == "tokens/s"
    assert throughput["check"]["lower"] == 4500.0 and throughput["check"]["ok"] is True
    assert throughput["check"]["origin"] == f"{reference}: meta-llama/Llama-3.1-8B-Instruct / batch"
    assert figure(found, "request_latency_p99")["value"] == 26000.0


def test_a_bench_run_20_percent_under_its_reference_is_regressed(
    runs: RunSite, tmp_path: Path
) -> None:
    work = runs.emit("bench_low", workflow_type="bench", bench_cmd=f"{BENCH} --tp 1",
                     persistent_mode=False)  # fmt: skip
    reference = references(tmp_path, 5000.0)
    done = runs.run("run", str(work), "--reference", str(reference), SHIM_BENCH_TPS="4000")
    assert done.returncode == 17, done.stdout + done.stderr
    found = record(work)
    assert found["verdict"] == "REGRESSED"
    assert figure(found, "output_throughput")["check"]["margin"] == -500.0
    assert "output_throughput 4000.00 tokens/s (from 4500.00 to 7500.00, reference 5000.00, " \
        "margin -500.00): REGRESSED" in done.stdout  # fmt: skip


def test_a_bench_report_json_is_read_after_the_job(runs: RunSite, tmp_path: Path) -> None:
    """--report_json's file holds the figures too: read after the job, from the project
    folder the job ran in, and used where the log has none."""
    command = f"{BENCH} --tp 1 --report_json report.json"
    work = runs.emit("report", workflow_type="bench", bench_cmd=command, persistent_mode=False)
    spec = json.loads((work / "job_spec.json").read_text())
    report = runs.site.repo / "report.json"
    assert spec["measures"]["report_json"] == str(report)
    done = runs.run("run", str(work), SHIM_BENCH_TPS="1234.5")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(report.read_text())["performance"]["system_output_throughput_tok_s"] == 1234.5
    found = record(work)
    assert found["verdict"] == "PASSED" and not found.get("unread")
    assert figure(found, "output_throughput")["value"] == 1234.5


def test_a_four_rank_pytest_job_is_judged_from_rank_0s_one_report(runs: RunSite) -> None:
    """A test needing four GPUs runs as four tasks through trtllm-llmapi-launch; as upstream's
    launcher does, rank 0 runs pytest and the others serve it, so results.xml is written once
    and the verdict names the failed tests from it."""
    command = "pytest -v accuracy/test_llm_api_pytorch.py::TestMultiRank::test_mpi_ranks"
    work = runs.emit("four_ranks", workflow_type="pytest", test_cmd=command,
                     persistent_mode=False)  # fmt: skip
    assert "--ntasks=4" in next(work.glob("*.slurm")).read_text()
    done = runs.run("run", str(work), SHIM_PYTEST_RESULTS="passed=9,failed=1")
    assert done.returncode == 10, done.stdout + done.stderr
    found = record(work)
    assert (found["tests"]["tests"], found["tests"]["failures"]) == (10, 1)
    assert [t["id"] for t in found["tests"]["failed"]] == [
        "accuracy/test_llm_api_pytorch.py::test_case[0]"
    ]
    launched = [r for r in runs.shims.records() if r["prog"] in ("pytest", "trtllm-llmapi-launch")]
    assert sorted(r["env"]["SLURM_PROCID"] for r in launched if r["prog"] == "pytest") == ["0"]
    assert len([r for r in launched if r["prog"] == "trtllm-llmapi-launch"]) == 4


def test_the_table_of_several_jobs_shows_each_headline_figure(
    runs: RunSite, tmp_path: Path
) -> None:
    """A bench job and a pytest job followed together: the table's HEADLINE column has the
    bench's output throughput with its margin and the pytest job's tests passed."""
    reference = references(tmp_path, 5000.0)
    bench = runs.emit("head_bench", workflow_type="bench", bench_cmd=f"{BENCH} --tp 1",
                      persistent_mode=False)  # fmt: skip
    tests = runs.emit("head_tests", workflow_type="pytest", test_cmd=PYTEST, persistent_mode=False)
    done = runs.run("run", str(bench), str(tests), "--reference", str(reference),
                    SHIM_BENCH_TPS="4800.5", SHIM_PYTEST_RESULTS="passed=10")  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    table = done.stdout[done.stdout.index("VERDICT  EXIT") :].splitlines()
    assert table[0].split() == ["VERDICT", "EXIT", "JOB", "ELAPSED", "HEADLINE", "WORK_DIR"]
    assert "output_throughput 4800.50 (+300.50)" in table[1] and table[1].endswith(str(bench))
    assert "10/10 passed" in table[2] and table[2].endswith(str(tests))
    assert table[3] == "2 PASSED"


def test_a_perf_sanity_run_is_judged_by_its_clients_figures_on_slurm(runs: RunSite) -> None:
    """submit.py's launch script, run by sbatch on the loopback Slurm 22.05 (its `--segment`
    left out: no block topology there): the stand-in pytest writes each benchmark client's log
    where test_perf_sanity.py does, and `run` judges the job by their figures."""
    from tests.cases import PERF_CONFIG

    work = runs.emit("perf", workflow_type="perf_sanity", perf_config_yaml=f"@repo/{PERF_CONFIG}",
                     perf_test_name="llama_8b_tp4")  # fmt: skip
    assert "# scriptast: --segment=1 left out" in (work / "slurm_launch.sh").read_text()
    done = runs.run("run", str(work), SHIM_SERVING_TPS="2048")
    assert done.returncode == 0, done.stdout + done.stderr
    found = record(work)
    assert found["verdict"] == "PASSED"
    client = "aggr-llama_8b_aggr-llama_8b_tp4 0.0"
    throughput = figure(found, f"{client} token_throughput")
    assert throughput["value"] == 2048.0 and throughput["headline"] is True
    assert throughput["source"]["file"] == str(
        work / "aggr-llama_8b_aggr-llama_8b_tp4/trtllm-benchmark.0.0.log"
    )
    assert len(found["figures"]) == 16 and not found.get("missing")
    assert f"{client} token_throughput 2048.00" in done.stdout
