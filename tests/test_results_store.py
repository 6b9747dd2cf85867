"""The results store, on SQLite and on a real PostgreSQL server (tests/postgres_server.py):
runs appended in one transaction each and kept once, listed and shown, compared across windows,
commits and history, exported for CI (CSV, JSON, JUnit), plotted; two writers at once lose
nothing; a store that is not ours, is newer or does not parse is one error line."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from scriptast.contract.axes import ExecutionScenario
from scriptast.contract.measured import Check, FailedTest, Figure, PytestResults, Source
from scriptast.contract.run_record import RECORD_VERSION, RunRecord, Verdict, encode_record
from scriptast.errors import InputError, StoreError
from scriptast.results.store.compare import compare_history, compare_sides
from scriptast.results.store.database import Store
from scriptast.results.store.location import locate
from scriptast.results.store.packed import ColumnsReader, pack_figures, unpack_columns
from scriptast.results.store.queries import RunFilter, list_runs, one_run
from scriptast.results.store.rows import StoredFigure, StoredRun
from scriptast.results.store.schema import KEY_COLUMNS, SCHEMA_VERSION
from scriptast.results.store.windows import Window, parse_window
from tests.postgres_server import Server

SCRIPTAST = str(Path(sys.executable).parent / "scriptast")
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new, empty store of each kind."""
    if request.param == "sqlite":
        (tmp_path / "store").mkdir()  # a store's folder is the user's to make (a share)
        return str(tmp_path / "store" / "results.db")
    server: Server = request.getfixturevalue("postgres")
    return server.fresh()


@pytest.fixture
def store(url: str) -> Iterator[Store]:
    with Store.open(locate(url), create=True) as opened:
        yield opened


def day(n: int, hour: int = 12) -> str:
    return f"2026-11-{n:02d}T{hour:02d}:00:00Z"


def a_run(number: int, *, finished: str, value: float = 1000.0, model: str = LLAMA,
          verdict: str = "PASSED", gpus: int = 4, commit: str = "a" * 40, workflow: str = "bench",
          figure: str = "output_throughput", higher: bool | None = True,
          check: Check | None = None, tests: PytestResults | None = None) -> StoredRun:  # fmt: skip
    """A judged run as the store keeps it, with one figure."""
    work_dir = f"/work/run{number}"
    record = RunRecord(version=RECORD_VERSION, work_dir=work_dir,
                       execution_scenario=ExecutionScenario.local_slurm, script="job.slurm",
                       submitted_at=finished, submit_command=("sbatch",), out_log="o.log",
                       job_id=str(number), state="COMPLETED", exit_code=0,
                       verdict=Verdict(verdict), finished_at=finished, elapsed_seconds=61.5,
                       figures=(Figure(name=figure, value=value, unit="tokens/s",
                                       source=Source(file="o.log", line=9),
                                       higher_is_better=higher, check=check, headline=True),),
                       tests=tests)  # fmt: skip
    return StoredRun(
        run_uid=f"uid-{number}", workflow=workflow, model=model, partition="batch",
        gpu_type="H100", gpu_count=gpus, nodes=1, image="img:1", trtllm_commit=commit,
        spec_digest="d" * 64, user_name="alice", cluster="lo", work_dir=work_dir,
        job_id=str(number), verdict=verdict, submitted_at=finished, finished_at=finished,
        headline_name=figure, headline_value=value, headline_unit="tokens/s",
        stored_at=finished, record=encode_record(record),
        figures=(StoredFigure(name=figure, value=value, unit="tokens/s", higher_is_better=higher,
                              reference=check.reference if check else None,
                              lower_bound=check.lower if check else None,
                              upper_bound=check.upper if check else None,
                              ok=check.ok if check else None),),
    )  # fmt: skip


def results(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SCRIPTAST, "results", *args], capture_output=True, text=True,
                          env=env, timeout=120)  # fmt: skip


def test_runs_are_listed_newest_first_and_filtered(store: Store) -> None:
    for number, (when, model, verdict) in enumerate(
        [(day(1), LLAMA, "PASSED"), (day(3), "other/m", "FAILED"), (day(2), LLAMA, "REGRESSED")],
        1,
    ):
        assert store.append(a_run(number, finished=when, model=model, verdict=verdict)) is not None
    assert [r.job_id for r in list_runs(store, RunFilter())] == ["2", "3", "1"]
    assert [r.job_id for r in list_runs(store, RunFilter(model=LLAMA))] == ["3", "1"]
    assert [r.job_id for r in list_runs(store, RunFilter(verdict="failed"))] == ["2"]
    since = RunFilter(window=Window(since=day(2)))
    assert [r.job_id for r in list_runs(store, since)] == ["2", "3"]
    assert [r.job_id for r in list_runs(store, RunFilter(), limit=1)] == ["2"]
    row, text = one_run(store, 1)
    assert (row.model, row.gpu_count, row.headline_value) == (LLAMA, 4, 1000.0)
    assert msgspec.json.decode(text, type=RunRecord).figures[0].source.line == 9


def test_a_run_stored_twice_is_kept_once(store: Store) -> None:
    first = store.append(a_run(1, finished=day(1)))
    assert first is not None and store.append(a_run(1, finished=day(1))) is None
    assert len(list_runs(store, RunFilter())) == 1
    assert store.rows("SELECT count(*) FROM scriptast_figures") == [(1,)]


