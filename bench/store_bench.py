"""The results store at scale, on SQLite and on a throw-away PostgreSQL server: a store of
100,000 distinct runs (20 models, 3 GPU types, 4 GPU counts, 90 days, 3 figures each), and on
it `results list` (newest 50; one model; the last 7 days) and `results compare` (two windows;
each key's newest run against its history), each timed through the library and as the command
a user types; appending one distinct run; two processes appending 1,000 distinct runs each at
once, and what they lost.

    python bench/store_bench.py [--runs 100000] [--no-postgres | --no-sqlite] [--reframe]

Each run is a real bench job's run.json (bench/fixtures/bench_run.json) with its own values; the
store's bytes per run on disk are measured, and with --reframe the same runs are stored in
ReFrame 4.10's results storage and its commands timed beside ours (bench/reframe_store.py).

Targets: list, filter and compare at most 0.5 s as commands, plot at most 2 s, bytes per run at
most 1.2 x ReFrame's, an append under 20 ms, none lost. PostgreSQL is Debian's (initdb, pg_ctl)
started in a temporary folder, as the tests do."""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scriptast.contract.run_record import RunRecord, Verdict, encode_record
from scriptast.results.store.database import Store, setup_id
from scriptast.results.store.location import locate
from scriptast.results.store.packed import pack_figures, pack_record
from scriptast.results.store.rows import SETUP, StoredFigure, StoredRun, setup_key
from scriptast.results.store.schema import KEY_COLUMNS
from tests.peak_memory import run_measured
from tests.postgres_server import available, throwaway_server

ROOT = Path(__file__).resolve().parent.parent
SCRIPTAST = str(Path(sys.executable).parent / "scriptast")
MODELS = [f"org/model-{n:02d}" for n in range(20)]
GPUS = ("H100", "B200", "GB200")
COUNTS = (1, 2, 4, 8)
NOW = time.time()


TEMPLATE = ROOT / "bench" / "fixtures" / "bench_run.json"
"""run.json of a trtllm-bench job judged by `scriptast run` on the loopback Slurm (its paths
made /home/alice): every run stored here is this record with its own values."""


@functools.cache
def _template() -> RunRecord:
    return msgspec.json.decode(TEMPLATE.read_bytes(), type=RunRecord)


def a_run(rng: random.Random, number: int, tag: str = "") -> StoredRun:
    """A distinct run: its own work dir, key, time and figures (every figure of a real bench
    record, each with its own value), its record run.json as `scriptast run` writes it."""
    stamp = NOW - rng.uniform(0, 90 * 86400)
    finished = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stamp))
    model, gpu, count = rng.choice(MODELS), rng.choice(GPUS), rng.choice(COUNTS)
    verdict = rng.choices(("PASSED", "REGRESSED", "FAILED"), (90, 5, 5))[0]
    template = _template()
    work = f"/home/alice/work/{tag}{number}"
    old = template.work_dir
    figures = tuple(
        msgspec.structs.replace(f, value=round(f.value * rng.uniform(0.5, 1.5), 4),
                                source=msgspec.structs.replace(
                                    f.source, file=f.source.file.replace(old, work)))
        for f in template.figures
    )  # fmt: skip
    record = msgspec.structs.replace(
        template, work_dir=work, script=template.script.replace(old, work),
        submit_command=tuple(w.replace(old, work) for w in template.submit_command),
        out_log=template.out_log.replace(old, work),
        err_log=(template.err_log or "").replace(old, work), job_id=str(number),
        submitted_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stamp - 300)),
        finished_at=finished, elapsed_seconds=round(rng.uniform(60, 600), 1),
        verdict=Verdict(verdict), figures=figures,
    )  # fmt: skip
    headline = next(f for f in figures if f.headline)
    return StoredRun(
        run_uid=f"{tag}{number}-{rng.getrandbits(64):x}", workflow="bench", model=model,
        partition="batch", gpu_type=gpu, gpu_count=count, nodes=1, image="img:1",
        trtllm_commit=f"{rng.getrandbits(160):040x}", spec_digest=f"{rng.getrandbits(256):064x}",
        user_name="alice", cluster="lo", work_dir=work, job_id=str(number),
        verdict=verdict, submitted_at=record.submitted_at, finished_at=finished,
        headline_name=headline.name, headline_value=headline.value, headline_unit=headline.unit,
        stored_at=finished, record=encode_record(record),
        figures=tuple(StoredFigure(name=f.name, value=f.value, unit=f.unit,
                                   higher_is_better=f.higher_is_better) for f in figures),
    )  # fmt: skip


