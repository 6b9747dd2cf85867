"""scriptast's speed and memory, side by side with its peers, in one run: `python bench/run.py`.

Prints a table of medians and the ratios the performance targets are stated in. `--with-peers`
installs submitit, simple_slurm and nemo_run into a separate virtual environment (PEERS_VENV,
default /tmp/scriptast-peers) and measures them there.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PEERS = ("submitit", "simple_slurm", "nemo_run")
# nemo_run 0.11.1 imports leptonai.api.v1, which leptonai 0.47 removed.
PEER_REQUIREMENTS = ("submitit", "simple_slurm", "nemo_run", "leptonai<0.47")
BENCH_REQUEST = ROOT / "examples" / "bench_local_slurm.json"


def measuring_environment(pycache: str) -> dict[str, str]:
    """The environment every timed command runs in: bytecode cached (as after a pip install,
    which compiles it) in a private folder, whatever PYTHONDONTWRITEBYTECODE says here."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPYCACHEPREFIX": pycache}


ENV: dict[str, str] = dict(os.environ)


def median_seconds(argv: list[str], runs: int, cwd: Path = ROOT) -> float:
    """Median wall time of running argv `runs` times (after one warm-up run)."""
    subprocess.run(argv, cwd=cwd, capture_output=True, check=True, env=ENV)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, cwd=cwd, capture_output=True, check=True, env=ENV)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def median_seconds_on_a_terminal(argv: list[str], runs: int) -> float:
    """Median wall time of argv with stdout and stderr on a pseudo-terminal."""
    import pty
    import threading

    def once() -> float:
        leader, follower = pty.openpty()
        drain = threading.Thread(target=_drain, args=(leader,))
        drain.start()
        start = time.perf_counter()
        subprocess.run(argv, cwd=ROOT, stdout=follower, stderr=follower, check=True, env=ENV)
        elapsed = time.perf_counter() - start
        os.close(follower)
        drain.join()
        os.close(leader)
        return elapsed

    once()
    return statistics.median(once() for _ in range(runs))


def _drain(fd: int) -> None:
    with contextlib.suppress(OSError):
        while os.read(fd, 65536):
            pass


def peak_rss_mib(argv: list[str]) -> float:
    """Peak resident memory of one run of argv, in MiB (from the child's rusage)."""
    probe = (
        "import resource, subprocess, sys; "
        "subprocess.run(sys.argv[1:], capture_output=True, check=True); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env=ENV,
    )
    return int(out.stdout.strip()) / 1024


def per_second(action: Callable[[], object], seconds: float = 1.0) -> float:
    """How many times `action` runs per second (median of 5 timed batches)."""
    action()
    batch = 1
    while True:
        start = time.perf_counter()
        for _ in range(batch):
            action()
        if time.perf_counter() - start > seconds / 10:
            break
        batch *= 2
    rates = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(batch):
            action()
        rates.append(batch / (time.perf_counter() - start))
    return statistics.median(rates)


def pass_rate(batches: list[list[Any]], action: Callable[[Any], object]) -> float:
    """Items per second of one pass of `action` over each batch (median over the batches)."""
    rates = []
    for batch in batches:
        start = time.perf_counter()
        for item in batch:
            action(item)
        rates.append(len(batch) / (time.perf_counter() - start))
    return statistics.median(rates)