def test_a_run_is_all_or_nothing(store: Store) -> None:
    """A figure that cannot be written takes its run with it (one transaction)."""
    broken = msgspec.structs.replace(
        a_run(1, finished=day(1)),
        figures=(StoredFigure(name="x", value=float("nan"), unit=None),),  # type: ignore[arg-type]
    )
    with pytest.raises(StoreError):
        store.append(broken)
    assert list_runs(store, RunFilter()) == []


def _append_many(url: str, first: int, count: int) -> subprocess.Popen[bytes]:
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from tests.test_results_store import a_run, day;"
        "from scriptast.results.store.database import Store; from scriptast.results.store.location import locate;"
        "s = Store.open(locate(sys.argv[2]), create=True);"
        "[s.append(a_run(n, finished=day(1 + n % 28), value=float(n))) "
        " for n in range(int(sys.argv[3]), int(sys.argv[3]) + int(sys.argv[4]))]"
    )
    root = str(Path(__file__).resolve().parent.parent)
    return subprocess.Popen([sys.executable, "-c", code, root, url, str(first), str(count)])


def test_two_writers_at_once_lose_nothing(url: str) -> None:
    """Two processes append 300 runs each at once; the store (made by neither beforehand: both
    create and migrate it) holds all 600."""
    writers = [_append_many(url, 0, 300), _append_many(url, 300, 300)]
    assert [w.wait(timeout=300) for w in writers] == [0, 0]
    with Store.open(locate(url), create=False) as store:
        assert store.rows("SELECT count(*), count(DISTINCT run_uid) FROM scriptast_runs") == [
            (600, 600)
        ]
        assert store.rows("SELECT count(*) FROM scriptast_figures") == [(600,)]
        assert store.rows("SELECT version FROM scriptast_schema") == [(SCHEMA_VERSION,)]


def test_compare_two_windows_regresses_beyond_the_tolerance(store: Store) -> None:
    """Base week at 1000 tokens/s (median), target week at 850: -15%, REGRESSED at 5%;
    a latency (lower is better) that fell 20% improved."""
    for n, value in enumerate([990.0, 1000.0, 1010.0], 1):
        store.append(a_run(n, finished=day(n), value=value))
    for n, value in enumerate([840.0, 850.0, 860.0], 10):
        store.append(a_run(n, finished=day(n), value=value))
    for n, value in ((20, 100.0), (21, 80.0)):
        store.append(a_run(n, finished=day(n - 18 if n == 20 else 11), value=value,
                           figure="avg_request_latency", higher=False))  # fmt: skip
    base, target = RunFilter(window=parse_window("since 2026-11-01 until 2026-11-08")), \
        RunFilter(window=parse_window("since 2026-11-08"))  # fmt: skip
    found = {c.figure: c for c in compare_sides(store, base, target, aggregate="median",
                                                tolerance=5.0)}  # fmt: skip
    throughput = found["output_throughput"]
    assert (throughput.base, throughput.target) == (
        msgspec.convert({"value": 1000.0, "runs": 3}, type(throughput.base)),
        msgspec.convert({"value": 850.0, "runs": 3}, type(throughput.target)),
    )
    assert throughput.difference == pytest.approx(-15.0) and throughput.verdict == "REGRESSED"
    assert found["avg_request_latency"].verdict == "improved"
    loose = compare_sides(store, base, target, aggregate="mean", tolerance=20.0)
    assert {c.verdict for c in loose} == {"ok"}


def test_compare_two_commits(store: Store) -> None:
    store.append(a_run(1, finished=day(1), value=1000.0, commit="1" * 40))
    store.append(a_run(2, finished=day(2), value=1030.0, commit="2" * 40))
    (found,) = compare_sides(store, RunFilter(commit="111"), RunFilter(commit="222"),
                             aggregate="mean", tolerance=5.0)  # fmt: skip
    assert found.difference == pytest.approx(3.0) and found.verdict == "ok"


def test_compare_history_judges_the_newest_run_against_five_before_it(store: Store) -> None:
    for n, value in enumerate([1000.0, 1010.0, 990.0, 1005.0, 995.0, 700.0], 1):
        store.append(a_run(n, finished=day(n), value=value))
    store.append(a_run(30, finished=day(20), value=5.0, gpus=8))  # another key, no history
    store.append(a_run(31, finished=day(7), value=1.0, verdict="FAILED"))  # never measured
    found = compare_history(store, RunFilter(), tolerance=5.0)
    four, eight = sorted(found, key=lambda c: c.gpu_count or 0)
    assert four.base is not None and four.base.value == 1000.0 and four.base.runs == 5
    assert four.difference == pytest.approx(-30.0) and four.verdict == "REGRESSED"
    assert four.baseline_runs == (5, 4, 3, 2, 1)
    assert eight.verdict == "not judged: 0 earlier PASSED run(s) with it, the baseline needs 5"


