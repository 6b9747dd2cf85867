"""A CI stage reproduced on the real loopback Slurm: `emit pytest --ci-stage NAME
--all-splits` writes both splits of a two-split stage, one `scriptast run` runs them, each
split's JUnit XML comes back into its work dir, and the stage's verdict names the failing test.
The stand-in pytest (tests/shims/ci_pytest.py) splits the list as pytest-split does and skips
the waived tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.run_site import RunSite, record
from tests.test_categories import site_fields

pytestmark = pytest.mark.slurm
STAGE = "DGX_H100-PyTorch-Post-Merge"
FAILING = "TestLlama3_1_8BInstruct::test_auto_dtype"


def test_a_two_split_stage_runs_both_splits_and_names_the_failing_test(
    runs: RunSite, tmp_path: Path
) -> None:
    request = tmp_path / "stage.json"
    fields = site_fields(runs.site, {"account": "root", "partition": "batch",
                                     "work_dir": str(runs.site.work("stage")),
                                     "workflow_type": "pytest", "persistent_mode": False})  # fmt: skip
    fields.pop("test_cmd", None)
    request.write_text(json.dumps(fields))
    emitted = runs.run("emit", "pytest", "--request", str(request), "--ci-stage", STAGE,
                       "--all-splits")  # fmt: skip
    assert emitted.returncode == 0, emitted.stderr
    splits = [runs.site.work("stage") / f"{STAGE}-{k}" for k in (1, 2)]
    done = runs.run("run", *map(str, splits), SHIM_PYTEST_RESULTS="from-test-list",
                    SHIM_PYTEST_FAIL="test_auto_dtype")  # fmt: skip
    assert done.returncode == 10, done.stdout + done.stderr  # FAILED, the stage's verdict
    found = [record(split) for split in splits]
    verdicts = {Path(r["work_dir"]).name: r["verdict"] for r in found}
    assert sorted(verdicts.values()) == ["FAILED", "PASSED"]
    tests = [r["tests"] for r in found]
    assert sum(t["tests"] for t in tests) == 5  # the stage's list, split in two
    assert sum(t["skipped"] for t in tests) == 2  # waived: one by id, one by full:H100/
    assert all(
        Path(t["source"]) == split / "results.xml" for t, split in zip(tests, splits, strict=True)
    )
    assert all((split / "results.xml").is_file() for split in splits)
    (failed,) = [f for t in tests for f in t.get("failed", [])]
    (failing_split,) = [name for name, verdict in verdicts.items() if verdict == "FAILED"]
    test_id = f"accuracy/test_llm_api_pytorch.py::{FAILING}"  # the node id to paste
    assert failed["id"] == test_id  # the stage's prefix taken off the JUnit classname
    assert failed["junit"] == f"{failing_split}.accuracy.test_llm_api_pytorch.{FAILING}"
    assert failed["message"].startswith("AssertionError: accuracy/test_llm_api_pytorch.py::")
    assert test_id in done.stdout  # the verdict names it
    assert "1 FAILED, 1 PASSED" in done.stdout
