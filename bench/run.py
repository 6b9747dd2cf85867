"""scriptast's speed and memory, side by side with its peers, in one run: `python bench/run.py`.

Every command runs on inputs it has not seen (each emit its own request: model, tp, pp,
partition, job name and command differ), and every comparison is paired: A and B run in turn
and the median of the per-pair ratios is printed. Figures of a repeated input are kept,
labelled cache-friendly. The import baseline is a virtual environment with nothing installed;
first-emit figures start each run with an empty user cache. `--with-peers` installs submitit,
simple_slurm and nemo_run into a separate virtual environment (PEERS_VENV, default
/tmp/scriptast-peers) and measures them there.
"""

from __future__ import annotations

import argparse
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
    from scriptast.builders.categories.bench import build_slurm
    from scriptast.builders.request import build_request
    from scriptast.builders.resolve import resolve

    def build_bench(job: Any) -> Any:
        return build_slurm(job).main

    from scriptast.emitters.bash import EMITTED, BashEmitter
    from scriptast.readers.verify import VERIFIED, verify_emitted
    from scriptast.render import emit

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
        "verify_alone": per_second(forgetting(lambda: verify_emitted(text, script, BashEmitter()))),
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--with-peers", action="store_true", help="measure submitit, simple_slurm, nemo_run"
    )
    parser.add_argument("--runs", type=int, default=15, help="repetitions per command (median)")
    parser.add_argument("--sweep", type=int, default=1000, help="requests in the sweep")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="scriptast-bench-") as scratch:
        measured = measuring_environment(os.path.join(scratch, "pycache"))
        ENV.clear()
        ENV.update(measured)
        measure(args, Path(scratch))


