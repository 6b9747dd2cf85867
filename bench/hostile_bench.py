"""Hostile files, each refused by a whole `scriptast` process within bounds (targets: 2 s and
100 MiB each): an alias bomb (250^3 entries from a few KB) in a references file, a test-db and a
request; a 1 MB waives line built to make a regex backtrack; a stage list asking for 10,000,000
splits; a UTF-16 JUnit report with entity expansion, read the way `run` reads one. Every case is
made fresh in its own folder; the figures are each process's wall time and peak resident memory
(the kernel's count), the median of `--repeats` runs.

    python bench/hostile_bench.py [--repeats 3]"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.peak_memory import run_measured  # noqa: E402
from tests.site import Site, lay_out  # noqa: E402

SCRIPTAST = str(Path(sys.executable).parent / "scriptast")
TEST_DB = "tests/integration/test_lists/test-db"


def alias_bomb() -> list[str]:
    lines = ["a0: &a0 [" + ", ".join(["x"] * 250) + "]"]
    lines += [f"a{n}: &a{n} [" + ", ".join([f"*a{n - 1}"] * 250) + "]" for n in (1, 2)]
    return lines


def _request(folder: Path, **fields: object) -> Path:
    site = Site(folder / "site")
    path = folder / "request.json"
    path.write_text(json.dumps(site.fields(**fields)))
    return path


def references_bomb(folder: Path) -> list[str]:
    bomb = folder / "references.yaml"
    bomb.write_text("\n".join([*alias_bomb(), "m: {batch: {f: *a2}}"]) + "\n")
    request = _request(folder, workflow_type="bench", reference=str(bomb),
                       bench_cmd="trtllm-bench --model m throughput --dataset d.json")  # fmt: skip
    return ["emit", "bench", "--request", str(request)]


def test_db_bomb(folder: Path) -> list[str]:
    db = folder / "site/home/alice/TensorRT-LLM" / TEST_DB / "l0_b200.yml"
    db.write_text("\n".join([*alias_bomb(), "l0_b200:", "- condition: {terms: {s: *a2}}",
                             "  tests: *a2"]) + "\n")  # fmt: skip
    request = _request(folder, workflow_type="pytest")
    return ["emit", "pytest", "--request", str(request), "--ci-stage", "DGX_B200-PyTorch-1"]


def request_bomb(folder: Path) -> list[str]:
    request = folder / "request.yaml"
    request.write_text("\n".join([*alias_bomb(), "workflow_type: custom", "extra: *a2"]) + "\n")
    return ["emit", "custom", "--request", str(request)]


def waives_line(folder: Path) -> list[str]:
    waives = folder / "site/home/alice/TensorRT-LLM/tests/integration/test_lists/waives.txt"
    waives.write_text(waives.read_text() + "t" + " SKIP (x" * 130_000 + "\n")
    request = _request(folder, workflow_type="pytest")
    return ["emit", "pytest", "--request", str(request), "--ci-stage", "DGX_B200-PyTorch-1"]


def many_splits(folder: Path) -> list[str]:
    stages = folder / "site/home/alice/TensorRT-LLM/jenkins/scripts/test_stage_configs.json"
    listed = json.loads(stages.read_text())
    listed["configs"][0]["splits"] = 10_000_000
    stages.write_text(json.dumps(listed))
    request = _request(folder, workflow_type="pytest")
    name = listed["configs"][0]["name"]
    return ["emit", "pytest", "--request", str(request), "--ci-stage", name, "--all-splits"]


def junit_entities(folder: Path) -> list[str]:
    """The JUnit reader `run` uses, on a UTF-16 report whose entities expand a millionfold."""
    bomb = folder / "results.xml"
    entities = ['<!ENTITY e0 "' + "x" * 1000 + '">'] + [
        f'<!ENTITY e{n} "' + f"&e{n - 1};" * 10 + '">' for n in range(1, 5)
    ]
    text = ('<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE t [' + "".join(entities) + "]>"
            '<testsuite><testcase classname="a" name="t">&e4;</testcase></testsuite>')  # fmt: skip
    bomb.write_bytes(text.encode("utf-16"))
    code = ("import sys; from scriptast.results.junit import read_junit, JunitError\n"
            "try: read_junit(open(sys.argv[1], 'rb').read(), sys.argv[1])\n"
            "except JunitError as e: print('error:', e, file=sys.stderr); sys.exit(1)")  # fmt: skip
    return ["--python", code, str(bomb)]


CASES: dict[str, Callable[[Path], list[str]]] = {
    "alias bomb in a references file (emit bench --reference)": references_bomb,
    "alias bomb in a test-db (emit pytest --ci-stage)": test_db_bomb,
    "alias bomb in a request (emit custom --request)": request_bomb,
    "1 MB waives line (emit pytest --ci-stage)": waives_line,
    "10,000,000 splits (emit pytest --all-splits)": many_splits,
    "UTF-16 JUnit with entity expansion (run's reader)": junit_entities,
}


def once(make: Callable[[Path], list[str]]) -> tuple[float, float, int, str]:
    """(seconds, peak MiB, exit code, the first error line) of one fresh case."""
    with tempfile.TemporaryDirectory(prefix="scriptast-hostile-") as scratch:
        folder = Path(scratch)
        lay_out(folder / "site")
        argv = make(folder)
        argv = [sys.executable, "-c", *argv[1:]] if argv[0] == "--python" else [SCRIPTAST, *argv]
        started = time.monotonic()
        with open(folder / "stderr.txt", "wb") as err:
            done = run_measured(argv, stderr=err)
        seconds = time.monotonic() - started
        said = (folder / "stderr.txt").read_text()
        first = next((line for line in said.splitlines() if line.startswith("error:")), said[:80])
        return seconds, done.peak_bytes / (1 << 20), done.returncode, first


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"{'case':58}  {'seconds':>8}  {'peak MiB':>8}  exit  error line")
    for name, make in CASES.items():
        runs = [once(make) for _ in range(args.repeats)]
        seconds = statistics.median(r[0] for r in runs)
        peak = statistics.median(r[1] for r in runs)
        code, line = runs[-1][2], runs[-1][3]
        print(f"{name:58}  {seconds:8.2f}  {peak:8.1f}  {code:4d}  {line[:90]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
