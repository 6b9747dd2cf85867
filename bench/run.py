"""scriptast's speed and memory, side by side with its peers, in one run: `python bench/run.py`.

Every command runs on inputs it has not seen (each emit its own request: model, tp, pp,
partition, job name and command differ; each sweep its own 1,000 requests), and every comparison
is paired: A and B run in turn and the median of the per-pair ratios is printed. Figures of a
repeated input are kept, labelled cache-friendly. The import baseline is a virtual environment
with nothing installed; first-emit figures start each run with an empty user cache. Command-line
figures are taken twice: for a wheel of this tree installed into a scratch environment (as
`pip install .` leaves it) and for the checkout's own editable install, whose finder runs at
every start. `--with-peers` installs submitit, simple_slurm and nemo_run into a separate virtual
environment (PEERS_VENV, default /tmp/scriptast-peers) and measures them there.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
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


def bench_script(job: Any) -> Any:
    """A resolved bench job's batch script: its steps lowered by the Slurm backend."""
    from scriptast.builders.categories.bench.steps import steps
    from scriptast.schedulers.slurm.batch_script import lower

    return lower(job.plan(), steps(job)).main


def library_rates() -> dict[str, float]:
    """scriptast's build + emit of bench scripts, without and with verification.

    Each figure is one pass over jobs never built before in the process (a sweep in its steady
    state: what jobs share is remembered, what is new to each is built, emitted and parsed),
    after a warm-up over other jobs. `same` repeats one script; `alone` forgets everything
    before each script."""
    sys.path.insert(0, str(ROOT))
    from scriptast.builders.read_request import build_request
    from scriptast.builders.resolve import resolve

    build_bench = bench_script

    from scriptast.emitters.bash import EMITTED, BashEmitter
    from scriptast.pipeline.verified_emit import emit
    from scriptast.readers.roundtrip.verify import VERIFIED, verify_emitted

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
    parser.add_argument("--sweep-runs", type=int, default=5, help="timed sweeps (paired)")
    parser.add_argument(
        "--only-run", action="store_true", help="only the `run` section (needs a Slurm cluster)"
    )
    args = parser.parse_args()
    if args.only_run:
        _print(executor_section(), [])
        return
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


CPU_RATIOS: list[float] = []
"""The per-pair ratios of CPU time (user + system of the command and every process it waited
for) of the last `paired` call: what the command itself cost, whatever the machine's moment."""


def timed(argv: list[str], env: dict[str, str] | None = None, cwd: Path = ROOT) -> float:
    return timed_with_cpu(argv, env, cwd)[0]


