"""ReFrame's results storage (4.10) holding the same runs as bench/store_bench.py's scriptast
store, for its paired rows: one real `reframe` session (a run-only check that prints a bench
job's figures and reads each as a performance variable) stored by ReFrame itself, then that
session once more for each run with its own uuids, times, test name (model and GPU count,
written as ReFrame writes a parameterised test) and values, in the two rows ReFrame's storage
writes a session (`sessions`: the whole report as JSON; `testcases`: one row a case).
ReFrame is installed from PyPI into a cached virtual environment the first time."""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

VERSION = "4.10.4"


def reframe_python(cache: Path) -> str:
    """A Python with reframe-hpc VERSION (made in `cache` on first use)."""
    venv = cache / f"reframe-{VERSION}"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", f"reframe-hpc=={VERSION}"],
                       check=True, stderr=subprocess.DEVNULL)  # fmt: skip
    return str(python)


def _reframe(python: str) -> str:
    """The `reframe` command installed beside PYTHON."""
    return str(Path(python).parent / "reframe")


def _check(figures: Sequence[tuple[str, float, str]]) -> str:
    printed = "\\n".join(f"{name}: {value}" for name, value, _ in figures)
    variables = ", ".join(
        f"{name!r}: sn.make_performance_function(sn.extractsingle(r'{name}: (\\S+)', "
        f"self.stdout, 1, float), {unit!r})"
        for name, _, unit in figures
    )
    return f"""import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import run_before, sanity_function


@rfm.simple_test
class trtllm_bench(rfm.RunOnlyRegressionTest):
    valid_systems = ["*"]
    valid_prog_environs = ["*"]
    executable = "printf"
    executable_opts = ["'{printed}\\\\n'"]

    @sanity_function
    def validate(self):
        return sn.assert_found(r"output_throughput", self.stdout)

    @run_before("performance")
    def set_perf_variables(self):
        self.perf_variables = {{{variables}}}
"""


def environment(home: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(home), "RFM_ENABLE_RESULTS_STORAGE": "1"}


def fill_reframe(python: str, home: Path, figures: Sequence[tuple[str, float, str]],
                 runs: Sequence[tuple[float, str, int]], seed: str) -> Path:  # fmt: skip
    """ReFrame's store in HOME with one session a run: (finished unix time, model, GPU
    count) each. Its database file."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "check.py").write_text(_check(figures))
    subprocess.run([_reframe(python), "-c", str(home / "check.py"), "-r"], cwd=home,
                   env=environment(home), check=True, capture_output=True)  # fmt: skip
    database = home / ".reframe" / "reports" / "results.db"
    rng = random.Random(seed)
    with sqlite3.connect(database) as connection:
        (blob,) = connection.execute("SELECT json_blob FROM sessions").fetchone()
        connection.execute("DELETE FROM testcases")
        connection.execute("DELETE FROM sessions")
        template = json.loads(blob)
        for start in range(0, len(runs), 5000):
            rows = [_session(template, finished, model, gpus, rng)
                    for finished, model, gpus in runs[start : start + 5000]]  # fmt: skip
            connection.executemany("INSERT INTO sessions VALUES (?, ?, ?, ?, ?)",
                                   [row[0] for row in rows])  # fmt: skip
            connection.executemany("INSERT INTO testcases VALUES (?, ?, ?, ?, ?, ?, ?)",
                                   [row[1] for row in rows])  # fmt: skip
    return database


def _session(template: dict[str, object], finished: float, model: str, gpus: int,
             rng: random.Random) -> tuple[tuple[object, ...], tuple[object, ...]]:  # fmt: skip
    report = json.loads(json.dumps(template))
    session = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    info = report["session_info"]
    stamp = time.strftime("%Y%m%dT%H%M%S+0000", time.gmtime(finished))
    info.update(uuid=session, time_start=stamp, time_end=stamp, time_start_unix=finished - 300,
                time_end_unix=finished)  # fmt: skip
    case = report["runs"][0]["testcases"][0]
    name = f"trtllm_bench %model={model} %gpus={gpus}"
    case.update(uuid=f"{session}:0:0", session_uuid=session, job_completion_time_unix=finished,
                name=name, display_name=name, unique_name=f"trtllm_bench_{rng.getrandbits(32):x}",
                jobid=str(rng.getrandbits(20)))  # fmt: skip
    for key, values in case["perfvalues"].items():
        values[0] = round(values[0] * rng.uniform(0.5, 1.5), 4)
        case["perfvalues"][key] = values
    blob = json.dumps(report)
    return ((session, finished - 300, finished, blob, None),
            (name, case["system"], case["partition"], case["environ"], finished, session,
             case["uuid"]))  # fmt: skip


def timed_reframe(python: str, home: Path, argv: list[str], repeats: int = 3) -> float:
    """The median wall time of `reframe ARGV` on the store in HOME."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([_reframe(python), *argv], cwd=home, env=environment(home),
                       check=True, capture_output=True)  # fmt: skip
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


PAIRED: dict[str, list[str]] = {
    "list, the last 7 days": ["--list-stored-sessions=now-7d:now"],
    "list one model, the last 90 days": [
        "--list-stored-testcases=now-90d:now/mean:/", "-n", "model=org/model-03 ",
    ],
    "compare two windows (mean)": ["--performance-compare=now-14d:now-7d/now-7d:now/mean:/"],
}  # fmt: skip
"""ReFrame's command for each operation scriptast's store is timed on too."""