def test_the_command_line_lists_shows_compares_and_exports(url: str) -> None:
    with Store.open(locate(url), create=True) as store:
        store.append(a_run(1, finished=day(1), value=1000.0))
        check = Check(reference=1000.0, lower=900.0, origin="refs.yaml", margin=-100.0, ok=False)
        store.append(a_run(2, finished=day(9), value=800.0, verdict="REGRESSED", check=check))
        failed = PytestResults(source="r.xml", tests=10, failures=1, errors=0, skipped=0,
                               failed=(FailedTest(id="t.py::test_x", outcome="failed",
                                                  message="AssertionError: 1 == 2"),))  # fmt: skip
        store.append(a_run(3, finished=day(5), workflow="pytest", verdict="FAILED",
                           tests=failed))  # fmt: skip
    listed = results("list", "--results", url)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0].split() == ["ID", "FINISHED", "VERDICT", "WORKFLOW", "MODEL", "GPUS",
                                "HEADLINE", "WORK_DIR"]  # fmt: skip
    assert [line.split()[0] for line in lines[1:]] == ["2", "3", "1"]
    assert "output_throughput 800.00 tokens/s" in lines[1] and "H100x4" in lines[1]
    assert results("list", "--results", url, "--verdict", "PASSED").stdout.count("\n") == 2
    shown = results("show", "2", "--results", url)
    assert "verdict       REGRESSED" in shown.stdout.replace("verdict         ", "verdict       ")
    assert "output_throughput 800.00 tokens/s" in shown.stdout
    compared = results("compare", "--results", url, "--base", "since 2026-11-01 until 2026-11-05",
                       "--target", "since 2026-11-05", "--workflow", "bench")  # fmt: skip
    assert compared.returncode == 17, compared.stdout + compared.stderr
    assert "-20.00%" in compared.stdout and "REGRESSED" in compared.stdout
    exported = results("export", "--format", "csv", "--results", url)
    rows = list(csv.DictReader(io.StringIO(exported.stdout)))
    assert [(r["id"], r["verdict"]) for r in rows] == [("2", "REGRESSED"), ("3", "FAILED"),
                                                      ("1", "PASSED")]  # fmt: skip
    as_json = json.loads(results("export", "--format", "json", "--results", url).stdout)
    assert as_json[0]["figures"][0]["lower"] == 900.0 and as_json[0]["figures"][0]["ok"] is False
    junit = ElementTree.fromstring(results("export", "--format", "junit", "--results", url).stdout)
    suite = junit.find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("failures")) == ("3", "2")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert cases["run1 #1"].find("failure") is None
    assert cases["run1 #1"].get("time") == "61.500"
    regressed = cases["run2 #2"].find("failure")
    assert regressed is not None
    assert regressed.get("message") == "REGRESSED: output_throughput 800 outside its reference"
    failing = cases["run3 #3"].find("failure")
    assert failing is not None
    assert failing.get("message") == "FAILED: t.py::test_x: AssertionError: 1 == 2"


def test_a_plot_holds_the_stored_values_with_the_reference_as_a_band(
    url: str, tmp_path: Path
) -> None:
    from matplotlib import dates
    from matplotlib.collections import PolyCollection
    from PIL import Image

    from scriptast.results.store.plot import draw, series

    check = Check(reference=1000.0, lower=950.0, origin="refs.yaml", margin=10.0, ok=True)
    with Store.open(locate(url), create=True) as store:
        for n, value in enumerate([1000.0, 960.0, 1020.0], 1):
            store.append(a_run(n, finished=day(n), value=value, check=check))
        store.append(a_run(9, finished=day(4), value=1900.0, gpus=8))
        found = series(store, "output_throughput", RunFilter())
    drawn = draw("output_throughput", found)
    (axes,) = drawn.axes
    assert axes.get_xlabel() == "finished (UTC)"
    assert axes.get_ylabel() == "output_throughput (tokens/s)"
    assert axes.get_title() == f"output_throughput of {LLAMA} on 2 setups"
    plotted = {line.get_label(): line for line in axes.get_lines()}
    assert set(plotted) == {"H100 x4", "H100 x8"}
    assert list(plotted["H100 x4"].get_ydata()) == [1000.0, 960.0, 1020.0]
    days = [dates.num2date(x).day for x in plotted["H100 x4"].get_xdata()]  # type: ignore[no-untyped-call]
    assert days == [1, 2, 3]
    assert list(plotted["H100 x8"].get_ydata()) == [1900.0]
    bands = [c for c in axes.collections if isinstance(c, PolyCollection)]
    assert len(bands) == 1 and bands[0].get_label() == "H100 x4 reference"
    band: Any = bands[0].get_paths()[0].vertices
    assert sorted({round(float(y)) for y in band[:, 1]}) == [950, 1020]
    image = tmp_path / "trend.png"
    done = results("plot", "output_throughput", "-o", str(image), "--results", url)
    assert done.returncode == 0, done.stderr
    with Image.open(image) as opened:
        assert opened.size == (800, 450)
    svg = tmp_path / "trend.svg"
    assert results("plot", "output_throughput", "-o", str(svg), "--results", url).returncode == 0
    assert svg.read_text().lstrip().startswith("<?xml")


def test_a_plot_without_matplotlib_names_the_extra(tmp_path: Path) -> None:
    blocker = tmp_path / "block" / "matplotlib"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('no matplotlib here')\n")
    db = tmp_path / "r.db"
    with Store.open(locate(str(db)), create=True) as store:
        store.append(a_run(1, finished=day(1)))
    import os

    env = {**os.environ, "PYTHONPATH": str(tmp_path / "block")}
    done = results("plot", "output_throughput", "-o", str(tmp_path / "t.png"), "--results",
                   str(db), env=env)  # fmt: skip
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == ("error: results plot needs matplotlib, the optional extra: pip "
                           "install 'scriptast[plot]'\n")  # fmt: skip
    assert not (tmp_path / "t.png").exists()


SCHEMA_4_COLUMNS = ("sweep", "array_id")
"""The run keys schema 4 added: a sweep's sha256 and the job array a task ran in."""


