"""The results store at scale, on SQLite and on a throw-away PostgreSQL server: a store of
100,000 distinct runs (20 models, 3 GPU types, 4 GPU counts, 90 days, 3 figures each), and on
it `results list` (newest 50; one model; the last 7 days) and `results compare` (two windows;
each key's newest run against its history), each timed through the library and as the command
a user types; appending one distinct run; two processes appending 1,000 distinct runs each at
once, and what they lost.

    python bench/store_bench.py [--runs 100000] [--no-postgres]

Targets (issue "Results that last"): list and compare under 1 s, an append under 20 ms, none
lost. PostgreSQL is Debian's (initdb, pg_ctl) started in a temporary folder, as the tests do."""

from __future__ import annotations

import argparse
import contextlib
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scriptast.results.store.database import Store
from scriptast.results.store.location import locate
from scriptast.results.store.rows import StoredFigure, StoredRun
from scriptast.results.store.schema import KEY_COLUMNS
from tests.peak_memory import run_measured
from tests.postgres_server import available, throwaway_server

ROOT = Path(__file__).resolve().parent.parent
SCRIPTAST = str(Path(sys.executable).parent / "scriptast")
MODELS = [f"org/model-{n:02d}" for n in range(20)]
GPUS = ("H100", "B200", "GB200")
COUNTS = (1, 2, 4, 8)
NOW = time.time()


def a_run(rng: random.Random, number: int, tag: str = "") -> StoredRun:
    """A distinct run: its own work dir, key, time and figures."""
    finished = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(NOW - rng.uniform(0, 90 * 86400)))
    model, gpu, count = rng.choice(MODELS), rng.choice(GPUS), rng.choice(COUNTS)
    tps = rng.uniform(1000, 9000)
    verdict = rng.choices(("PASSED", "REGRESSED", "FAILED"), (90, 5, 5))[0]
    figures = (
        StoredFigure(name="output_throughput", value=tps, unit="tokens/s", higher_is_better=True),
        StoredFigure(name="avg_request_latency", value=rng.uniform(1e3, 9e3), unit="ms",
                     higher_is_better=False),
        StoredFigure(name="request_throughput", value=tps / 128, unit="req/s",
                     higher_is_better=True),
    )  # fmt: skip
    return StoredRun(
        run_uid=f"{tag}{number}-{rng.getrandbits(64):x}", workflow="bench", model=model,
        partition="batch", gpu_type=gpu, gpu_count=count, nodes=1, image="img:1",
        trtllm_commit=f"{rng.getrandbits(160):040x}", spec_digest=f"{rng.getrandbits(256):064x}",
        user_name="alice", cluster="lo", work_dir=f"/work/{tag}{number}", job_id=str(number),
        verdict=verdict, submitted_at=finished, finished_at=finished,
        headline_name="output_throughput", headline_value=tps, headline_unit="tokens/s",
        stored_at=finished, record='{"version": 1}', figures=figures,
    )  # fmt: skip


def fill(url: str, runs: int) -> None:
    """`runs` distinct runs in one transaction (filling, not the append being measured)."""
    rng = random.Random(f"fill-{runs}")
    with Store.open(locate(url), create=True) as store, store.transaction():
        for start in range(0, runs, 5000):
            made = [a_run(rng, n) for n in range(start, min(runs, start + 5000))]
            store.executemany(
                f"INSERT INTO scriptast_runs (run_uid, {', '.join(KEY_COLUMNS)}, record) "
                f"VALUES ({', '.join('?' * (len(KEY_COLUMNS) + 2))})",
                [(r.run_uid, *(getattr(r, c) for c in KEY_COLUMNS), r.record) for r in made],
            )
            ids = {str(uid): int(i) for i, uid in store.rows(
                "SELECT id, run_uid FROM scriptast_runs WHERE id > ?", [start])}  # fmt: skip
            store.executemany(
                "INSERT INTO scriptast_figures (run_id, name, value, unit, higher_is_better) "
                "VALUES (?, ?, ?, ?, ?)",
                [(ids[r.run_uid], f.name, f.value, f.unit, int(bool(f.higher_is_better)))
                 for r in made for f in r.figures],
            )  # fmt: skip
        store.execute("ANALYZE")


def timed(argv: list[str], url: str, repeats: int = 3) -> tuple[float, str]:
    """The median wall time of the command as a user types it, and its first line."""
    times, out = [], ""
    for _ in range(repeats):
        start = time.perf_counter()
        done = subprocess.run([SCRIPTAST, "results", *argv, "--results", url],
                              capture_output=True, text=True, check=False)  # fmt: skip
        times.append(time.perf_counter() - start)
        if done.returncode not in (0, 17):
            raise SystemExit(f"{argv}: {done.stderr}")
        out = done.stdout.splitlines()[-1] if done.stdout else ""
    return statistics.median(times), out


