"""`emit pytest --rerun-failed RUN`: a stored run's failed tests as a job of their own, the
request otherwise the same. On the loopback Slurm: a test_cmd run and a CI stage split each fail
one test, are stored by `scriptast run`, and the rerun job runs just that test (and passes);
the bad cases are one error line each with nothing written."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from scriptast.contract.measured import FailedTest, PytestResults
from scriptast.results.store.database import Store
from scriptast.results.store.location import locate
from tests.run_site import RunSite, record
from tests.site import Site
from tests.test_categories import site_fields
from tests.test_results_store import a_run, day

SUITE = "accuracy/test_llm_api_pytorch.py::TestLlama3_1_8BInstruct"
FIRST = f"{SUITE}::test_module_mark"
PARAM = f"{SUITE}::test_param_mark[tp2pp2]"
PARAM_Q = f"'{PARAM}'"
STAGE = "DGX_H100-PyTorch-Post-Merge"


def stored_ids(store: Path) -> list[tuple[int, str]]:
    with sqlite3.connect(store) as db:
        return [(int(i), str(v)) for i, v in db.execute("SELECT id, verdict FROM scriptast_runs")]


def request_file(site: Site, tmp_path: Path, name: str, **fields: Any) -> Path:
    chosen = {"account": "root", "partition": "batch", "work_dir": str(site.work(name)),
              "workflow_type": "pytest", "persistent_mode": False, **fields}  # fmt: skip
    made = site_fields(site, chosen)
    if "ci_stage" in fields:
        made.pop("test_cmd", None)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(made))
    return path


@pytest.mark.slurm
def test_a_test_cmd_runs_failed_test_is_rerun_alone_and_passes(
    runs: RunSite, tmp_path: Path, results_store: Path
) -> None:
    command = f"pytest -v {FIRST} {PARAM} -k 'not slow' --timeout=600"
    request = request_file(runs.site, tmp_path, "suite", test_cmd=command)
    emitted = runs.run("emit", "pytest", "--request", str(request))
    assert emitted.returncode == 0, emitted.stderr
    work = runs.site.work("suite")
    done = runs.run("run", str(work), SHIM_PYTEST_RESULTS="from-test-list",
                    SHIM_PYTEST_FAIL="test_param_mark")  # fmt: skip
    assert done.returncode == 10, done.stdout + done.stderr
    (stored,) = stored_ids(results_store)
    assert stored[1] == "FAILED"
    with sqlite3.connect(results_store) as db:  # one model key across workflows: the HF id
        keys = db.execute("SELECT model, model_name FROM scriptast_runs").fetchall()
    assert keys == [("meta-llama/Llama-3.1-8B-Instruct", "llama_3_1_8b_instruct")]
    again = runs.run("emit", "pytest", "--request", str(request), "--rerun-failed", str(stored[0]))
    assert again.returncode == 0, again.stderr
    rerun = Path(f"{work}_rerun{stored[0]}")
    assert (work / "run.json").is_file()  # the first run's work dir is left as it was
    spec = json.loads((rerun / "job_spec.json").read_text())
    script = (rerun / spec["script_name"]).read_text()
    # the selection replaced by the failed test; the options kept; -k (a selection) dropped
    quoted = f"'\\''{PARAM}'\\''"  # the id quoted, inside the step's bash -c '...'
    assert f"pytest -v --timeout=600 {quoted} --junitxml=" in script, script
    assert FIRST not in script and "not slow" not in script
    passed = runs.run("run", str(rerun), SHIM_PYTEST_RESULTS="from-test-list")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    tests = record(rerun)["tests"]
    assert (tests["tests"], tests["failures"]) == (1, 0)


@pytest.mark.slurm
def test_a_ci_stage_splits_failed_test_is_rerun_from_a_narrowed_list(
    runs: RunSite, tmp_path: Path, results_store: Path
) -> None:
    request = request_file(runs.site, tmp_path, "stage", ci_stage=f"{STAGE}-1")
    assert runs.run("emit", "pytest", "--request", str(request)).returncode == 0
    work = runs.site.work("stage")
    whole = (work / "test_list.txt").read_text().splitlines()
    fail_word = whole[0].split("::")[-1].split(" ")[0]  # the first listed test of the stage
    done = runs.run("run", str(work), SHIM_PYTEST_RESULTS="from-test-list",
                    SHIM_PYTEST_FAIL=fail_word)  # fmt: skip
    failed = [f["id"] for f in record(work)["tests"].get("failed", [])]
    assert done.returncode == 10 and failed, done.stdout + done.stderr
    (stored,) = stored_ids(results_store)
    again = runs.run("emit", "pytest", "--request", str(request), "--rerun-failed", str(stored[0]))
    assert again.returncode == 0, again.stderr
    rerun = Path(f"{work}_rerun{stored[0]}")
    listed = (rerun / "test_list.txt").read_text().splitlines()
    assert [line.split(" ")[0] for line in listed] == failed  # the stage's lines, TIMEOUT kept
    assert all(line in whole for line in listed)
    script = next(rerun.glob("*.slurm")).read_text()
    assert "--splits" not in script and "--group" not in script  # the list holds just them
    assert f"--test-prefix={STAGE}-1" in script  # the stage's other flags kept
    passed = runs.run("run", str(rerun), SHIM_PYTEST_RESULTS="from-test-list")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert record(rerun)["tests"]["tests"] == len(failed)


def _store_with(path: Path, *runs: Any) -> None:
    with Store.open(locate(str(path)), create=True) as store:
        for run in runs:
            store.append(run)


def _failing(*ids: str) -> PytestResults:
    return PytestResults(source="results.xml", tests=len(ids) + 1, failures=len(ids), errors=0,
                         skipped=0, failed=tuple(FailedTest(id=i, outcome="failed") for i in ids))  # fmt: skip


@pytest.mark.parametrize(
    ("stored", "args", "said"),
    [
        (None, ["--rerun-failed", "7"], "error: no run 7 in the results store"),
        ("bench", ["--rerun-failed", "1"], "error: run 1 is a bench run with no JUnit results: "
         "--rerun-failed reruns a pytest run's failed tests"),
        ("passed", ["--rerun-failed", "1"], "error: run 1 has no failed test (1 test(s), verdict "
         "PASSED): nothing to rerun"),
        ("option", ["--rerun-failed", "1"], "error: only_tests '--junitxml=/tmp/elsewhere.xml' is "
         "not a test id relative to tests/integration/defs"),
        ("upward", ["--rerun-failed", "1"], "error: only_tests '../../../etc/evil.py::t' is not a "
         "test id"),
        ("failing", ["--results", "x.db"], "error: --results names the store --rerun-failed "
         "reads: add --rerun-failed RUN or drop --results"),
        ("failing", ["--rerun-failed", "1", "--all-splits"], "error: --rerun-failed runs one job "
         "of the failed tests: drop --all-splits"),
    ],
)  # fmt: skip
def test_a_rerun_that_cannot_be_made_is_one_error_line(
    site: Site, tmp_path: Path, results_store: Path, stored: str | None, args: list[str],
    said: str,
) -> None:  # fmt: skip
    from tests.run_site import SCRIPTAST

    made = {
        "bench": a_run(1, finished=day(1)),
        "passed": a_run(1, finished=day(1), workflow="pytest", verdict="PASSED",
                        tests=PytestResults(source="r.xml", tests=1, failures=0, errors=0,
                                            skipped=0)),
        "option": a_run(1, finished=day(1), workflow="pytest", verdict="FAILED",
                        tests=_failing("--junitxml=/tmp/elsewhere.xml")),
        "upward": a_run(1, finished=day(1), workflow="pytest", verdict="FAILED",
                        tests=_failing("../../../etc/evil.py::t")),
        "failing": a_run(1, finished=day(1), workflow="pytest", verdict="FAILED",
                         tests=_failing(PARAM)),
    }  # fmt: skip
    if stored is None:
        _store_with(results_store)
    else:
        _store_with(results_store, made[stored])
    request = request_file(site, tmp_path, "bad", test_cmd=f"pytest {FIRST}")
    import subprocess

    done = subprocess.run([SCRIPTAST, "emit", "pytest", "--request", str(request), *args],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode in (1, 2), done.stderr
    assert done.stderr.startswith(said), done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert not list(site.root.rglob("job_spec.json")), "something was written"


def test_a_rerun_of_a_bench_request_is_refused(site: Site, tmp_path: Path,
                                               results_store: Path) -> None:  # fmt: skip
    import subprocess

    from tests.run_site import SCRIPTAST

    _store_with(results_store, a_run(1, finished=day(1), workflow="pytest", verdict="FAILED",
                                     tests=_failing(PARAM)))  # fmt: skip
    request = request_file(site, tmp_path, "bench", workflow_type="bench")
    done = subprocess.run([SCRIPTAST, "emit", "--request", str(request), "--rerun-failed", "1"],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 1
    assert done.stderr == ("error: --rerun-failed reruns a pytest run's failed tests, and this "
                           "request's workflow_type is 'bench': use `scriptast emit pytest` with "
                           "the run's request\n")  # fmt: skip


def test_a_rerun_says_when_the_record_cut_its_failed_tests_or_guessed_an_id(
    site: Site, tmp_path: Path, results_store: Path
) -> None:
    import subprocess

    from tests.run_site import SCRIPTAST

    guessed = FailedTest(id=FIRST, outcome="failed",
                         junit="accuracy.test_llm_api_pytorch.TestLlama3_1_8BInstruct::"
                               "test_module_mark (ambiguous)")  # fmt: skip
    tests = PytestResults(source="r.xml", tests=300, failures=150, errors=2, skipped=0,
                          failed=(guessed, FailedTest(id=PARAM, outcome="error")))  # fmt: skip
    _store_with(results_store, a_run(1, finished=day(1), workflow="pytest", verdict="FAILED",
                                     tests=tests))  # fmt: skip
    request = request_file(
        site, tmp_path, "cut", test_cmd=f"pytest {FIRST}", account="coreai_trtllm"
    )
    done = subprocess.run([SCRIPTAST, "emit", "pytest", "--request", str(request),
                           "--rerun-failed", "1", "--stdout"],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    warned = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert warned[:2] == [
        "warning: run 1 had 152 failed test(s) and its record keeps the first 2: only those are "
        "rerun",
        f"warning: 1 test id(s) of run 1 were read from JUnit without their file and may be "
        f"wrong: {FIRST}",
    ]
    quoted = f"'\\''{PARAM}'\\''"  # a [ quoted, inside the step's bash -c '...'
    assert f"pytest {FIRST} {quoted} --junitxml=" in done.stdout  # both, in the record's order


@pytest.mark.parametrize(
    ("command", "narrowed"),
    [
        (f"pytest -v {FIRST}", f"pytest -v {PARAM_Q}"),
        (f"python3 -m pytest {FIRST} -x", f"python3 -m pytest -x {PARAM_Q}"),
        (f"pytest -v tests/integration/defs/{FIRST} -m 'not slow'",
         f"pytest -v 'tests/integration/defs/{PARAM}'"),
        (f"cd tests/integration && pytest -v defs/{FIRST} | tee log.txt",
         f"cd tests/integration && pytest -v 'defs/{PARAM}' | tee log.txt"),
        (f"pytest -v accuracy --deselect {FIRST} -k fp8", f"pytest -v {PARAM_Q}"),
    ],
)  # fmt: skip
def test_test_cmds_selection_is_replaced_in_the_form_it_names_tests(
    site: Site, command: str, narrowed: str
) -> None:
    from scriptast.builders.categories.pytest.rerun import narrowed_command
    from scriptast.builders.resolution.trail import Trail

    assert narrowed_command(command, (PARAM,), str(site.repo), Trail()) == narrowed