def test_a_schema_3_store_gains_the_sweep_keys_and_keeps_its_runs(url: str) -> None:
    from scriptast.results.store.queries import RunFilter, list_runs

    with Store.open(locate(url), create=True) as store:
        store.append(a_run(1, finished=day(1)))
        for column in SCHEMA_4_COLUMNS:  # back to schema 3
            for index in ("scriptast_runs_sweep", "scriptast_runs_array"):
                store.execute(f"DROP INDEX IF EXISTS {index}")
            store.execute(f"ALTER TABLE scriptast_runs DROP COLUMN {column}")
        store.execute("UPDATE scriptast_schema SET version = 3")
    with Store.open(locate(url), create=True) as store:
        assert set(SCHEMA_4_COLUMNS) <= set(_column_names(store))
        assert [r.id for r in list_runs(store, RunFilter())] == [1]
        assert list_runs(store, RunFilter(sweep="123456")) == []
        task = msgspec.structs.replace(a_run(2, finished=day(2)), sweep="ab" * 32, array_id="77")
        store.append(task)
        assert [r.id for r in list_runs(store, RunFilter(sweep="77"))] == [2]
        assert [r.id for r in list_runs(store, RunFilter(sweep="ababab"))] == [2]
        assert [r.array_id for r in list_runs(store, RunFilter(sweep="ababab"))] == ["77"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["list", "--results", "mysql://db/x"], "results store 'mysql://db/x': 'mysql' is not a "
         "store scriptast knows; give a file path, sqlite:///PATH or postgresql://USER@HOST:PORT/DB"),
        (["compare", "--base", "since yesterday", "--target", "since 7d"],
         "'yesterday' is not an age or a date: give 'since 14d until 7d', 'since 2026-11-01', "
         "'until 7d' or '7d' (ages in m, h, d, w)"),
        (["compare", "--base", "7d until", "--target", "since 7d"], "window '7d until' does not "
         "parse: give 'since 14d until 7d', 'since 2026-11-01', 'until 7d' or '7d' (ages in m, h, "
         "d, w)"),
        (["compare", "--figure", "output_thruput"], "no stored run has the figure "
         "'output_thruput' (did you mean 'output_throughput'?): 'scriptast results show RUN_ID' "
         "lists a run's figures"),
        (["plot", "gsm8k accuracy", "-o", "{tmp}/t.png"], "no stored run has the figure 'gsm8k "
         "accuracy': 'scriptast results show RUN_ID' lists a run's figures"),
        (["compare", "--tolerance", "lots"], "--tolerance lots: give a percentage such as 5%"),
        (["compare", "--base", "7d"], "give both --base and --target (windows), or both "
         "--base-commit and --target-commit"),
        (["show", "99"], "no run 99 in the results store {db}: 'scriptast results list' shows the "
         "stored runs"),
        (["export", "--format", "xlsx"], "--format xlsx: give one of csv, json, junit"),
        (["list", "--verdict", "GREAT"], "--verdict GREAT: give one of HANG, TIMEOUT, "
         "OUT_OF_MEMORY, NODE_FAIL, CANCELLED, FAILED, REGRESSED, INCONCLUSIVE, PASSED"),
    ],
)  # fmt: skip
def test_bad_input_is_one_error_line(tmp_path: Path, args: list[str], message: str) -> None:
    db = tmp_path / "r.db"
    with Store.open(locate(str(db)), create=True) as store:
        store.append(a_run(1, finished=day(1)))
    import os

    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    done = results(*argv, env={**os.environ, "SCRIPTAST_RESULTS": str(db)})
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"error: {message.replace('{db}', str(db))}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.db"]


def test_a_store_that_is_not_ours_or_is_newer_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE accounts (id INTEGER)")
    with pytest.raises(StoreError, match=r"is a database of another program \(it has accounts"):
        Store.open(locate(str(other)), create=True)
    newer = tmp_path / "newer.db"
    Store.open(locate(str(newer)), create=True).close()
    with sqlite3.connect(newer) as connection:
        connection.execute("UPDATE scriptast_schema SET version = 99")
    with pytest.raises(
        StoreError,
        match=rf"made by a newer scriptast \(schema 99; this one knows {SCHEMA_VERSION}\)",
    ):
        Store.open(locate(str(newer)), create=True)
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not a database at all, just some text" * 100)
    with pytest.raises(StoreError, match="file is not a database"):
        Store.open(locate(str(garbage)), create=True)
    with pytest.raises(StoreError, match="no results store at"):
        Store.open(locate(str(tmp_path / "none.db")), create=False)
    with pytest.raises(InputError, match="'ftp' is not a store scriptast knows"):
        locate("ftp://x/y")


def test_a_postgresql_store_of_another_program_and_a_wrong_password_are_refused(
    postgres: Server,
) -> None:
    import psycopg

    url = postgres.fresh()
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("CREATE TABLE scriptast_runs (id INTEGER)")
    with pytest.raises(StoreError, match="is a database of another program"):
        Store.open(locate(url), create=True)
    unreachable = f"postgresql://scriptast:secret@127.0.0.1:{postgres.port}/no_such_db"
    with pytest.raises(StoreError) as caught:
        Store.open(locate(unreachable), create=True)
    assert "secret" not in str(caught.value) and "scriptast:***@127.0.0.1" in str(caught.value)


