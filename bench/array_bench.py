"""A sweep as one job array, on a real Slurm cluster: 50 short jobs followed to their verdicts by
`scriptast run` as one array and as 50 batch jobs, against submitit's `map_array` and its
one-job-each `submit` (from the peers' environment, `PEERS_VENV`), paired, every pair on new
jobs; each side's Slurm commands counted by wrappers, its own CPU (its process and every
process it waited for: the Slurm commands it ran; the jobs run under slurmd) and its wall time
to the last result. Then 1,000 tasks: emit with --array against `import submitit`, the sbatch
a run of them would send, and emit's peak memory at 250 and at 1,000 tasks.

    SCRIPTAST_SLURM_CONF=/path/slurm.conf python bench/array_bench.py [--jobs 50] [--pairs 3]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCRIPTAST = shutil.which("scriptast") or str(Path(sys.executable).parent / "scriptast")
PEERS = Path(os.environ.get("PEERS_VENV", "/tmp/scriptast-peers")) / "bin" / "python"
COUNTED = ("sbatch", "squeue", "sacct", "scontrol", "scancel")
SUBMITIT = """
import sys, time, submitit
def task(seconds):
    time.sleep(seconds)
    return seconds
folder, count, mode, seed = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
executor = submitit.AutoExecutor(folder=folder, cluster="slurm")
executor.update_parameters(slurm_partition="batch", timeout_min=10,
                           slurm_array_parallelism=count)
seconds = [1 + seed + n / 1000 for n in range(count)]
if mode == "map_array":
    jobs = executor.map_array(task, seconds)
else:
    jobs = [executor.submit(task, s) for s in seconds]
print(sum(1 for job in jobs if job.result() is not None))
"""


def wrappers(folder: Path, log: Path) -> Path:
    """Slurm's commands, each noting its call (time, argv), then running the real one."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from executor_bench import _wrappers

    return _wrappers(folder, log, COUNTED)


def timed(argv: list[str], env: dict[str, str], cwd: Path | None = None) -> tuple[float, float,
                                                                                  str]:  # fmt: skip
    """(wall s, CPU s of the command and what it waited for, its stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=900, cwd=cwd)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert done.returncode == 0, done.stderr[-2000:]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def counted(log: Path) -> dict[str, Any]:
    """Each command's calls, and the squeue calls a poll (calls more than 50 ms apart are
    two polls)."""
    calls = [line.split(" ", 2) for line in log.read_text().splitlines()] if log.exists() else []
    found: dict[str, Any] = {tool: sum(1 for c in calls if c[1] == tool) for tool in COUNTED}
    times = [float(c[0]) for c in calls if c[1] == "squeue"]
    polls = 1 + sum(1 for a, b in itertools.pairwise(times) if b - a > 0.05) if times else 0
    found["squeue a poll"] = len(times) / polls if polls else 0.0
    return found


def sweep_lines(folder: Path, slurm_env: Path, count: int, seed: int) -> Path:
    """`count` distinct custom jobs of one shape (sleep a second and a bit)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from executor_bench import custom_fields

    lines = [
        json.dumps(custom_fields(folder / f"job{n:03d}", f"sleep 1.{seed}{n:03d}", slurm_env))
        for n in range(count)
    ]
    path = folder / "sweep.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def scriptast_side(folder: Path, slurm_env: Path, env: dict[str, str], count: int, seed: int,
                   array: bool) -> dict[str, Any]:  # fmt: skip
    folder.mkdir()
    sweep = sweep_lines(folder, slurm_env, count, seed)
    argv = [SCRIPTAST, "emit", "--requests", str(sweep), *(["--array"] if array else [])]
    emitted = subprocess.run(argv, env=env, capture_output=True)
    assert emitted.returncode == 0, emitted.stderr
    log = folder / "calls.log"
    bin_dir = wrappers(folder, log)
    works = [str(folder / f"job{n:03d}") for n in range(count)]
    wall, cpu, out = timed([SCRIPTAST, "run", "--no-store", "--json", *works],
                           {**env, "PATH": f"{bin_dir}:{env['PATH']}"})  # fmt: skip
    passed = sum(r["verdict"] == "PASSED" for r in json.loads(out))
    return {"wall": wall, "cpu": cpu, "passed": passed, **counted(log)}


def submitit_side(folder: Path, env: dict[str, str], count: int, seed: int,
                  mode: str) -> dict[str, Any]:  # fmt: skip
    folder.mkdir()
    log = folder / "calls.log"
    bin_dir = wrappers(folder, log)
    script = folder / "peer.py"
    script.write_text(SUBMITIT)
    wall, cpu, out = timed([str(PEERS), str(script), str(folder / "logs"), str(count), mode,
                            str(seed / 10)], {**env, "PATH": f"{bin_dir}:{env['PATH']}"},
                           cwd=folder)  # fmt: skip
    return {"wall": wall, "cpu": cpu, "passed": int(out.strip().splitlines()[-1]), **counted(log)}


