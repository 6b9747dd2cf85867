"""What each piece of scriptast's speed machinery saves: the same command with the piece and
without it, in turn, each pair on inputs neither has seen, and the median of the per-pair
ratios. A piece pays for itself when it saves more than 5% of a warm emit or of a 1,000-job
sweep (`scriptast emit --requests`); the table says which ones do.

    python bench/machinery.py [--runs 9] [--sweep 1000] [--sweep-runs 3]

Without a piece means: the typer command line instead of `cli/fast_parse.py` (an emit) or
`cli/run_fast.py` (`run --dry-run` of a work dir emit wrote: run's start-up); bashlex building
its LALR tables instead of the shipped ones
(SCRIPTAST_BASHLEX_CACHE=0); every emitted text parsed whole instead of once per shape
(`readers.roundtrip.verify.FAST_PATH = False`); no memory of emitted nodes
(`emitters.bash.EMITTED` of size 0). `scriptast/__init__.py` loads a public name's module when the
name is first used; every command imports the package first, so the eager alternative (every
public module loaded with the package) is timed on a warm emit.
The stored help pages (`cli/help_pages.json`) were measured here too: 81% of a piped `--help`,
nothing of an emit or a sweep; they were removed."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import distinct_requests, measuring_environment

ROOT = Path(__file__).resolve().parent.parent
PAYS = 0.05
"""A piece keeps its place when it saves more than this share of the command's time."""


def _through(setup: str, entry: str = "scriptast.cli.entry") -> list[str]:
    """argv of a Python that runs `setup`, then scriptast's `entry` main as `scriptast` would."""
    steps = ["import sys", "sys.argv[0] = 'scriptast'", *([setup] if setup else []),
             f"from {entry} import main", "main()"]  # fmt: skip
    code = "; ".join(steps)
    return [sys.executable, "-c", code]


def _timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, capture_output=True, check=True, env=env)
    return time.perf_counter() - start


def _paired(with_it: list[list[str]], without: list[list[str]], env: dict[str, str],
            bare_env: dict[str, str] | None = None) -> tuple[float, float, float]:  # fmt: skip
    """Each pair (with, without) in turn on its own input: medians of each, and of the share
    of the time without it that the piece saves."""
    _timed(with_it[0], env)
    _timed(without[0], bare_env or env)
    a_times, b_times, saved = [], [], []
    for a_argv, b_argv in zip(with_it[1:], without[1:], strict=True):
        a, b = _timed(a_argv, env), _timed(b_argv, bare_env or env)
        a_times.append(a)
        b_times.append(b)
        saved.append(1 - a / b)
    return statistics.median(a_times), statistics.median(b_times), statistics.median(saved)


def _written(request: Path, env: dict[str, str]) -> str:
    """The work dir `scriptast emit --request REQUEST` wrote."""
    import json

    subprocess.run([str(Path(sys.executable).parent / "scriptast"), "emit", "--request",
                    str(request)], cwd=ROOT, capture_output=True, check=True, env=env)  # fmt: skip
    work_dir: str = json.loads(request.read_text())["work_dir"]
    return work_dir


def _sweep_files(folder: Path, count: int, runs: int) -> list[Path]:
    """One sweep file a run (2 a pair, and a warm-up pair), each of distinct requests."""
    import json

    from run import sweep_requests

    files = []
    folder.mkdir(parents=True)
    for index in range(2 * (runs + 1)):
        path = folder / f"sweep{index}.jsonl"
        rows = sweep_requests(count, start=index * count)
        for offset, row in enumerate(rows):
            row["work_dir"] = str(folder / f"s{index}" / f"job{offset:05d}")
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
        files.append(path)
    return files


def measure(args: argparse.Namespace, scratch: Path) -> list[tuple[str, str, str, str, str]]:
    env = measuring_environment(str(scratch / "pycache"))
    requests = distinct_requests(scratch / "requests", 2 * (args.runs + 1), 700_000)
    emits = [["emit", "--request", str(path), "--stdout"] for path in requests]
    rows = []
    scriptast = [str(Path(sys.executable).parent / "scriptast")]

    def row(name: str, where: str, result: tuple[float, float, float]) -> None:
        with_it, without, saved = result
        verdict = "pays" if saved > PAYS else "does not pay"
        rows.append((name, where, f"{with_it * 1e3:.0f} ms", f"{without * 1e3:.0f} ms",
                     f"{saved * 100:+.1f}% ({verdict})"))  # fmt: skip

    row("fast emit parser (cli/fast_parse.py)", "warm emit", _paired(
        [scriptast + argv for argv in emits[0::2]],
        [_through("", "scriptast.cli.app") + argv for argv in emits[1::2]], env))  # fmt: skip
    works = [_written(path, env) for path in requests]
    dry_runs = [["run", "--dry-run", work] for work in works]
    row("fast run parser (cli/run_fast.py)", "run --dry-run", _paired(
        [scriptast + argv for argv in dry_runs[0::2]],
        [_through("", "scriptast.cli.app") + argv for argv in dry_runs[1::2]], env))  # fmt: skip
    row("bashlex tables shipped (bashlex_loader)", "warm emit", _paired(
        [scriptast + argv for argv in emits[0::2]], [scriptast + argv for argv in emits[1::2]],
        env, {**env, "SCRIPTAST_BASHLEX_CACHE": "0"}))  # fmt: skip
    sweeps = _sweep_files(scratch / "sweeps", args.sweep, args.sweep_runs)
    runs_of = [["emit", "--requests", str(path)] for path in sweeps]
    row("shape cache (verify.FAST_PATH)", f"sweep of {args.sweep}", _paired(
        [scriptast + argv for argv in runs_of[0::2]],
        [_through("import scriptast.readers.roundtrip.verify as v; v.FAST_PATH = False") + argv
         for argv in runs_of[1::2]], env))  # fmt: skip
    sweeps = _sweep_files(scratch / "sweeps2", args.sweep, args.sweep_runs)
    runs_of = [["emit", "--requests", str(path)] for path in sweeps]
    row("emit memo (emitters/bash.EMITTED)", f"sweep of {args.sweep}", _paired(
        [scriptast + argv for argv in runs_of[0::2]],
        [_through("import scriptast.emitters.bash as b; from scriptast.common.memo import Memo; "
                  "b.EMITTED = Memo(0)") + argv for argv in runs_of[1::2]], env))  # fmt: skip
    eager = "import scriptast; [getattr(scriptast, n) for n in scriptast.__all__]"
    row("public names loaded when first used (scriptast/__init__.py)", "warm emit", _paired(
        [_through("") + argv for argv in emits[0::2]],
        [_through(eager) + argv for argv in emits[1::2]], env))  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="pairs per command (median)")
    parser.add_argument("--sweep", type=int, default=1000, help="requests in a sweep")
    parser.add_argument("--sweep-runs", type=int, default=3, help="sweep pairs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="scriptast-machinery-") as folder:
        rows = measure(args, Path(folder))
    head = ("piece", "measured on", "with it", "without it", "saved (median of pairs)")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(5)]
    for r in [head, *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(r, widths, strict=True)))
    print(f"(a piece pays when it saves more than {PAYS:.0%} of a warm emit or of a sweep; "
          f"{os.cpu_count()} cores)")  # fmt: skip


if __name__ == "__main__":
    main()