def test_the_default_store_follows_xdg_data_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SCRIPTAST_RESULTS")
    monkeypatch.setenv("XDG_DATA_HOME", "/data/alice")
    assert locate().target == "/data/alice/scriptast/results.db"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", "/home/bob")
    assert locate().target == "/home/bob/.local/share/scriptast/results.db"
    monkeypatch.setenv("SCRIPTAST_RESULTS", "sqlite:////srv/r.db")
    assert locate() == msgspec.convert(
        {"kind": "sqlite", "target": "/srv/r.db", "shown": "/srv/r.db"}, type(locate())
    )
    assert locate("postgresql://u@h/db").kind == "postgresql"


def test_the_user_is_the_account_the_run_is_made_as(
    site: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not $USER or $LOGNAME, which anyone can set."""
    import os
    import pwd

    from scriptast.contract.job_spec import JobSpec
    from scriptast.pipeline.emit_job import generate, write_outputs
    from scriptast.results.store.origin import origin_of

    monkeypatch.setenv("USER", "mallory")
    monkeypatch.setenv("LOGNAME", "mallory")
    output = generate(site.request(workflow_type="bench",
                                   bench_cmd="trtllm-bench --model m throughput"),
                      machine="x86_64", home=str(site.home))  # fmt: skip
    write_outputs(output)
    spec_text = (Path(output.job.work_dir) / "job_spec.json").read_bytes()
    spec = msgspec.json.decode(spec_text, type=JobSpec)
    origin = origin_of(spec, spec_text, lambda path: None, None, None, day(1))
    assert origin.user_name == pwd.getpwuid(os.geteuid()).pw_name != "mallory"


def test_a_run_json_of_another_user_is_not_imported(site: Any, tmp_path: Path) -> None:
    """A run.json another account wrote is not taken as a run this user made; one's own is."""
    import os

    from scriptast.pipeline.emit_job import generate, write_outputs

    output = generate(site.request(workflow_type="bench",
                                   bench_cmd="trtllm-bench --model m throughput"),
                      machine="x86_64", home=str(site.home))  # fmt: skip
    write_outputs(output)
    work = Path(output.job.work_dir)
    record = RunRecord(version=RECORD_VERSION, work_dir=str(work),
                       execution_scenario=ExecutionScenario.local_slurm, script="s.slurm",
                       submitted_at=day(1), submit_command=("sbatch",), out_log="o.log",
                       job_id="7", state="COMPLETED", exit_code=0, verdict=Verdict.PASSED,
                       finished_at=day(1))  # fmt: skip
    (work / "run.json").write_text(encode_record(record))
    store = tmp_path / "r.db"
    if os.geteuid() == 0:
        os.chown(work / "run.json", 65534, 65534)
        done = results("import", str(work), "--results", str(store))
        assert (done.returncode, done.stdout) == (1, "")
        assert done.stderr == (f"error: {work}/run.json belongs to another user (uid 65534): "
                               "import only the runs you made\n")  # fmt: skip
        assert not store.exists()
        os.chown(work / "run.json", 0, 0)
    done = results("import", str(work), "--results", str(store))
    assert (done.returncode, done.stdout) == (0, f"{work}: stored as run 1\n")


def test_exports_ci_reads_name_whole_models_and_say_why_a_run_is_inconclusive(url: str) -> None:
    """JUnit: a classname whose only dots are package separators (Jenkins splits at each: a
    model's `3.1` must not make a package), an INCONCLUSIVE run's reason (never `None`); a
    pytest run's passed tests listed as whole numbers."""
    inconclusive = a_run(1, finished=day(1), verdict="INCONCLUSIVE")
    record = msgspec.json.decode(inconclusive.record, type=RunRecord)
    record.missing = ("output_throughput",)
    record.reason = "None"
    inconclusive = msgspec.structs.replace(inconclusive, record=encode_record(record))
    passed = PytestResults(source="r.xml", tests=5, failures=0, errors=0, skipped=0)
    tests_run = msgspec.structs.replace(
        a_run(2, finished=day(2), workflow="pytest", tests=passed),
        headline_name="tests passed",
        headline_value=5.0,
        headline_unit="of 5",
    )
    with Store.open(locate(url), create=True) as store:
        store.append(inconclusive)
        store.append(tests_run)
    junit = ElementTree.fromstring(results("export", "--format", "junit", "--results", url).stdout)
    cases = {c.get("name"): c for c in junit.iter("testcase")}
    assert cases["run1 #1"].get("classname") == "scriptast.bench.meta-llama/Llama-3_1-8B-Instruct"
    failure = cases["run1 #1"].find("failure")
    assert failure is not None
    assert failure.get("message") == "INCONCLUSIVE: missing output_throughput"
    listed = results("list", "--results", url).stdout
    assert "tests passed 5 of 5" in listed and "5.00 of 5" not in listed


def test_csv_has_a_column_a_figure_with_its_unit_and_figures_narrows_them(url: str) -> None:
    with Store.open(locate(url), create=True) as store:
        store.append(a_run(1, finished=day(1), value=1000.0))
        store.append(a_run(2, finished=day(2), value=250.5, figure="avg_ttft", higher=False))
    every = results("export", "--format", "csv", "--results", url)
    assert every.returncode == 0, every.stderr
    rows = list(csv.DictReader(io.StringIO(every.stdout)))
    assert [r["id"] for r in rows] == ["2", "1"]
    assert (
        rows[0]["avg_ttft [tokens/s]"] == "250.5" and rows[0]["output_throughput [tokens/s]"] == ""
    )
    assert rows[1]["output_throughput [tokens/s]"] == "1000.0" and rows[1]["verdict"] == "PASSED"
    assert {"gpu_count", "tp", "quantization", "model"} <= set(rows[0])
    narrowed = results("export", "--format", "csv", "--figures", "avg_ttft", "--results", url)
    header = narrowed.stdout.splitlines()[0].split(",")
    assert "avg_ttft [tokens/s]" in header and "output_throughput [tokens/s]" not in header
    wrong = results("export", "--format", "csv", "--figures", "tpot", "--results", url)
    assert wrong.returncode == 1 and wrong.stderr.startswith("error: --figures tpot: no chosen")


def test_compare_two_runs_a_set_and_a_run_and_filters_that_match_nothing(url: str) -> None:
    """`compare A B`: two run ids; A a commit, a window or history; every key a filter; a
    filter that matches nothing says so (list exits 0, compare 11)."""
    with Store.open(locate(url), create=True) as store:
        for number, value in enumerate((1000.0, 1010.0, 990.0, 1005.0, 995.0), 1):
            store.append(a_run(number, finished=day(number), value=value, commit="b" * 40))
        store.append(a_run(6, finished=day(8), value=700.0, commit="c" * 40))
        store.append(a_run(7, finished=day(9), value=690.0, gpus=8, commit="c" * 40))
    two = results("compare", "1", "6", "--results", url)
    assert two.returncode == 17, two.stdout + two.stderr
    assert "-30.00%" in two.stdout and "REGRESSED" in two.stdout
    by_commit = results("compare", "b" * 7, "6", "--results", url)
    assert by_commit.returncode == 17 and "(n=5)" in by_commit.stdout
    by_window = results("compare", "until 2026-11-07", "6", "--results", url)
    assert by_window.returncode == 17 and "(n=5)" in by_window.stdout
    history = results("compare", "history", "6", "--results", url, "--json")
    assert history.returncode == 17, history.stdout + history.stderr
    [compared] = json.loads(history.stdout)
    assert compared["target_run"] == 6 and compared["base"]["value"] == 1000.0
    assert compared["baseline_runs"] == [5, 4, 3, 2, 1]
    other = results("compare", "1", "7", "--results", url)  # another GPU count: no pair
    assert "not judged: no run of the base has it" in other.stdout
    pooled = results("compare", "--base", "until 2026-11-08T12:00:00Z", "--target",
                     "since 2026-11-08T12:00:00Z", "--group-by", "model", "--aggregate", "mean",
                     "--results", url)  # fmt: skip
    assert pooled.returncode == 17 and "(n=2)" in pooled.stdout  # 6 and 7 pooled
    for args in (["--gpus", "8"], ["--partition", "batch", "--until", "2026-11-02"],
                 ["--commit", "ccc", "--user", "alice", "--cluster", "lo"]):  # fmt: skip
        listed = results("list", *args, "--results", url)
        assert listed.returncode == 0 and len(listed.stdout.splitlines()) > 1, args
    none = results("list", "--tp", "4", "--results", url)
    assert (none.returncode, none.stdout) == (0, "no stored run matches\n")
    nothing = results("compare", "--partition", "elsewhere", "--results", url)
    assert (nothing.returncode, nothing.stdout) == (11, "nothing to compare: no stored run "
                                                        "matches\n")  # fmt: skip
    bad = results("compare", "--group-by", "colour", "--results", url)
    assert bad.returncode == 1 and bad.stderr.startswith("error: --group-by colour: give one of")


def test_show_prints_a_run_whole(url: str) -> None:
    run = a_run(1, finished=day(1), value=1000.0)
    record = msgspec.json.decode(run.record, type=RunRecord)
    extra = Figure(name="avg_ttft", value=42.5, unit="ms", source=Source(file="o.log", line=10),
                   higher_is_better=False)  # fmt: skip
    record.figures = (*record.figures, extra)
    record.notes = ("a note worth reading",)
    with Store.open(locate(url), create=True) as store:
        store.append(msgspec.structs.replace(run, record=encode_record(record)))
    shown = results("show", "1", "--results", url)
    assert shown.returncode == 0, shown.stderr
    assert "avg_ttft 42.50 ms (no reference" in shown.stdout
    assert "note: a note worth reading" in shown.stdout and "gpu_count" in shown.stdout


def test_a_plot_by_tp_over_a_short_span_reads_in_minutes(url: str, tmp_path: Path) -> None:
    """`--by tp`: a line a tensor parallelism; four minutes read as clock times, never
    `09:13.000000`; the PNG is opened and its title and labels read from the drawing."""
    from PIL import Image

    from scriptast.results.store.plot import draw, series

    with Store.open(locate(url), create=True) as store:
        for n, (tp, value) in enumerate([(1, 500.0), (2, 900.0), (1, 510.0), (2, 905.0)], 1):
            run = a_run(n, finished=f"2026-11-01T09:1{n}:00Z", value=value)
            store.append(msgspec.structs.replace(run, tp=tp, gpu_count=tp))
        found = series(store, "output_throughput", RunFilter(), by="tp")
    drawn = draw("output_throughput", found)
    (axes,) = drawn.axes
    assert [line.get_label() for line in axes.get_lines()] == ["tp 1", "tp 2"]
    assert axes.get_title() == f"output_throughput of {LLAMA} on 2 setups"
    drawn.canvas.draw()
    ticks = [t.get_text() for t in axes.get_xticklabels() if t.get_text()]
    assert ticks and all(".000000" not in t for t in ticks), ticks
    assert any(t.count(":") == 1 for t in ticks), ticks  # 09:12, 09:13, ...
    image = tmp_path / "by_tp.png"
    done = results("plot", "output_throughput", "--by", "tp", "-o", str(image), "--results", url)
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("4 run(s), 2 line(s)\n")
    with Image.open(image) as opened:
        assert opened.size == (800, 450)
    bad = results("plot", "output_throughput", "--by", "colour", "-o", str(image), "--results",
                  url)  # fmt: skip
    assert bad.returncode == 1 and bad.stderr.startswith("error: --by colour: give one of")


def test_a_schema_2_store_keeps_its_records_compressed_and_reads_them_back(url: str) -> None:
    """Opening a schema 2 store packs each record (run.json's text) into scriptast_records and
    drops the runs' text column; `show` reads the same record back; a new run is stored
    packed."""
    from scriptast.results.store.database import BLOB, SERIAL
    from scriptast.results.store.schema import migrations

    kind = "postgresql" if url.startswith("postgresql") else "sqlite"
    old = a_run(1, finished=day(1))
    with Store.open(locate(url), create=True) as store:  # then taken back to schema 2
        for table in (
            "scriptast_figures",
            "scriptast_records",
            "scriptast_runs",
            "scriptast_setups",
        ):
            store.execute(f"DROP TABLE {table}")
        store.execute("DELETE FROM scriptast_schema")
        for step in migrations(SERIAL[kind], BLOB[kind])[:2]:
            for statement in step:
                store.execute(statement)
        store.execute("INSERT INTO scriptast_schema (version) VALUES (2)")
        columns = [c for c in KEY_COLUMNS if c not in SCHEMA_4_COLUMNS]  # schema 2's
        store.execute(
            f"INSERT INTO scriptast_runs (run_uid, {', '.join(columns)}, record) "
            f"VALUES ({', '.join('?' * (len(columns) + 2))})",
            [old.run_uid, *(getattr(old, c) for c in columns), old.record],
        )
    with Store.open(locate(url), create=False) as store:
        said = store.migrated
        _, text = one_run(store, 1)
        packed = store.rows("SELECT record_zlib FROM scriptast_records WHERE run_id = 1")[0][0]
        store.append(a_run(2, finished=day(2)))
        _, second = one_run(store, 2)
    assert text == old.record
    assert second == a_run(2, finished=day(2)).record
    assert said == [f"results store {locate(url).shown}: the records of 1 run(s) compressed "
                    "(schema 3)"]  # fmt: skip
    assert len(bytes(packed)) < len(old.record)
    with Store.open(locate(url), create=False) as store:
        names = _column_names(store)
    assert "record" not in names  # the runs' table keeps keys only


def _column_names(store: Store) -> list[str]:
    if store.location.kind == "sqlite":
        return [str(r[1]) for r in store.rows("PRAGMA table_info(scriptast_runs)")]
    return [str(r[0]) for r in store.rows(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'scriptast_runs'"
        " AND table_schema = current_schema()")]  # fmt: skip


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (b"x" * 10, "is damaged (not zlib data)"),
        ("text", "is not one scriptast wrote (not compressed bytes)"),
        ("bomb", "inflates past 16 MiB or is cut short: it is not read"),
    ],
)
def test_a_record_that_is_no_packed_record_is_one_error_line(
    tmp_path: Path, value: object, said: str
) -> None:
    import zlib

    from tests.peak_memory import run_measured

    path = tmp_path / "store" / "results.db"
    path.parent.mkdir()
    with Store.open(locate(str(path)), create=True) as store:
        store.append(a_run(1, finished=day(1)))
    bomb = zlib.compress(b"\0" * (200 << 20), 9)  # 200 MiB of zeros in about 200 KB
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE scriptast_records SET record_zlib = ?",
                           [bomb if value == "bomb" else value])  # fmt: skip
    err = tmp_path / "err.txt"
    with open(err, "wb") as stream:
        done = run_measured([SCRIPTAST, "results", "show", "1", "--results", str(path)],
                            seconds=60, stderr=stream)  # fmt: skip
    assert done.returncode == 1
    assert err.read_text() == f"error: run 1's record in the results store {said}\n"
    assert done.peak_bytes < 100 << 20, done.peak_bytes >> 20