def thousand(folder: Path, slurm_env: Path, env: dict[str, str]) -> list[tuple[str, str]]:
    """Emit of 1,000 tasks with --array against `import submitit` (paired, three times), the
    sbatch commands `run --dry-run` lists for them, and emit's peak memory at 250 and 1,000."""
    ratios, rows = [], []
    for attempt in range(3):
        work = folder / f"k{attempt}"
        work.mkdir()
        sweep = sweep_lines(work, slurm_env, 1000, attempt)
        wall, _, _ = timed([SCRIPTAST, "emit", "--requests", str(sweep), "--array"], env)
        baseline, _, _ = timed([str(PEERS), "-c", "import submitit"], env)
        ratios.append(wall / baseline)
    works = [str(folder / "k0" / f"job{n:03d}") for n in range(1000)]
    dry = subprocess.run([SCRIPTAST, "run", "--dry-run", *works], env=env, capture_output=True,
                         text=True)  # fmt: skip
    peaks = {}
    for size in (250, 1000):
        work = folder / f"m{size}"
        work.mkdir()
        sweep = sweep_lines(work, slurm_env, size, 7)
        measured = subprocess.run(
            ["/usr/bin/time", "-f", "%M", SCRIPTAST, "emit", "--requests", str(sweep), "--array"],
            env=env, capture_output=True, text=True,
        )  # fmt: skip
        peaks[size] = int(measured.stderr.strip().splitlines()[-1]) / 1024
    each = ", ".join(f"{r:.1f}" for r in ratios)
    sbatches = sum(1 for line in dry.stdout.splitlines() if line.startswith("sbatch"))
    rows.append(("1,000 tasks: emit --array / import submitit, paired (target <= 10)",
                 f"median {statistics.median(ratios):.1f} ({each})"))  # fmt: skip
    rows.append(("1,000 tasks: sbatch commands run would send (target 1 a MaxArraySize)",
                 str(sbatches)))  # fmt: skip
    rows.append(("emit --array peak RSS of the main process, 250 / 1,000 tasks",
                 f"{peaks[250]:.1f} / {peaks[1000]:.1f} MiB"))  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=50)
    parser.add_argument("--pairs", type=int, default=3)
    args = parser.parse_args()
    conf = os.environ.get("SCRIPTAST_SLURM_CONF")
    if not conf or not Path(conf).is_file():
        sys.exit("set SCRIPTAST_SLURM_CONF to a test cluster's slurm.conf (tests/slurm/cluster.sh)")
    env = {**os.environ, "SLURM_CONF": conf}
    env["PATH"] = f"{Path(SCRIPTAST).parent}:{env['PATH']}"
    sides = ("scriptast array", "scriptast 50 batch jobs", "submitit map_array",
             "submitit one job each")  # fmt: skip
    found: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    with tempfile.TemporaryDirectory(prefix="scriptast-array-bench-") as scratch:
        folder = Path(scratch)
        os.chmod(folder, 0o755)
        slurm_env = folder / "slurm_env.json"
        assert subprocess.run([SCRIPTAST, "probe-slurm", "-o", str(slurm_env)], env=env,
                              capture_output=True).returncode == 0  # fmt: skip
        for pair in range(args.pairs):
            order = list(sides) if pair % 2 == 0 else list(reversed(sides))
            for side in order:
                place = folder / f"{pair}-{sides.index(side)}"
                seed = pair * 4 + sides.index(side)
                if side.startswith("scriptast"):
                    result = scriptast_side(place, slurm_env, env, args.jobs, seed,
                                            array=side.endswith("array"))  # fmt: skip
                else:
                    mode = "map_array" if "map_array" in side else "submit"
                    result = submitit_side(place, env, args.jobs, seed, mode)
                found[side].append(result)
        rows = []
        for side in sides:
            runs = found[side]
            last = ", ".join(str(runs[-1][k]) for k in ("passed", *COUNTED[:4]))
            rows.append((f"{side}: passed, sbatch, squeue, sacct, scontrol (last pair)", last))
            rows.append((f"{side}: own CPU s, wall s to the last result (median)",
                         f"{statistics.median(r['cpu'] for r in runs):.2f}, "
                         f"{statistics.median(r['wall'] for r in runs):.1f}"))  # fmt: skip
        array = found["scriptast array"]

        def ratio(other: str, key: str) -> str:
            pairs = [a[key] / b[key] for a, b in zip(array, found[other], strict=True)]
            return f"{statistics.median(pairs):.2f} ({', '.join(f'{p:.2f}' for p in pairs)})"

        rows += [
            ("array CPU / submitit one job each, paired (target <= 1.0)",
             ratio("submitit one job each", "cpu")),
            ("array CPU / submitit map_array, paired (target <= 2.5)",
             ratio("submitit map_array", "cpu")),
            ("array wall / scriptast 50 batch jobs, paired (target <= 1.0)",
             ratio("scriptast 50 batch jobs", "wall")),
        ]  # fmt: skip
        rows.append(("array: squeue calls a poll, every task in the one call (target <= 1)",
                     f"{max(r['squeue a poll'] for r in array):.2f} at most"))  # fmt: skip
        rows += thousand(folder, slurm_env, env)
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name.ljust(width)}  {value}")


if __name__ == "__main__":
    main()