def library_rates() -> dict[str, float]:
    """scriptast's build + emit of bench scripts, without and with verification.

    Each figure is one pass over jobs never built before in the process (a sweep in its steady
    state: what jobs share is remembered, what is new to each is built, emitted and parsed),
    after a warm-up over other jobs. `same` repeats one script; `alone` forgets everything
    before each script."""
    sys.path.insert(0, str(ROOT))
    from scriptast.builders.request import build_request
    from scriptast.builders.resolve import resolve
    from scriptast.builders.slurm_jobs import build_bench
    from scriptast.emitters.bash import EMITTED, emit
    from scriptast.emitters.verify import VERIFIED, verify_emitted

    os.chdir(ROOT)

    used = [0]

    def requests(count: int) -> list[Any]:
        start, used[0] = used[0], used[0] + count
        return [build_request(f, {}) for f in sweep_requests(count, start=start)]

    def jobs(count: int) -> list[Any]:
        return [resolve(r) for r in requests(count)]

    def forgetting(action: Callable[[], object]) -> Callable[[], object]:
        def run() -> object:
            EMITTED.clear()
            VERIFIED.clear()
            return action()

        return run

    for job in jobs(200):
        emit(build_bench(job))
    one = jobs(1)[0]
    script = build_bench(one)
    text = emit(script, verify=False)
    return {
        "build_emit": pass_rate(
            [jobs(1000) for _ in range(3)], lambda j: emit(build_bench(j), verify=False)
        ),
        "build_emit_verify": pass_rate(
            [jobs(300) for _ in range(3)], lambda j: emit(build_bench(j))
        ),
        "build_emit_same": per_second(lambda: emit(build_bench(one), verify=False)),
        "build_emit_verify_alone": per_second(forgetting(lambda: emit(build_bench(one)))),
        "verify_alone": per_second(forgetting(lambda: verify_emitted(text, script))),
        "resolve_build_emit_verify": pass_rate(
            [requests(300) for _ in range(3)], lambda r: emit(build_bench(resolve(r)))
        ),
    }


PEER_SCRIPT = Path(__file__).resolve().parent / "peers.py"


def ensure_peers(venv: Path) -> Path:
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    missing = [
        p
        for p in PEERS
        if subprocess.run([str(python), "-c", f"import {p}"], capture_output=True).returncode != 0
    ]
    if missing:
        subprocess.run([str(python), "-m", "pip", "install", "-q", *PEER_REQUIREMENTS], check=False)
    return python


def sweep_requests(count: int, start: int = 0) -> list[dict[str, Any]]:
    """`count` distinct bench requests: models x tp x pp x partitions (12 shapes a model)."""
    shapes = [(1, 1), (2, 1), (2, 2), (4, 1), (4, 2), (8, 1)]
    partitions = ["batch", "nogres"]
    base = json.loads(BENCH_REQUEST.read_text())
    found = []
    for index in range(start, start + count):
        tp, pp = shapes[(index // 2) % len(shapes)]
        model = f"org/Model-{index // 12}B"
        found.append(
            {
                **base,
                "partition": partitions[index % 2],
                "work_dir": f"out/sweep/job{index:05d}",
                "bench_cmd": f"trtllm-bench --model {model} throughput --tp {tp} --pp {pp}",
            }
        )
    return found


def write_sweep(folder: Path, count: int) -> Path:
    """`count` distinct requests, each into its own work_dir under `folder`."""
    lines = []
    for index, fields in enumerate(sweep_requests(count)):
        lines.append(json.dumps({**fields, "work_dir": str(folder / f"job{index:05d}")}))
    path = folder / "sweep.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--with-peers", action="store_true", help="measure submitit, simple_slurm, nemo_run"
    )
    parser.add_argument("--runs", type=int, default=15, help="repetitions per command (median)")
    parser.add_argument("--sweep", type=int, default=1000, help="requests in the sweep")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="scriptast-bench-") as scratch:
        ENV.update(measuring_environment(os.path.join(scratch, "pycache")))
        measure(args, Path(scratch))


