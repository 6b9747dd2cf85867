"""Sweeps under bad lines and kills: every line gets a result, every good line is written, a
repeated work_dir fails the later lines before anything is written, workers die with the parent."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTAST = str(Path(sys.executable).parent / "scriptast")


def base() -> dict[str, object]:
    data: dict[str, object] = json.loads((ROOT / "examples/bench_local_slurm.json").read_text())
    return data


def good_line(work: Path, index: int) -> bytes:
    fields = {
        **base(),
        "work_dir": str(work / f"w{index}"),
        "bench_cmd": f"trtllm-bench --model org/M{index} throughput --tp {1 + index % 2}",
    }
    return json.dumps(fields).encode()


def run_sweep(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SCRIPTAST, "emit", "--requests", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        errors="backslashreplace",
    )


@pytest.mark.parametrize("count", [10, 60], ids=["serial", "pool"])
def test_bad_lines_fail_alone_and_every_good_line_is_written(tmp_path: Path, count: int) -> None:
    lines = [good_line(tmp_path, i) for i in range(count)]
    bad = {
        3: json.dumps({**base(), "work_dir": str(tmp_path / "s"), "model_name": "\udc80"}).encode(),
        5: json.dumps(
            {**base(), "work_dir": str(tmp_path / "n"), "partition": "a\u0000b"}
        ).encode(),
        7: b'{"workflow_type": "bench", "work_dir": "\xff"}',
        8: b"[1, 2]",
        9: json.dumps({**base(), "work_dir": str(tmp_path / "w0")}).encode(),  # w0 is line 1's
    }
    for index in sorted(bad):
        lines.insert(index - 1, bad[index])
    sweep = tmp_path / "sweep.jsonl"
    sweep.write_bytes(b"\n".join(lines) + b"\n")
    result = run_sweep(sweep)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    errors = result.stderr.splitlines()
    assert [e.split(": error: ")[0] for e in errors] == [f"{sweep} line {n}" for n in sorted(bad)]
    assert "lone surrogate U+DC80" in errors[0]
    assert "NUL byte" in errors[1]
    assert "not UTF-8: byte 0xff" in errors[2]
    assert "one JSON object" in errors[3]
    assert "is also the work_dir of line 1" in errors[4]
    assert result.stdout == f"Generated {count} of {count + 5} jobs from {sweep}; 5 failed\n"
    for index in range(count):
        assert (tmp_path / f"w{index}" / "job_spec.json").is_file()
    assert not any((tmp_path / name).exists() for name in ("s", "n"))
    # line 1 owns w0: its job, not line 9's
    spec = json.loads((tmp_path / "w0" / "job_spec.json").read_text())
    assert spec["model_name"] == "m0"


def test_four_hundred_lines_with_one_work_dir_write_one_job(tmp_path: Path) -> None:
    line = json.dumps({**base(), "work_dir": str(tmp_path / "same")})
    sweep = tmp_path / "sweep.jsonl"
    sweep.write_text("\n".join([line] * 400) + "\n")
    result = run_sweep(sweep)
    assert result.returncode == 1
    assert result.stdout == f"Generated 1 of 400 jobs from {sweep}; 399 failed\n"
    assert len(result.stderr.splitlines()) == 399


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_pool_workers_die_when_the_sweep_is_killed(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep.jsonl"
    sweep.write_bytes(b"\n".join(good_line(tmp_path, i) for i in range(3000)) + b"\n")
    process = subprocess.Popen(
        [SCRIPTAST, "emit", "--requests", str(sweep)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    workers: list[int] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(workers) < 2:
        workers = _children(process.pid)
        time.sleep(0.05)
    assert workers, "the sweep started no pool workers"
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(w) for w in workers):
        time.sleep(0.05)
    assert not any(_alive(w) for w in workers)


def test_a_pool_broken_while_work_is_still_handed_out_costs_no_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A worker dies while later lines are still being read: handing the next one to the
    broken pool must start a new pool, not end the sweep with a traceback. (The workers are
    forked, so they run the patched emit_request.)"""
    import time
    from typing import Any

    from scriptast.pipeline import sweep

    monkeypatch.setattr(sweep, "emit_request", _emit_or_die)
    planned: list[Any] = []

    def requests() -> Any:
        for number, request in enumerate(["ok", "die", "ok", "bad", "ok", "ok"], start=1):
            planned.append((number, request, None))
            yield number, request
            if request == "die":
                time.sleep(1.0)  # the worker is dead before the next line is handed out

    results = list(sweep._in_pool(planned, requests(), 2, 6, False))
    assert [number for number, _ in results] == [1, 2, 3, 4, 5, 6]
    outcomes = dict(results)
    died = outcomes[2]
    assert isinstance(died, str) and "died" in died  # the line that kills its worker
    assert outcomes[4] == "bad line"
    assert [outcomes[n] for n in (1, 3, 5, 6)] == [None, None, None, None]


def _emit_or_die(request: object, as_task: bool = False, line: int = 0) -> str | None:
    """A worker's emit that dies on the line "die" (module level: the pool pickles it)."""
    import os

    if request == "die":
        os._exit(1)
    return None if request != "bad" else "bad line"