def distinct_requests(folder: Path, count: int, start: int) -> list[Path]:
    """`count` request files that differ in model, tp, pp, partition, job name and command,
    each with its own work_dir under `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for offset, fields in enumerate(sweep_requests(count, start=start)):
        index = start + offset
        path = folder / f"request{index:05d}.json"
        fields = {**fields, "work_dir": str(folder / f"job{index:05d}"), "model_name": f"m{index}"}
        path.write_text(json.dumps(fields))
        paths.append(path)
    return paths


def timed(argv: list[str], env: dict[str, str] | None = None, cwd: Path = ROOT) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, capture_output=True, check=True, env=env or ENV)
    return time.perf_counter() - start


def paired(
    first: Callable[[int], tuple[list[str], dict[str, str] | None]],
    second: list[str],
    runs: int,
) -> tuple[float, float, float]:
    """A and B in turn, A's run i given `first(i)` (its own input): medians of A, of B, and of
    the per-pair ratios A/B."""
    argv, env = first(-1)
    timed(argv, env)
    timed(second)
    a_times, b_times, ratios = [], [], []
    for index in range(runs):
        argv, env = first(index)
        a = timed(argv, env)
        b = timed(second)
        a_times.append(a)
        b_times.append(b)
        ratios.append(a / b)
    return statistics.median(a_times), statistics.median(b_times), statistics.median(ratios)


def clean_python(venv: Path) -> Path:
    """An interpreter of a virtual environment with nothing installed (the import baseline)."""
    python = venv / "bin" / "python"
    if not python.exists():
        base = getattr(sys, "_base_executable", sys.executable)
        subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True)
    return python


def cpu_per_distinct_script(*, by_shape: bool = True, start: int = 50_000) -> float:
    """Median CPU seconds to build, emit and verify one bench script of a job the process has
    not built before (after a warm-up over other jobs), resolve excluded; `by_shape=False`
    parses every statement whole, as verification did before shapes."""
    sys.path.insert(0, str(ROOT))
    from scriptast.builders.categories.bench import build_slurm
    from scriptast.builders.request import build_request
    from scriptast.builders.resolve import resolve

    def build_bench(job: Any) -> Any:
        return build_slurm(job).main

    from scriptast.readers import verify
    from scriptast.render import emit

    os.chdir(ROOT)
    verify.FAST_PATH = by_shape
    jobs = [resolve(build_request(f, {})) for f in sweep_requests(700, start=start)]
    for job in jobs[:200]:
        emit(build_bench(job))
    times = []
    for job in jobs[200:]:
        began = time.process_time()
        emit(build_bench(job))
        times.append(time.process_time() - began)
    verify.FAST_PATH = True
    return statistics.median(times)


def paired_throughput(python: Path, runs: int = 3) -> tuple[dict[str, Any], dict[str, float]]:
    """scriptast's build+emit (unverified and verified, each a pass over 300 jobs not built
    before) and the peers' builds, in turn `runs` times: the last peer figures, and the median
    per-pair ratios against submitit and NeMo-Run."""
    sys.path.insert(0, str(ROOT))
    from scriptast.builders.categories.bench import build_slurm
    from scriptast.builders.request import build_request
    from scriptast.builders.resolve import resolve

    def build_bench(job: Any) -> Any:
        return build_slurm(job).main

    from scriptast.render import emit

    os.chdir(ROOT)
    offset = [80_000]

    def fresh_pass(verify: bool) -> float:
        fields = sweep_requests(300, start=offset[0])
        offset[0] += 300
        jobs = [resolve(build_request(f, {})) for f in fields]
        return pass_rate([jobs], lambda job: emit(build_bench(job), verify=verify))

    ratios: dict[str, list[float]] = {}
    peer: dict[str, Any] = {}
    for _ in range(runs):
        unverified, verified = fresh_pass(False), fresh_pass(True)
        peer = json.loads(
            subprocess.run(
                [str(python), str(PEER_SCRIPT)], capture_output=True, text=True, check=True
            ).stdout
        )
        for name, ours in (("unverified", unverified), ("verified", verified)):
            for rival in ("submitit", "nemo_run"):
                if rival in peer:
                    ratios.setdefault(f"{rival} {name}", []).append(ours / peer[rival])
    return peer, {name: statistics.median(values) for name, values in ratios.items()}


def measure(args: argparse.Namespace, scratch: Path) -> None:
    scriptast = shutil.which("scriptast") or str(Path(sys.executable).parent / "scriptast")
    rows: list[tuple[str, str]] = []
    ratios: list[tuple[str, str]] = []
    requests = distinct_requests(scratch / "requests", args.runs + 1, start=10_000)

    def emit_distinct(*extra: str) -> Callable[[int], tuple[list[str], dict[str, str] | None]]:
        return lambda i: ([scriptast, "emit", "--request", str(requests[i]), *extra], None)

    def first_emit(i: int) -> tuple[list[str], dict[str, str] | None]:
        cache = tempfile.mkdtemp(prefix="cache-", dir=scratch)
        return [scriptast, "emit", "--request", str(requests[i]), "--stdout"], {
            **ENV,
            "XDG_CACHE_HOME": cache,
        }

    bare = clean_python(scratch / "clean-venv")
    importing, clean, import_ratio = paired(
        lambda i: ([sys.executable, "-c", "import scriptast"], None),
        [str(bare), "-c", "pass"],
        args.runs,
    )
    same_s = median_seconds([scriptast, "emit", "--request", str(BENCH_REQUEST), "--stdout"], 5)
    rss = peak_rss_mib([scriptast, "emit", "--request", str(requests[0]), "--stdout"])
    rows += [
        ("python -c pass (clean venv)", f"{clean * 1e3:.1f} ms"),
        ("python -c 'import scriptast'", f"{importing * 1e3:.1f} ms"),
        ("scriptast emit, one request repeated (cache-friendly)", f"{same_s * 1e3:.1f} ms"),
        ("scriptast emit peak RSS (distinct request)", f"{rss:.1f} MiB"),
    ]
    ratios.append(("import scriptast / clean venv, paired (target <= 2.0)", f"{import_ratio:.2f}"))

    cpu = cpu_per_distinct_script()
    whole = cpu_per_distinct_script(by_shape=False, start=60_000)
    rates = library_rates()
    rows += [
        ("CPU to build+emit+verify one distinct script", f"{cpu * 1e3:.2f} ms"),
        ("the same, every statement parsed whole", f"{whole * 1e3:.2f} ms"),
        ("library build+emit, new jobs", f"{rates['build_emit']:.0f} scripts/s"),
        ("library build+emit+verify, new jobs", f"{rates['build_emit_verify']:.0f} scripts/s"),
        (
            "library build+emit, one script again (cache-friendly)",
            f"{rates['build_emit_same']:.0f} scripts/s",
        ),
        (
            "library build+emit+verify, nothing remembered",
            f"{rates['build_emit_verify_alone']:.0f} scripts/s",
        ),
        ("resolve+build+emit+verify, new jobs", f"{rates['resolve_build_emit_verify']:.0f} jobs/s"),
    ]
    ratios.append(("CPU ms per distinct verified script (target <= 1)", f"{cpu * 1e3:.2f}"))

    sweeps = []
    for run in range(3):
        folder = scratch / f"sweep{run}"
        folder.mkdir()
        lines = [
            json.dumps({**fields, "work_dir": str(folder / f"job{i:05d}")})
            for i, fields in enumerate(sweep_requests(args.sweep, start=20_000 + run * args.sweep))
        ]
        path = folder / "sweep.jsonl"
        path.write_text("\n".join(lines) + "\n")
        sweeps.append(path)

    if not args.with_peers:
        for path in sweeps:
            rows.append(
                (
                    f"sweep of {args.sweep} distinct requests",
                    f"{timed([scriptast, 'emit', '--requests', str(path)]):.2f} s",
                )
            )
        _print(rows, ratios)
        return

    python = ensure_peers(Path(os.environ.get("PEERS_VENV", "/tmp/scriptast-peers")))
    submitit = [str(python), "-c", "import submitit"]
    stdout_s, submitit_s, stdout_ratio = paired(emit_distinct("--stdout"), submitit, args.runs)
    written_s, _, written_ratio = paired(emit_distinct(), submitit, args.runs)
    first_s, _, first_ratio = paired(first_emit, submitit, args.runs)
    help_s, _, help_ratio = paired(lambda i: ([scriptast, "--help"], None), submitit, args.runs)
    sweep_s, _, sweep_ratio = paired(
        lambda i: ([scriptast, "emit", "--requests", str(sweeps[i % 3])], None), submitit, 3
    )
    submitit_rss = peak_rss_mib(submitit)
    rows += [
        ("python -c 'import submitit' (peers venv)", f"{submitit_s * 1e3:.1f} ms"),
        ("scriptast emit --stdout, distinct requests", f"{stdout_s * 1e3:.1f} ms"),
        ("scriptast emit, distinct requests, files written", f"{written_s * 1e3:.1f} ms"),
        ("first emit, empty user cache", f"{first_s * 1e3:.1f} ms"),
        ("scriptast --help (piped)", f"{help_s * 1e3:.1f} ms"),
        (f"sweep of {args.sweep} distinct verified bench jobs (3 runs)", f"{sweep_s:.2f} s"),
        ("import submitit peak RSS", f"{submitit_rss:.1f} MiB"),
    ]
    peer, throughput = paired_throughput(python)
    for name in PEERS:
        shown = (
            f"{peer[name]:.0f} scripts/s"
            if name in peer
            else f"not measured: {peer.get(name + '_error')}"
        )
        rows.append((f"{name} build of the equivalent script", shown))
    ratios += [
        ("emit --stdout / import submitit, paired (target <= 1.0)", f"{stdout_ratio:.2f}"),
        ("emit, files written / import submitit, paired", f"{written_ratio:.2f}"),
        ("first emit / import submitit, paired (target <= 1.2)", f"{first_ratio:.2f}"),
        ("--help piped / import submitit, paired", f"{help_ratio:.2f}"),
        ("sweep / import submitit, paired (target <= 10)", f"{sweep_ratio:.1f}"),
        ("peak RSS / import submitit's", f"{rss / submitit_rss:.2f}"),
    ]
    for name, ratio in sorted(throughput.items()):
        rival, kind = name.split()
        ratios.append((f"library build+emit ({kind}) / {rival}'s build, paired", f"{ratio:.2f}"))
    _print(rows, ratios)


def _print(rows: list[tuple[str, str]], ratios: list[tuple[str, str]]) -> None:
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