def _two_runs(tmp_path: Path) -> Path:
    """A SQLite store of two runs, a week apart (2026-11-01 and 2026-11-09)."""
    path = tmp_path / "store" / "results.db"
    path.parent.mkdir()
    with Store.open(locate(str(path)), create=True) as store:
        store.append(a_run(1, finished=day(1)))
        store.append(a_run(2, finished=day(9)))
    return path


def test_damaged_packed_figures_are_one_error_line(tmp_path: Path) -> None:
    path = _two_runs(tmp_path)
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE scriptast_records SET figures_pack = ? WHERE run_id = 2",
                           [b"\x92\xa3abc"])  # fmt: skip
    done = results("compare", "--base", "until 2026-11-05", "--target", "since 2026-11-05",
                   "--results", str(path))  # fmt: skip
    assert done.returncode == 1
    assert done.stderr == ("error: run 2's figures in the results store are damaged (not what "
                           "scriptast packs)\n")  # fmt: skip


@pytest.mark.parametrize(
    "packed",
    [b"\x92\xa3abc", msgspec.msgpack.encode([[1], [1.0], ["ms"], [True]]),
     msgspec.msgpack.encode([["a", "b"], [1.0], ["ms", "ms"], [True, None]]),
     msgspec.msgpack.encode([["a"], ["x"], ["ms"], [True]]),
     msgspec.msgpack.encode([["a"], [1.0], ["ms"], ["yes"]]), "not bytes"],
)  # fmt: skip
def test_the_columns_reader_refuses_what_unpack_refuses(packed: object) -> None:
    """Names that are no text, columns of unequal length, a value that is no number, a way
    that is no flag: the reader that shares decoded names refuses each, as unpack does."""
    with pytest.raises(StoreError, match="run 7's figures"):
        unpack_columns(packed, 7)
    with pytest.raises(StoreError, match="run 7's figures"):
        ColumnsReader().read(packed, 7)