def fill(url: str, runs: int) -> None:
    """`runs` distinct runs in one transaction (filling, not the append being measured)."""
    rng = random.Random(f"fill-{runs}")
    setups: dict[str, int] = {}
    with Store.open(locate(url), create=True) as store, store.transaction():
        for start in range(0, runs, 5000):
            made = [a_run(rng, n) for n in range(start, min(runs, start + 5000))]
            for r in made:
                key = setup_key([getattr(r, c) for c in SETUP])
                if key not in setups:
                    setups[key] = setup_id(store, key)
            store.executemany(
                f"INSERT INTO scriptast_runs (run_uid, {', '.join(KEY_COLUMNS)}, setup_id) "
                f"VALUES ({', '.join('?' * (len(KEY_COLUMNS) + 2))})",
                [(r.run_uid, *(getattr(r, c) for c in KEY_COLUMNS),
                  setups[setup_key([getattr(r, c) for c in SETUP])]) for r in made],
            )  # fmt: skip
            ids = {str(uid): int(i) for i, uid in store.rows(
                "SELECT id, run_uid FROM scriptast_runs WHERE id > ?", [start])}  # fmt: skip
            store.executemany(
                "INSERT INTO scriptast_records (run_id, record_zlib, figures_pack) "
                "VALUES (?, ?, ?)",
                [(ids[r.run_uid], pack_record(r.record),
                  pack_figures([(f.name, f.value, f.unit, f.higher_is_better) for f in r.figures]))
                 for r in made],
            )  # fmt: skip
            store.executemany(
                "INSERT INTO scriptast_figures (run_id, name, value, unit, higher_is_better) "
                "VALUES (?, ?, ?, ?, ?)",
                [(ids[r.run_uid], f.name, f.value, f.unit, int(bool(f.higher_is_better)))
                 for r in made for f in r.figures],
            )  # fmt: skip
        store.execute("ANALYZE")


def bytes_per_run(url: str, runs: int) -> float:
    """The store's size on disk (SQLite: its file; PostgreSQL: its tables with their indexes
    and TOAST) over its runs."""
    if not url.startswith("postgresql"):
        return os.path.getsize(url) / runs
    with Store.open(locate(url), create=False) as store:
        ((size,),) = store.rows("SELECT pg_total_relation_size('scriptast_runs') + "
                                "pg_total_relation_size('scriptast_figures') + "
                                "pg_total_relation_size('scriptast_records')")  # fmt: skip
    return int(size) / runs


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


