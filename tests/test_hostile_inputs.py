"""Hostile input files are refused within bounds, with one error line and nothing written: an
alias bomb in a references file, a test-db or a request, a waives line built to make a regex
backtrack, a stage list asking for ten million splits, a stage family named like a path, a
test-db range bound that overflows. Each is a whole `scriptast` process; its peak memory is the
kernel's count and its time is bounded far above what it takes (bench/hostile_bench.py measures
both), so that the blow-ups these inputs caused (tens of seconds, gigabytes) fail here."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.peak_memory import run_measured
from tests.site import Site

SCRIPTAST = str(Path(sys.executable).parent / "scriptast")
TEST_DB = "tests/integration/test_lists/test-db"
STAGES = "jenkins/scripts/test_stage_configs.json"
WAIVES = "tests/integration/test_lists/waives.txt"
MOST_SECONDS = 20.0
MOST_BYTES = 200 << 20


def alias_bomb(width: int = 250, depth: int = 3) -> list[str]:
    """YAML lines whose aliases expand to width**depth entries from a few KB."""
    lines = ["a0: &a0 [" + ", ".join(["x"] * width) + "]"]
    for level in range(1, depth):
        lines.append(f"a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * width) + "]")
    return lines


def bounded(argv: list[str], tmp_path: Path) -> tuple[int, str, int]:
    """Run scriptast ARGV to its end (killed past the bound): exit code, stderr, peak bytes."""
    err_path = tmp_path / "stderr.txt"
    with open(err_path, "wb") as err:
        done = run_measured([SCRIPTAST, *argv], seconds=MOST_SECONDS, stderr=err)
    assert done.returncode != -9, f"scriptast {' '.join(argv[:2])} ran past {MOST_SECONDS} s"
    assert done.peak_bytes < MOST_BYTES, f"{done.peak_bytes >> 20} MiB"
    return done.returncode, err_path.read_text(), done.peak_bytes


def emit_stage(site: Site, tmp_path: Path, *args: str) -> tuple[int, str]:
    path = site.root / "request.json"
    path.write_text(json.dumps(site.fields(workflow_type="pytest")))
    code, err, _ = bounded(["emit", "pytest", "--request", str(path), *args], tmp_path)
    return code, err


def test_an_alias_bomb_in_the_test_db_is_refused(site: Site, tmp_path: Path) -> None:
    db = site.repo / TEST_DB / "l0_b200.yml"
    db.write_text("\n".join([*alias_bomb(), "version: 0.0.1", "l0_b200:", "- condition:",
                             "    terms: {stage: *a2}", "  tests: *a2"]) + "\n")  # fmt: skip
    code, err = emit_stage(site, tmp_path, "--ci-stage", "DGX_B200-PyTorch-1")
    assert code == 1
    assert err == (f"error: {db}: not a test-db file: line 3: its aliases expand to more than "
                   "1,000,000 nodes (an alias bomb?); it is not read\n")  # fmt: skip
    assert not site.work("job").exists()


def test_an_alias_bomb_in_a_references_file_is_refused(site: Site, tmp_path: Path) -> None:
    references = tmp_path / "references.yaml"
    references.write_text("\n".join([*alias_bomb(), "model: {batch: {figure: *a2}}"]) + "\n")
    request = tmp_path / "request.json"
    request.write_text(json.dumps(site.fields(
        workflow_type="bench", bench_cmd="trtllm-bench --model m throughput --dataset d.json",
        reference=str(references))))  # fmt: skip
    code, err, _ = bounded(["emit", "bench", "--request", str(request)], tmp_path)
    assert code == 1
    assert err == (f"error: references file {references} is not valid YAML: line 3: its aliases "
                   "expand to more than 1,000,000 nodes (an alias bomb?); it is not read\n")  # fmt: skip
    assert not site.work("job").exists()


def test_an_alias_bomb_in_a_request_is_refused(site: Site, tmp_path: Path) -> None:
    request = tmp_path / "request.yaml"
    fields = site.fields(workflow_type="custom", custom_cmd="true")
    request.write_text("\n".join([*alias_bomb(), "extra: *a2", json.dumps(fields)[1:-1]
                                  .replace('", "', '"\n"')]) + "\n")  # fmt: skip
    code, err, _ = bounded(["emit", "custom", "--request", str(request)], tmp_path)
    assert code == 1
    assert err == (f"error: request file {request} is not valid YAML: line 3: its aliases "
                   "expand to more than 1,000,000 nodes (an alias bomb?); it is not read\n")  # fmt: skip


def test_a_waives_line_built_to_backtrack_is_refused_at_once(site: Site, tmp_path: Path) -> None:
    waives = site.repo / WAIVES
    line = "t" + " SKIP (x" * 130_000  # 1 MB; each ` SKIP (` a place a regex tries to end at
    waives.write_text(waives.read_text() + line + "\n")
    number = waives.read_text().count("\n")
    code, err = emit_stage(site, tmp_path, "--ci-stage", "DGX_B200-PyTorch-1")
    assert code == 1
    assert err.startswith(f"error: {waives}:{number}: not a waive: 't SKIP (x SKIP (x"), err


def _stage_list(site: Site, **changes: object) -> Path:
    path = site.repo / STAGES
    listed = json.loads(path.read_text())
    entry = next(c for c in listed["configs"] if c["name"] == "DGX_B200-PyTorch")
    entry.update(changes)
    path.write_text(json.dumps(listed))
    return path


def test_ten_million_splits_are_refused_before_anything(site: Site, tmp_path: Path) -> None:
    stages = _stage_list(site, splits=10_000_000)
    code, err = emit_stage(site, tmp_path, "--ci-stage", "DGX_B200-PyTorch", "--all-splits",
                           "--work-dir", str(tmp_path / "stage"))  # fmt: skip
    assert code == 1
    assert err.startswith(f"error: {stages}: not the stage list CI reads: Expected `int` <= "
                          "1000"), err  # fmt: skip
    assert not (tmp_path / "stage").exists()


def test_a_stage_named_like_a_path_writes_nothing_outside(site: Site, tmp_path: Path) -> None:
    stages = _stage_list(site, name="../../outside/DGX_B200-PyTorch")
    top = tmp_path / "a" / "b" / "stage"
    code, err = emit_stage(site, tmp_path, "--ci-stage", "../../outside/DGX_B200-PyTorch",
                           "--all-splits", "--work-dir", str(top))  # fmt: skip
    assert code == 1
    assert err.startswith(f"error: {stages}: not the stage list CI reads: Expected `str` "
                          "matching regex"), err  # fmt: skip
    assert not (tmp_path / "a" / "outside").exists() and not top.exists()


@pytest.mark.parametrize("bound", ["1e400", "nan", ".inf", "many"])
def test_a_test_db_range_bound_that_is_no_count_is_one_error_line(
    site: Site, tmp_path: Path, bound: str
) -> None:
    db = site.repo / TEST_DB / "l0_b200.yml"
    db.write_text(db.read_text().replace("        gte: 1\n", f"        gte: {bound}\n", 1))
    code, err = emit_stage(site, tmp_path, "--ci-stage", "DGX_B200-PyTorch-1")
    assert code == 1
    assert err == (f"error: {db}:6: range system_gpu_count gte is {bound!r}: not a number from "
                   "-1,000,000 to 1,000,000; fix the test-db block\n")  # fmt: skip