def test_the_columns_reader_shares_names_and_keeps_each_runs_values() -> None:
    reader = ColumnsReader()
    first = reader.read(pack_figures([("tps", 10.0, "tokens/s", True), ("ttft", 2.0, "ms",
                                                                         False)]), 1)  # fmt: skip
    second = reader.read(pack_figures([("tps", 11.0, "tokens/s", True), ("ttft", 3.0, "ms",
                                                                          False)]), 2)  # fmt: skip
    other = reader.read(pack_figures([("tps", 12.0, "tokens/s", None)]), 3)
    assert first == (("tps", "ttft"), (10.0, 2.0), ("tokens/s", "ms"), (True, False))
    assert second[1] == (11.0, 3.0) and second[0] is first[0]
    assert other == (("tps",), (12.0,), ("tokens/s",), (None,))


@pytest.mark.parametrize(
    ("key", "command"),
    [('["bench"]', ()), ("not json", ()), ('["bench"]', ("--base", "until 2026-11-05",
                                                      "--target", "since 2026-11-05")),
     ('[["bench"], null, null, null, null, null, null, null, null, null, null, null]', ()),
     ('[{"a": 1}, null, null, null, null, null, null, null, null, null, null, null]',
      ("--base", "until 2026-11-05", "--target", "since 2026-11-05"))],
)  # fmt: skip
def test_a_damaged_setup_is_one_error_line(tmp_path: Path, key: str, command: tuple[str, ...]
                                           ) -> None:  # fmt: skip
    """A setup_key that is no list of the setup's values fails the comparison that reads it
    (history, or two windows) with one line, never a traceback or a comparison of wrong keys."""
    path = _two_runs(tmp_path)
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE scriptast_setups SET setup_key = ?", [key])
    done = results("compare", *command, "--results", str(path))
    assert done.returncode == 1
    assert done.stderr.startswith("error: setup ")
    assert done.stderr.endswith(" in the results store is damaged (not what scriptast keeps)\n")


