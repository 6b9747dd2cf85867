"""Nothing a job prints or writes, and no reference file, turns a failure into PASSED: JUnit
counted from its test cases, a DTD refused in any encoding, numbers read as the tools print them
and never a non-finite one, a bad accuracy reference an error and INCONCLUSIVE, a figure printed
twice judged on its worse value. The jobs run on the real loopback Slurm; the stand-ins print the
hostile output, the judging is scriptast's own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scriptast.results.junit import JunitError, read_junit
from tests.postgres_server import Server
from tests.run_site import BENCH, RunSite, record
from tests.site import Site
from tests.test_run_measured import references

PYTEST = "pytest -v test_unmarked.py::test_plain"
EVAL = "trtllm-eval --model meta-llama/Llama-3.1-8B-Instruct --tp_size 1 gsm8k"
NO_FAILURES_ATTRIBUTE = (
    '<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="2" '
    'errors="0" skipped="0"><testcase classname="a" name="t_ok"/><testcase classname="a" '
    'name="t_bad"><failure message="AssertionError">trace</failure></testcase></testsuite>'
    "</testsuites>"
)
BOMB = (
    '<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE t [<!ENTITY a "aaaaaaaaaa">'
    '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><testsuite tests="1">'
    '<testcase classname="a" name="t">&b;</testcase></testsuite>'
)


def test_junit_counts_come_from_the_test_cases_not_the_suites_attributes() -> None:
    tests = read_junit(NO_FAILURES_ATTRIBUTE.encode(), "results.xml")
    assert (tests.tests, tests.failures, tests.errors, tests.skipped) == (2, 1, 0, 0)
    assert tests.notes == (
        "results.xml: its <testsuite> attributes say tests 2, failures 0, errors 0, skipped 0; "
        "its <testcase> elements hold tests 2, failures 1, errors 0, skipped 0, which are "
        "counted",
    )
    claimed_more = NO_FAILURES_ATTRIBUTE.replace('tests="2"', 'tests="9" failures="0"')
    assert read_junit(claimed_more.encode(), "r.xml").tests == 2


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-16-le", "utf-32"])
def test_a_dtd_is_refused_in_any_encoding(encoding: str) -> None:
    data = BOMB.replace("UTF-16", encoding.upper()).encode(encoding)
    if encoding == "utf-16-le":
        data = b"\xff\xfe" + data
    # expat refuses what it cannot decode; what it decodes, defusedxml refuses for its DTD
    said = "DTD or entities" if encoding in ("utf-8", "utf-16") else "not XML"
    with pytest.raises(JunitError, match=said):
        read_junit(data, "results.xml")


@pytest.mark.slurm
def test_a_junit_without_a_failures_attribute_is_failed(runs: RunSite) -> None:
    """The command exits 0 and the suite has no `failures` attribute; one test case failed."""
    work = runs.emit("no_failures_attr", workflow_type="pytest", test_cmd=PYTEST,
                     persistent_mode=False)  # fmt: skip
    done = runs.run("run", str(work), SHIM_PYTEST_RESULTS="passed=2",
                    SHIM_PYTEST_BROKEN_JUNIT=NO_FAILURES_ATTRIBUTE)  # fmt: skip
    assert done.returncode == 10, done.stdout + done.stderr
    found = record(work)
    assert (found["verdict"], found["exit_code"]) == ("FAILED", 0)
    assert [t["id"] for t in found["tests"]["failed"]] == ["a::t_bad"]
    assert any("which are counted" in note for note in found["notes"])


@pytest.mark.slurm
def test_a_utf16_junit_with_entities_is_refused_and_never_passed(
    runs: RunSite, tmp_path: Path
) -> None:
    bomb = tmp_path / "bomb.xml"
    bomb.write_bytes(BOMB.encode("utf-16"))
    work = runs.emit("utf16_bomb", workflow_type="pytest", test_cmd=PYTEST, persistent_mode=False)
    done = runs.run("run", str(work), SHIM_PYTEST_RESULTS="passed=2",
                    SHIM_PYTEST_JUNIT_FILE=str(bomb))  # fmt: skip
    assert done.returncode == 11, done.stdout + done.stderr
    found = record(work)
    assert found["verdict"] == "INCONCLUSIVE"
    assert "DTD or entities" in found["unread"][0]
    assert (work / "run.json").stat().st_size < 64 << 10


def _figure(found: dict[str, Any], name: str) -> dict[str, Any]:
    return next(f for f in found["figures"] if f["name"] == name)


@pytest.mark.slurm
def test_a_number_with_thousands_grouped_is_read_whole(runs: RunSite, tmp_path: Path) -> None:
    """trtllm-bench's overview printed as `5,530.7382`: read as 5530.7382, not 5, so a run
    within its reference is no false REGRESSED."""
    work = runs.emit("grouped", workflow_type="bench", bench_cmd=f"{BENCH} --tp 1",
                     persistent_mode=False, reference=str(references(tmp_path, 5500.0)))  # fmt: skip
    done = runs.run("run", str(work), SHIM_BENCH_TPS="5530.7382", SHIM_BENCH_GROUPED="1")
    assert "Total Output Throughput (tokens/sec):             5,530.7382" in done.stdout
    assert done.returncode == 0, done.stdout + done.stderr
    found = record(work)
    assert found["verdict"] == "PASSED"
    assert _figure(found, "output_throughput")["value"] == 5530.7382


@pytest.mark.slurm
@pytest.mark.parametrize("text", ["1.2.3", "nan", "1e999"])
def test_a_client_value_that_is_no_number_is_named_never_a_figure(runs: RunSite, text: str) -> None:
    """A perf-sanity client's log whose throughput reads `1.2.3` (or nan, or 1e999): no
    traceback, no figure; the record names the line and the verdict is INCONCLUSIVE."""
    from tests.cases import PERF_CONFIG

    work = runs.emit(f"perf_{text.replace('.', '_')}", workflow_type="perf_sanity",
                     perf_config_yaml=f"@repo/{PERF_CONFIG}",
                     perf_test_name="llama_8b_tp4")  # fmt: skip
    done = runs.run("run", str(work), SHIM_SERVING_TPS="2048",
                    SHIM_SERVING_SAYS=f"Output token throughput (tok/s):={text}")  # fmt: skip
    assert done.returncode == 11, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    found = record(work)
    assert found["verdict"] == "INCONCLUSIVE"
    client = "aggr-llama_8b_aggr-llama_8b_tp4 0.0"
    assert f"{client} token_throughput" not in [f["name"] for f in found["figures"]]
    [said] = [u for u in found["unread"] if "token_throughput reads" in u]
    assert said.endswith(f"reads {text!r}, which is not a finite number: not a figure")
    assert f"{client} token_throughput reads {text!r}" in done.stdout


@pytest.mark.slurm
def test_a_report_json_with_nan_and_infinity_leaves_a_readable_record(
    runs: RunSite, tmp_path: Path
) -> None:
    """json.dump writes NaN and Infinity; they are no figures, run.json stays readable by
    watch, results import and a new run, and the run is stored."""
    command = f"{BENCH} --tp 1 --report_json report.json"
    work = runs.emit("nan_report", workflow_type="bench", bench_cmd=command, persistent_mode=False)
    store = f"sqlite:///{tmp_path / 'r.db'}"
    keys = "avg_request_latency_ms,output_throughput_per_user_tok_s"
    done = runs.run("run", str(work), "--results", store, SHIM_BENCH_TPS="1234.5",
                    SHIM_BENCH_REPORT_NAN=keys)  # fmt: skip
    assert "NaN" in (runs.site.repo / "report.json").read_text()
    assert done.returncode == 11, done.stdout + done.stderr
    found = record(work)
    assert found["verdict"] == "INCONCLUSIVE"
    unread = " ".join(found["unread"])
    assert "performance.avg_request_latency_ms reads 'nan'" in unread
    assert "performance.output_throughput_per_user_tok_s reads 'inf'" in unread
    assert "null" not in (work / "run.json").read_text()
    watched = runs.run("watch", str(work))
    assert watched.returncode == 11, watched.stderr
    imported = runs.run("results", "import", str(work), "--results", store)
    assert imported.returncode == 0, imported.stderr
    listed = runs.run("results", "list", "--results", store)
    assert listed.returncode == 0 and "INCONCLUSIVE" in listed.stdout, listed.stderr
    again = runs.run("run", str(work), "--results", store, SHIM_BENCH_TPS="1234.5")
    assert again.returncode == 0, again.stdout + again.stderr


@pytest.mark.slurm
def test_a_score_printed_twice_is_judged_on_the_worse(runs: RunSite) -> None:
    """`gsm8k ... 41.00` and then `... 80.00`: REGRESSED on 41.00, both values in the record
    with their lines."""
    work = runs.emit("twice", workflow_type="eval", eval_cmd=EVAL, persistent_mode=False)
    first = "[12/04/2026-09:00:00] [TRT-LLM] [I] lm-eval gsm8k average accuracy: 41.00"
    done = runs.run("run", str(work), SHIM_EVAL_MODE="upstream", SHIM_EVAL_ACCURACY="80.00",
                    SHIM_PRINT_FIRST=first)  # fmt: skip
    assert done.returncode == 17, done.stdout + done.stderr
    found = record(work)
    assert found["verdict"] == "REGRESSED"
    score = _figure(found, "gsm8k accuracy")
    assert score["value"] == 41.0
    assert [p["value"] for p in score["printed"]] == [41.0, 80.0]
    lines = [p["source"]["line"] for p in score["printed"]]
    assert lines[0] < lines[1] and score["source"]["line"] == lines[0]
    assert "printed 2 times" in done.stdout


@pytest.mark.parametrize(
    ("text", "value"),
    [("5,530.7382", 5530.7382), ("512.3", 512.3), ("-1", -1.0), ("1.5e3", 1500.0),
     ("1,234", 1234.0), (".5", 0.5), ("1.2.3", None), ("nan", None), ("NaN", None),
     ("inf", None), ("-Infinity", None), ("1e999", None), ("12,34", None), ("1,2345.0", None),
     ("0x10", None), ("", None), ("5.0abc", None)],
)  # fmt: skip
def test_a_number_is_read_as_the_tool_prints_it(text: str, value: float | None) -> None:
    from scriptast.common.numbers import read_number

    assert read_number(text) == value


def test_a_figure_printed_again_keeps_each_value_and_is_judged_on_its_worse() -> None:
    from scriptast.contract.measured import Source
    from scriptast.results.figure_book import FigureBook

    worst, last = FigureBook("worst"), FigureBook("last")
    for book in (worst, last):
        for line, text in enumerate(["80.0", "41.0", "90.0"], 1):
            book.add("gsm8k accuracy", text, "%", Source(file="log", line=line))
        book.add("gsm8k accuracy", "1.2.3", "%", Source(file="log", line=4))
    [judged] = worst.figures()
    assert judged.value == 41.0 and judged.source.line == 2
    assert [(p.value, p.source.line) for p in judged.printed] == [(80.0, 1), (41.0, 2), (90.0, 3)]
    assert last.figures()[0].value == 90.0
    assert worst.unreadable == [
        "log:4: gsm8k accuracy reads '1.2.3', which is not a finite number: not a figure"
    ]


REFERENCES = "tests/integration/defs/accuracy/references/gsm8k.yaml"


@pytest.mark.slurm
@pytest.mark.parametrize(
    ("field", "line_said"),
    [("sigma: .inf", "sigma is inf, which is not a finite number of 0 or more"),
     ("alpha: 5", "alpha is 5, which is not a number between 0 and 1"),
     ("num_samples: 0", "num_samples is 0, which is not a whole number from 1 to 10,000,000"),
     ("num_samples: 2.5", "num_samples is 2.5, which is not a whole number"),
     ("accuracy: -.inf", "accuracy is -inf, which is not a finite number")],
)  # fmt: skip
def test_a_bad_accuracy_reference_is_an_error_and_inconclusive_never_passed(
    runs: RunSite, field: str, line_said: str
) -> None:
    """The checkout's own references/gsm8k.yaml with a bad number in the model's entry: a
    score far below the reference would pass a threshold of -inf; it is INCONCLUSIVE instead,
    with one error line naming the file, the line and the key."""
    path = runs.site.repo / REFERENCES
    original = path.read_text()
    key = field.split(":")[0]
    entry = "  - accuracy: 74.20\n"
    changed = (f"  - accuracy: 74.20\n    {field}\n" if key != "accuracy"
               else f"  - {field}\n")  # fmt: skip
    path.write_text(original.replace(entry, changed, 1))
    try:
        work = runs.emit(f"bad_{key}", workflow_type="eval", eval_cmd=EVAL, persistent_mode=False)
        done = runs.run("run", str(work), SHIM_EVAL_MODE="upstream", SHIM_EVAL_ACCURACY="41.00")
    finally:
        path.write_text(original)
    assert done.returncode == 11, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    found = record(work)
    assert found["verdict"] == "INCONCLUSIVE"
    line = 2 if key == "accuracy" else 3
    said = f"{path}:{line}: {line_said}"
    [error] = found["errors"]
    assert error.startswith(said), error
    assert [e for e in done.stderr.splitlines() if e.startswith("error:")] == [f"error: {error}"]


GOOD_EVAL = {"SHIM_EVAL_MODE": "upstream", "SHIM_EVAL_ACCURACY": "74.52"}


@pytest.mark.slurm
def test_a_locked_postgresql_table_never_hangs_a_run(runs: RunSite, postgres: Server) -> None:
    """Another session holds `LOCK TABLE` on the runs: the finished job's verdict is printed
    within the store's 10 s, not stored, and the record says how to import it."""
    import time

    import psycopg

    url = postgres.fresh()
    first = runs.emit("first", workflow_type="eval", eval_cmd=EVAL, persistent_mode=False)
    assert runs.run("run", str(first), "--results", url, **GOOD_EVAL).returncode == 0
    work = runs.emit("locked", workflow_type="eval", eval_cmd=EVAL, persistent_mode=False)
    with psycopg.connect(url) as holder:
        holder.execute("LOCK TABLE scriptast_runs IN ACCESS EXCLUSIVE MODE")
        started = time.monotonic()
        done = runs.run("run", str(work), "--results", url, **GOOD_EVAL)
        took = time.monotonic() - started
        holder.rollback()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASSED" in done.stdout
    (note,) = [n for n in record(work)["notes"] if n.startswith("not stored")]
    assert "lock timeout" in note or "statement timeout" in note, note
    assert f"scriptast results import {work}" in note
    assert took < 120, took  # the job itself takes seconds; the store waits 10 s at most