def driver_import(repeats: int = 3) -> float:
    """The median wall time of a Python that imports the PostgreSQL driver and stops: what
    every PostgreSQL command pays before its first query."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import psycopg"], check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


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


COMMANDS: dict[str, list[str]] = {
    "results list": ["list"],
    "results list --since 7d": ["list", "--since", "7d"],
    "results list --model": ["list", "--model", MODELS[3]],
    "results list --model --gpus --verdict": ["list", "--model", MODELS[3], "--gpus", "4",
                                              "--verdict", "PASSED"],
    "results compare --base/--target": ["compare", "--base", "since 14d until 7d", "--target",
                                        "since 7d"],
    "results compare --model --base/--target": ["compare", "--model", MODELS[3], "--base",
                                                "since 14d until 7d", "--target", "since 7d"],
    "results compare (history)": ["compare"],
}  # fmt: skip
"""Each query as a user types it (target: at most 0.5 s at 100,000 runs)."""
PAIRED_WITH = {
    "results list --since 7d": "list, the last 7 days",
    "results list --model": "list one model, the last 90 days",
    "results compare --base/--target": "compare two windows (mean)",
}
"""Our command beside the ReFrame command that does the same (bench/reframe_store.py)."""


def measure_kind(kind: str, big: str, empty: str, runs: int) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    start = time.perf_counter()
    fill(big, runs)
    rows.append((f"{kind}: fill {runs:,} runs (one transaction)",
                 f"{time.perf_counter() - start:.1f} s"))  # fmt: skip
    rows.append((f"{kind}: bytes per run on disk", f"{bytes_per_run(big, runs):,.0f} B"))
    for name, seconds in library(big):
        rows.append((f"{kind}: {name}, library", f"{seconds * 1e3:.0f} ms"))
    for name, argv in COMMANDS.items():
        seconds, _ = timed(argv, big)
        rows.append((f"{kind}: {name}, command (target <= 0.5 s)", f"{seconds * 1e3:.0f} ms"))
    if kind == "postgresql":
        rows.append(("postgresql: python -c 'import psycopg' (in each command above)",
                     f"{driver_import() * 1e3:.0f} ms"))  # fmt: skip
    with tempfile.TemporaryDirectory() as out:
        seconds, _ = timed(["plot", "output_throughput", "--model", MODELS[3], "-o",
                            f"{out}/trend.png"], big)  # fmt: skip
        rows.append((f"{kind}: results plot --model, command (target <= 2 s)",
                     f"{seconds * 1e3:.0f} ms"))  # fmt: skip
        for name, argv in (
            ("export --format json, every run", ["--format", "json"]),
            ("export --format json --model (a twentieth)", ["--format", "json", "--model",
                                                            MODELS[3]]),
            ("export --format csv, every run", ["--format", "csv"]),
        ):  # fmt: skip
            seconds, peak = export_peak(big, out, argv)
            rows.append((f"{kind}: {name}: peak RSS (streamed)",
                         f"{peak:.0f} MiB in {seconds:.1f} s"))  # fmt: skip
    rows.append((f"{kind}: append one run, median of 200 (target < 20 ms)",
                 f"{appends(big):.2f} ms"))  # fmt: skip
    lost, seconds = two_writers(empty)
    rows.append((f"{kind}: two writers x 1,000 runs at once: lost (target 0)",
                 f"{lost} in {seconds:.1f} s"))  # fmt: skip
    return rows


def measure_reframe(runs: int, ours: str, cache: Path) -> list[tuple[str, str]]:
    """ReFrame's store of the same runs (their times, models and GPU counts, the template's
    figures): its bytes per run beside ours, and its commands beside ours, pair by pair."""
    from reframe_store import PAIRED, fill_reframe, reframe_python, timed_reframe

    python = reframe_python(cache)
    rng = random.Random(f"fill-{runs}")
    made = [a_run(rng, n) for n in range(runs)]  # the very runs fill() stored
    stamps = [time.mktime(time.strptime(r.finished_at, "%Y-%m-%dT%H:%M:%SZ")) - time.timezone
              for r in made]  # fmt: skip
    figures = [(f.name, f.value, f.unit) for f in _template().figures]
    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory() as home:
        database = fill_reframe(python, Path(home), figures,
                                [(t, r.model or "", r.gpu_count or 0)
                                 for t, r in zip(stamps, made, strict=True)],
                                f"reframe-{runs}")  # fmt: skip
        theirs = os.path.getsize(database) / runs
        mine = bytes_per_run(ours, runs)
        rows.append(("reframe 4.10 (sqlite): bytes per run on disk", f"{theirs:,.0f} B"))
        rows.append(("scriptast (sqlite) / reframe: bytes per run (target <= 1.2)",
                     f"{mine / theirs:.2f}"))  # fmt: skip
        for ours_name, theirs_name in PAIRED_WITH.items():
            their_seconds = timed_reframe(python, Path(home), PAIRED[theirs_name])
            our_seconds, _ = timed(COMMANDS[ours_name], ours)
            rows.append((f"pair: {ours_name} / reframe {theirs_name}",
                         f"{our_seconds * 1e3:.0f} ms / {their_seconds * 1e3:.0f} ms = "
                         f"{our_seconds / their_seconds:.2f}"))  # fmt: skip
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--no-sqlite", action="store_true", help="PostgreSQL alone")
    parser.add_argument("--reframe", action="store_true",
                        help="pair with ReFrame 4.10's results storage (installed from PyPI "
                        "into ~/.cache/scriptast-bench the first time)")  # fmt: skip
    args = parser.parse_args()
    rows: list[tuple[str, str]] = []
    with stores(not args.no_postgres and available()) as kinds:
        for kind, big, empty in kinds:
            if kind == "sqlite" and args.no_sqlite:
                continue
            rows += measure_kind(kind, big, empty, args.runs)
            if kind == "sqlite" and args.reframe:
                cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
                rows += measure_reframe(args.runs, big, cache / "scriptast-bench")
    width = max(len(name) for name, _ in rows) + 2
    for name, value in rows:
        print(f"{name:<{width}}{value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