def library(url: str) -> list[tuple[str, float]]:
    from scriptast.results.store.compare import compare_history, compare_sides
    from scriptast.results.store.queries import RunFilter, list_runs
    from scriptast.results.store.windows import parse_window

    cases: dict[str, Callable[[Store], object]] = {
        "list, newest 50": lambda s: list_runs(s, RunFilter()),
        "list --model (one of 20)": lambda s: list_runs(s, RunFilter(model=MODELS[3])),
        "list --since 7d": lambda s: list_runs(s, RunFilter(window=parse_window("7d"))),
        "compare two windows (median)": lambda s: compare_sides(
            s, RunFilter(window=parse_window("since 14d until 7d")),
            RunFilter(window=parse_window("since 7d")), aggregate="median", tolerance=5.0),
        "compare newest vs history": lambda s: compare_history(s, RunFilter(), tolerance=5.0),
    }  # fmt: skip
    found = []
    with Store.open(locate(url), create=False) as store:
        for name, case in cases.items():
            times = []
            for _ in range(3):
                start = time.perf_counter()
                case(store)
                times.append(time.perf_counter() - start)
            found.append((name, statistics.median(times)))
    return found


def export_peak(url: str, folder: str, argv: list[str]) -> tuple[float, float]:
    """(seconds, peak resident MiB) of `results export ARGV -o FILE` on the store."""
    start = time.perf_counter()
    done = run_measured([SCRIPTAST, "results", "export", *argv, "-o", f"{folder}/export.out",
                         "--results", url])  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"results export {argv} failed")
    return time.perf_counter() - start, done.peak_bytes / (1 << 20)


def appends(url: str, count: int = 200) -> float:
    """Median ms of one append of a distinct run (a transaction each, as run makes it)."""
    rng = random.Random(f"append-{url}")
    times = []
    with Store.open(locate(url), create=True) as store:
        for n in range(count):
            run = a_run(rng, n, tag="append-")
            start = time.perf_counter()
            store.append(run)
            times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def two_writers(url: str, each: int = 1000) -> tuple[int, float]:
    """Runs lost when two processes append `each` distinct runs at once, and the seconds."""
    code = ("import random, sys; sys.path[:0] = [sys.argv[1], sys.argv[1] + '/bench'];"
            "from store_bench import a_run;"
            "from scriptast.results.store.database import Store;"
            "from scriptast.results.store.location import locate;"
            "rng = random.Random(sys.argv[3]);"
            "s = Store.open(locate(sys.argv[2]), create=True);"
            "[s.append(a_run(rng, n, tag=sys.argv[3]))"
            " for n in range(int(sys.argv[4]))]")  # fmt: skip
    start = time.perf_counter()
    writers = [subprocess.Popen([sys.executable, "-c", code, str(ROOT), url, tag, str(each)])
               for tag in ("w1-", "w2-")]  # fmt: skip
    if any(w.wait() != 0 for w in writers):
        raise SystemExit("a writer failed")
    seconds = time.perf_counter() - start
    with Store.open(locate(url), create=False) as store:
        (stored,) = store.rows("SELECT count(*) FROM scriptast_runs WHERE run_uid LIKE 'w%'")
    return 2 * each - int(stored[0]), seconds


@contextlib.contextmanager
def stores(use_postgres: bool) -> Iterator[list[tuple[str, str, str]]]:
    """(kind, the big store's URL, an empty store's URL) for each kind."""
    with tempfile.TemporaryDirectory() as folder:
        found = [("sqlite", f"{folder}/big.db", f"{folder}/writers.db")]
        if not use_postgres:
            yield found
            return
        with throwaway_server(durable=True) as server:
            found.append(("postgresql", server.fresh(), server.fresh()))
            yield found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()
    rows: list[tuple[str, str]] = []
    with stores(not args.no_postgres and available()) as kinds:
        for kind, big, empty in kinds:
            start = time.perf_counter()
            fill(big, args.runs)
            rows.append((f"{kind}: fill {args.runs:,} runs (one transaction)",
                         f"{time.perf_counter() - start:.1f} s"))  # fmt: skip
            for name, seconds in library(big):
                rows.append((f"{kind}: {name}, library (target < 1 s)", f"{seconds * 1e3:.0f} ms"))
            for name, argv in (("results list", ["list"]),
                               ("results list --model", ["list", "--model", MODELS[3]]),
                               ("results compare --base/--target",
                                ["compare", "--base", "since 14d until 7d", "--target",
                                 "since 7d"]),
                               ("results compare (history)", ["compare"])):  # fmt: skip
                seconds, _ = timed(argv, big)
                rows.append((f"{kind}: {name}, command (target < 1 s)", f"{seconds * 1e3:.0f} ms"))
            with tempfile.TemporaryDirectory() as out:
                for name, argv in (
                    ("export --format json, every run", ["--format", "json"]),
                    (
                        "export --format json --model (a twentieth)",
                        ["--format", "json", "--model", MODELS[3]],
                    ),
                    ("export --format csv, every run", ["--format", "csv"]),
                ):
                    seconds, peak = export_peak(big, out, argv)
                    rows.append((f"{kind}: {name}: peak RSS (streamed)",
                                 f"{peak:.0f} MiB in {seconds:.1f} s"))  # fmt: skip
            rows.append((f"{kind}: append one run, median of 200 (target < 20 ms)",
                         f"{appends(big):.2f} ms"))  # fmt: skip
            lost, seconds = two_writers(empty)
            rows.append((f"{kind}: two writers x 1,000 runs at once: lost (target 0)",
                         f"{lost} in {seconds:.1f} s"))  # fmt: skip
    width = max(len(name) for name, _ in rows) + 2
    for name, value in rows:
        print(f"{name:<{width}}{value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