@pytest.mark.slurm
@pytest.mark.parametrize("form", ["query", "keyword_query"])
def test_a_store_password_is_never_printed_nor_written(
    runs: RunSite, postgres: Server, form: str
) -> None:
    secret = "s3cr3t-word"
    url = postgres.fresh()
    url += f"?password={secret}" if form == "query" else f"?sslmode=disable&password={secret}"
    work = runs.emit(f"pw_{form}", workflow_type="eval", eval_cmd=EVAL, persistent_mode=False)
    done = runs.run("run", str(work), "--results", url, **GOOD_EVAL)
    assert done.returncode == 0, done.stdout + done.stderr
    assert any(n.startswith("stored in the results store") for n in record(work)["notes"])
    assert secret not in done.stdout + done.stderr + (work / "run.json").read_text()
    listed = runs.run("results", "show", "1", "--results", url)
    assert secret not in listed.stdout + listed.stderr


@pytest.mark.parametrize(
    "url",
    ["postgresql+psycopg://alice:s3cr3t@db/x", "PostgreSQL://alice:s3cr3t@db/x",
     "mysql://alice:s3cr3t@db/x?password=s3cr3t"],
)  # fmt: skip
def test_an_unsupported_store_url_is_refused_without_its_password(
    site: Site, tmp_path: Path, url: str
) -> None:
    import subprocess

    from tests.run_site import SCRIPTAST

    done = subprocess.run([SCRIPTAST, "results", "list", "--results", url],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("error: results store ") and "s3cr3t" not in done.stderr
    assert len(done.stderr.splitlines()) == 1


@pytest.mark.slurm
def test_a_csv_export_never_writes_a_live_formula(runs: RunSite, tmp_path: Path) -> None:
    """A model named `=HYPERLINK(...)` (the command names it) is exported with a leading `'`;
    a negative number stays a number."""
    import csv
    import io

    model = '=HYPERLINK("http://x.invalid","ok")'
    command = f"trtllm-eval --model '{model}' --tp_size 1 gsm8k"
    work = runs.emit("formula", workflow_type="eval", eval_cmd=command, persistent_mode=False)
    store = f"sqlite:///{tmp_path / 'r.db'}"
    runs.run("run", str(work), "--results", store, **GOOD_EVAL)
    out = tmp_path / "runs.csv"
    done = runs.run("results", "export", "--format", "csv", "-o", str(out), "--results", store)
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert rows and rows[0]["model"] == "'" + model
    assert not any(cell.startswith(("=", "+", "@")) for row in rows for cell in row.values())


def test_the_same_value_printed_again_is_one_figure() -> None:
    from scriptast.contract.measured import Source
    from scriptast.results.figure_book import FigureBook

    book = FigureBook("last")
    for line in (20, 54):
        book.add("output_throughput", "512.3000", "tokens/s", Source(file="log", line=line))
    [figure] = book.figures()
    assert figure.printed == () and figure.source.line == 20


@pytest.mark.slurm
def test_sigterm_while_storing_keeps_the_verdict(runs: RunSite, postgres: Server) -> None:
    """The job is over and judged; SIGTERM arrives while the store waits on a lock: the verdict
    is printed and run exits with it, never 'what it had submitted was cancelled'."""
    import signal
    import time

    import psycopg

    url = postgres.fresh()
    first = runs.emit("first_t", workflow_type="eval", eval_cmd=EVAL, persistent_mode=False)
    assert runs.run("run", str(first), "--results", url, **GOOD_EVAL).returncode == 0
    work = runs.emit("term", workflow_type="eval", eval_cmd=EVAL, persistent_mode=False)
    with psycopg.connect(url) as holder:
        holder.execute("LOCK TABLE scriptast_runs IN ACCESS EXCLUSIVE MODE")
        process = runs.start("run", str(work), "--results", url, **GOOD_EVAL)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            text = (work / "run.json").read_text() if (work / "run.json").exists() else ""
            if '"verdict"' in text:
                break
            time.sleep(0.1)
        time.sleep(1)  # it is waiting on the lock now
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
        holder.rollback()
    assert process.returncode == 0, out + err
    assert "PASSED" in out and "cancelled" not in err
    assert any("not stored: interrupted while storing" in n for n in record(work)["notes"])