def test_history_reads_each_setups_newest_runs_past_many_regressed_ones(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The newest run of a setup is held against its 5 newest earlier PASSED runs even with 30
    REGRESSED runs between (the index is read on past its first page); reading every run once
    (a store of very many setups) finds the same."""
    import scriptast.results.store.compare as compare

    for n in range(1, 7):  # the PASSED baseline, oldest
        store.append(a_run(n, finished=day(n), value=1000.0))
    for n in range(7, 37):
        when = day(7 + (n - 7) // 24, hour=(n - 7) % 24)
        store.append(a_run(n, finished=when, value=900.0, verdict="REGRESSED"))
    store.append(a_run(37, finished=day(20), value=700.0, gpus=8))  # a setup of its own
    indexed = compare_history(store, RunFilter(), tolerance=5.0)
    monkeypatch.setattr(compare, "PER_SETUP_AT_MOST", 0)
    scanned = compare_history(store, RunFilter(), tolerance=5.0)
    assert indexed == scanned
    (four, eight) = indexed
    assert four.target_run == 36 and four.baseline_runs == (6, 5, 4, 3, 2)
    assert four.verdict == "REGRESSED" and four.base is not None and four.base.value == 1000.0
    assert eight.target_run == 37 and eight.verdict.startswith("not judged: 0 earlier")


def test_compare_colours_only_its_own_verdict_words_on_a_terminal() -> None:
    from scriptast.cli.results_actions import _comparisons
    from scriptast.results.store.compare import Comparison, Side

    found = [
        Comparison(model="m\x1b[32m ok", gpu_type=None, gpu_count=2, figure="tps", unit="t/s",
                   base=Side(value=10.0, runs=3), target=Side(value=5.0, runs=3),
                   difference=-50.0, verdict="REGRESSED"),
        Comparison(model="m", gpu_type=None, gpu_count=2, figure="ttft", unit="ms",
                   verdict="not judged: no run of the base has it"),
    ]  # fmt: skip
    plain, painted = _comparisons(found), _comparisons(found, colour=True)
    assert "\x1b[" not in plain.replace("\\x1b", "")
    rows = painted.splitlines()
    assert rows[1].endswith("  \x1b[31mREGRESSED\x1b[0m")
    assert rows[2].endswith("no run of the base has it")
    assert painted.replace("\x1b[31m", "").replace("\x1b[0m", "") == plain


def test_the_columns_reader_keeps_a_bounded_number_of_name_lists(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A store whose every run names its figures differently costs a decode a run, not memory
    a run: past the bound, name lists are decoded and not kept, and still read right."""
    from scriptast.results.store import packed

    monkeypatch.setattr(packed, "MOST_SHARED", 3)
    reader = ColumnsReader()
    for n in range(10):
        got = reader.read(pack_figures([(f"figure{n}", float(n), "ms", True)]), n)
        assert got == ((f"figure{n}",), (float(n),), ("ms",), (True,))
    assert len(reader._shared) == 3