def measure(args: argparse.Namespace, scratch: Path) -> None:
    scriptast = shutil.which("scriptast") or str(Path(sys.executable).parent / "scriptast")
    rows: list[tuple[str, str]] = []

    bare = median_seconds([sys.executable, "-c", "pass"], args.runs)
    emit_argv = [scriptast, "emit", "--request", str(BENCH_REQUEST)]
    emit_s = median_seconds([*emit_argv, "--work-dir", str(scratch / "job")], args.runs)
    stdout_s = median_seconds([*emit_argv, "--stdout"], args.runs)
    help_s = median_seconds([scriptast, "--help"], args.runs)
    help_tty_s = median_seconds_on_a_terminal([scriptast, "--help"], args.runs)
    version_s = median_seconds([scriptast, "--version"], args.runs)
    import_s = median_seconds([sys.executable, "-c", "import scriptast"], args.runs)
    rss = peak_rss_mib([scriptast, "emit", "--request", str(BENCH_REQUEST), "--stdout"])
    rows += [
        ("python -c pass", f"{bare * 1e3:.1f} ms"),
        ("scriptast emit (verified, files written)", f"{emit_s * 1e3:.1f} ms"),
        ("scriptast emit --stdout (verified)", f"{stdout_s * 1e3:.1f} ms"),
        ("scriptast --help (piped)", f"{help_s * 1e3:.1f} ms"),
        ("scriptast --help (on a terminal)", f"{help_tty_s * 1e3:.1f} ms"),
        ("scriptast --version", f"{version_s * 1e3:.1f} ms"),
        (
            "python -c 'import scriptast'",
            f"{import_s * 1e3:.1f} ms  ({import_s / bare:.2f} x bare)",
        ),
        ("scriptast emit peak RSS", f"{rss:.1f} MiB"),
    ]

    rates = library_rates()
    rows += [
        ("library build+emit, new jobs", f"{rates['build_emit']:.0f} scripts/s"),
        ("library build+emit, one script again", f"{rates['build_emit_same']:.0f} scripts/s"),
        ("library build+emit+verify, new jobs", f"{rates['build_emit_verify']:.0f} scripts/s"),
        (
            "library build+emit+verify, nothing remembered",
            f"{rates['build_emit_verify_alone']:.0f} scripts/s",
        ),
        ("verification of one script, nothing remembered", f"{1e3 / rates['verify_alone']:.2f} ms"),
        ("resolve+build+emit+verify, new jobs", f"{rates['resolve_build_emit_verify']:.0f} jobs/s"),
    ]

    folder = scratch / "sweep"
    folder.mkdir()
    sweep = write_sweep(folder, args.sweep)
    start = time.perf_counter()
    subprocess.run(
        [scriptast, "emit", "--requests", str(sweep)],
        cwd=ROOT,
        capture_output=True,
        check=True,
        env=ENV,
    )
    sweep_s = time.perf_counter() - start
    rows.append((f"sweep of {args.sweep} requests, files written", f"{sweep_s:.2f} s"))

    ratios: list[tuple[str, str]] = []
    if args.with_peers:
        python = ensure_peers(Path(os.environ.get("PEERS_VENV", "/tmp/scriptast-peers")))
        submitit_import = median_seconds([str(python), "-c", "import submitit"], args.runs)
        rows.append(("python -c 'import submitit' (peers venv)", f"{submitit_import * 1e3:.1f} ms"))
        peer = json.loads(
            subprocess.run(
                [str(python), str(PEER_SCRIPT)], capture_output=True, text=True, check=True
            ).stdout
        )
        for name in PEERS:
            rows.append(
                (
                    f"{name} build of the equivalent script",
                    f"{peer[name]:.0f} scripts/s"
                    if name in peer
                    else f"not measured: {peer.get(name + '_error')}",
                )
            )
        ratios.append(("emit / import submitit (target <= 1.0)", f"{emit_s / submitit_import:.2f}"))
        ratios.append(
            ("--help piped / import submitit (target <= 0.6)", f"{help_s / submitit_import:.2f}")
        )
        ratios.append(
            (
                "--help on a terminal / import submitit (target <= 0.6)",
                f"{help_tty_s / submitit_import:.2f}",
            )
        )
        ratios.append(
            ("--version / import submitit (target <= 0.6)", f"{version_s / submitit_import:.2f}")
        )
        if "submitit" in peer:
            ratios.append(
                (
                    "library vs submitit throughput (target >= 1.0)",
                    f"{rates['build_emit'] / peer['submitit']:.2f}",
                )
            )
        if "nemo_run" in peer:
            ratios.append(
                (
                    "library vs NeMo-Run throughput (target >= 50)",
                    f"{rates['build_emit'] / peer['nemo_run']:.1f}",
                )
            )
    ratios.append(("import scriptast / bare interpreter (target <= 2.0)", f"{import_s / bare:.2f}"))
    ratios.append(("verified scripts/s (target >= 500)", f"{rates['build_emit_verify']:.0f}"))
    ratios.append(("peak RSS MiB (target <= 60)", f"{rss:.1f}"))
    ratios.append(("sweep s (target <= 3.0)", f"{sweep_s:.2f}"))

    width = max(len(name) for name, _ in rows + ratios)
    print(f"{'measure'.ljust(width)}  value")
    for name, value in rows:
        print(f"{name.ljust(width)}  {value}")
    print()
    print(f"{'ratio'.ljust(width)}  value")
    for name, value in ratios:
        print(f"{name.ljust(width)}  {value}")


if __name__ == "__main__":
    main()