def timed_with_cpu(argv: list[str], env: dict[str, str] | None = None,
                   cwd: Path = ROOT) -> tuple[float, float]:  # fmt: skip
    """Wall seconds and CPU seconds (user + system, its processes' too) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, capture_output=True, check=True, env=env or ENV)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


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
    CPU_RATIOS.clear()
    for index in range(runs):
        argv, env = first(index)
        a, a_cpu = timed_with_cpu(argv, env)
        b, b_cpu = timed_with_cpu(second)
        a_times.append(a)
        b_times.append(b)
        ratios.append(a / b)
        CPU_RATIOS.append(a_cpu / b_cpu)
    return statistics.median(a_times), statistics.median(b_times), statistics.median(ratios)


def clean_python(venv: Path) -> Path:
    """An interpreter of a virtual environment with nothing installed (the import baseline)."""
    python = venv / "bin" / "python"
    if not python.exists():
        base = getattr(sys, "_base_executable", sys.executable)
        subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True)
    return python


def installed_copy(scratch: Path) -> Path | str:
    """The bin folder of a virtual environment where scriptast is installed from a wheel of
    this tree, as `pip install .` leaves it (no editable-install finder runs at start-up); its
    dependencies come from this interpreter's site-packages through a path file. Or why it
    could not be made (building the wheel fetches setuptools from the package index)."""
    source = scratch / "source"
    shutil.copytree(ROOT / "scriptast", source / "scriptast",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    wheels = scratch / "wheels"
    venv = scratch / "installed-venv"
    python = clean_python(venv)
    steps = [
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(source)],
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
         "--no-index", "--find-links", str(wheels), "scriptast"],
    ]  # fmt: skip
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, env=ENV)
        if done.returncode != 0:
            return f"not measured: {' '.join(step[2:4])} failed: {done.stderr.strip()[-200:]}"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    ours = sysconfig.get_path("purelib")
    (Path(site) / "scriptast-bench-dependencies.pth").write_text(ours + "\n")
    return venv / "bin"


def cpu_per_distinct_script(*, by_shape: bool = True, start: int = 50_000) -> float:
    """Median CPU seconds to build, emit and verify one bench script of a job the process has
    not built before (after a warm-up over other jobs), resolve excluded; `by_shape=False`
    parses every statement whole, as verification did before shapes."""
    sys.path.insert(0, str(ROOT))
    from scriptast.builders.read_request import build_request
    from scriptast.builders.resolve import resolve

    build_bench = bench_script

    from scriptast.pipeline.verified_emit import emit
    from scriptast.readers.roundtrip import verify

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
    from scriptast.builders.read_request import build_request
    from scriptast.builders.resolve import resolve

    build_bench = bench_script

    from scriptast.pipeline.verified_emit import emit

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


Argv = Callable[[int], tuple[list[str], dict[str, str] | None]]


class Inputs:
    """Request files and sweep files that no earlier command of the run was given."""

    def __init__(self, scratch: Path) -> None:
        self.scratch = scratch
        self.next = 10_000

    def requests(self, count: int) -> list[Path]:
        self.next += count
        return distinct_requests(self.scratch / "requests", count, start=self.next - count)

    def sweeps(self, count: int, size: int) -> list[Path]:
        paths = []
        for _ in range(count):
            folder = self.scratch / f"sweep{self.next}"
            folder.mkdir()
            lines = [
                json.dumps({**fields, "work_dir": str(folder / f"job{i:05d}")})
                for i, fields in enumerate(sweep_requests(size, start=self.next))
            ]
            self.next += size
            path = folder / "sweep.jsonl"
            path.write_text("\n".join(lines) + "\n")
            paths.append(path)
        return paths


def measure(args: argparse.Namespace, scratch: Path) -> None:
    checkout = shutil.which("scriptast") or str(Path(sys.executable).parent / "scriptast")
    installed = installed_copy(scratch)
    copies = {"checkout": (Path(sys.executable), checkout)}
    if isinstance(installed, Path):
        copies = {"installed": (installed / "python", str(installed / "scriptast")), **copies}
    inputs = Inputs(scratch)
    rows: list[tuple[str, str]] = []
    ratios: list[tuple[str, str]] = []
    if not isinstance(installed, Path):
        rows.append(("installed copy (pip install .)", installed))

    bare = clean_python(scratch / "clean-venv")
    baseline: list[float] = []
    for copy, (python, _) in copies.items():
        importing, clean, import_ratio = paired(
            _importing(python), [str(bare), "-c", "pass"], args.runs
        )
        baseline.append(clean)
        rows.append((f"python -c 'import scriptast', {_COPY[copy]}", f"{importing * 1e3:.1f} ms"))
        target = " (target <= 2.0)" if copy == "installed" else ""
        ratios.append((f"import scriptast, {copy} / clean venv, paired{target}",
                       f"{import_ratio:.2f}"))  # fmt: skip
    rows.insert(0, ("python -c pass (clean venv)", f"{statistics.median(baseline) * 1e3:.1f} ms"))
    scriptast = next(iter(copies.values()))[1]
    same_s = median_seconds([scriptast, "emit", "--request", str(BENCH_REQUEST), "--stdout"], 5)
    rss = peak_rss_mib([scriptast, "emit", "--request", str(inputs.requests(1)[0]), "--stdout"])
    rows += [
        ("scriptast emit, one request repeated (cache-friendly)", f"{same_s * 1e3:.1f} ms"),
        ("scriptast emit peak RSS (distinct request)", f"{rss:.1f} MiB"),
    ]
    _library(rows, ratios)

    if not args.with_peers:
        for copy, (_, command) in copies.items():
            for path in inputs.sweeps(3, args.sweep):
                seconds = timed([command, "emit", "--requests", str(path)])
                rows.append(
                    (f"sweep of {args.sweep} distinct requests, {copy}", f"{seconds:.2f} s")
                )
        _print(rows + executor_section(), ratios)
        return

    python = ensure_peers(Path(os.environ.get("PEERS_VENV", "/tmp/scriptast-peers")))
    submitit = [str(python), "-c", "import submitit"]
    submitit_times: list[float] = []
    for copy, (_, command) in copies.items():
        _commands(copy, command, submitit, inputs, args, rows, ratios, submitit_times)
    submitit_rss = peak_rss_mib(submitit)
    rows += [
        ("python -c 'import submitit' (peers venv)",
         f"{statistics.median(submitit_times) * 1e3:.1f} ms"),
        ("import submitit peak RSS", f"{submitit_rss:.1f} MiB"),
    ]  # fmt: skip
    ratios.append(("peak RSS / import submitit's", f"{rss / submitit_rss:.2f}"))
    peer, throughput = paired_throughput(python)
    for name in PEERS:
        shown = (
            f"{peer[name]:.0f} scripts/s"
            if name in peer
            else f"not measured: {peer.get(name + '_error')}"
        )
        rows.append((f"{name} build of the equivalent script", shown))
    for name, ratio in sorted(throughput.items()):
        rival, kind = name.split()
        ratios.append((f"library build+emit ({kind}) / {rival}'s build, paired", f"{ratio:.2f}"))
    _print(rows + executor_section(), ratios)


def _importing(python: Path) -> Argv:
    return lambda i: ([str(python), "-c", "import scriptast"], None)


_COPY = {"installed": "installed (pip install .)", "checkout": "checkout (pip install -e .)"}


def _library(rows: list[tuple[str, str]], ratios: list[tuple[str, str]]) -> None:
    """The in-process figures: CPU per distinct script, and passes over new jobs."""
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
        ("library verify, nothing remembered", f"{rates['verify_alone']:.0f} scripts/s"),
        ("resolve+build+emit+verify, new jobs", f"{rates['resolve_build_emit_verify']:.0f} jobs/s"),
    ]
    ratios.append(("CPU ms per distinct verified script (target <= 1)", f"{cpu * 1e3:.2f}"))


def _commands(
    copy: str,
    scriptast: str,
    submitit: list[str],
    inputs: Inputs,
    args: argparse.Namespace,
    rows: list[tuple[str, str]],
    ratios: list[tuple[str, str]],
    submitit_times: list[float],
) -> None:
    """One copy's command-line figures, each paired with `import submitit`: emit on distinct
    requests (to stdout, and writing files), the first emit with an empty user cache, piped
    help, and sweeps of distinct jobs (a new sweep file each run, the warm-up's too)."""

    def emit_distinct(*extra: str) -> Argv:
        requests = inputs.requests(args.runs + 1)
        return lambda i: ([scriptast, "emit", "--request", str(requests[i]), *extra], None)

    def first_emit() -> Argv:
        requests = inputs.requests(args.runs + 1)

        def argv(i: int) -> tuple[list[str], dict[str, str] | None]:
            cache = tempfile.mkdtemp(prefix="cache-", dir=inputs.scratch)
            command = [scriptast, "emit", "--request", str(requests[i]), "--stdout"]
            return command, {**ENV, "XDG_CACHE_HOME": cache}

        return argv

    sweeps = inputs.sweeps(args.sweep_runs + 1, args.sweep)
    target = {"installed": True, "checkout": False}[copy]
    series = [
        ("scriptast emit --stdout, distinct requests", emit_distinct("--stdout"), args.runs,
         "emit --stdout / import submitit, paired", "1.0"),
        ("scriptast emit, distinct requests, files written", emit_distinct(), args.runs,
         "emit, files written / import submitit, paired", None),
        ("first emit, empty user cache", first_emit(), args.runs,
         "first emit / import submitit, paired", "1.2"),
        ("scriptast --help (piped)", lambda i: ([scriptast, "--help"], None), args.runs,
         "--help piped / import submitit, paired", None),
        (f"sweep of {args.sweep} distinct verified bench jobs ({args.sweep_runs} runs)",
         lambda i: ([scriptast, "emit", "--requests", str(sweeps[i + 1])], None),
         args.sweep_runs, "sweep / import submitit, paired", "10"),
    ]  # fmt: skip
    for row, argv, runs, ratio, bound in series:
        seconds, submitit_s, paired_ratio = paired(argv, submitit, runs)
        submitit_times.append(submitit_s)
        shown = f"{seconds:.2f} s" if seconds > 1 else f"{seconds * 1e3:.1f} ms"
        rows.append((f"{row}, {copy}", shown))
        label = f"{ratio}, {copy}" + (f" (target <= {bound})" if bound and target else "")
        digits = 1 if "sweep" in ratio else 2
        ratios.append((label, f"{paired_ratio:.{digits}f}"))
        if "sweep" in ratio:  # what the sweep cost in CPU, which the machine's moment moves less
            ratios.append((f"sweep CPU (user + system) / import submitit CPU, paired, {copy}",
                           f"{statistics.median(CPU_RATIOS):.1f}"))  # fmt: skip


def executor_section() -> list[tuple[str, str]]:
    """The `run` section: scriptast run on the Slurm cluster SCRIPTAST_SLURM_CONF names."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from executor_bench import section

    return section()


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
