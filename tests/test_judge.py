"""`scriptast judge`: output a job already wrote, judged as `run` judges it. The files are
written by the stand-ins in upstream's formats (tests/shims/upstream.py): a trtllm-bench log and
its --report_json, a trtllm-eval log, a CI stage's console log and the JUnit report pytest
wrote; each verdict and exit code is the one `run` gives for the same output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.shim_recorder import Shims
from tests.site import Site

SCRIPTAST = str(Path(sys.executable).parent / "scriptast")
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"


def tool(shims: Shims, argv: list[str], log: Path, cwd: Path, **env: str) -> None:
    """Run a stand-in as a job would, its output into `log`."""
    environment = {**os.environ, "SHIM_LOG": str(shims.log), **env}
    with open(log, "ab") as out:
        subprocess.run([str(shims.bin / argv[0]), *argv[1:]], stdout=out,
                       stderr=subprocess.STDOUT, env=environment, cwd=cwd, check=False)  # fmt: skip


def judge(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SCRIPTAST, "judge", *args], capture_output=True, text=True,
                          cwd=cwd, stdin=subprocess.DEVNULL)  # fmt: skip


def references(tmp_path: Path, value: float) -> Path:
    path = tmp_path / "references.toml"
    path.write_text(
        f'["{LLAMA}".batch]\noutput_throughput = [{value}, -0.10, 0.50, "tokens/s"]\n'
        f'["{LLAMA}"."*"]\noutput_throughput = [{value}, -0.10, 0.50, "tokens/s"]\n'
    )
    return path


@pytest.mark.parametrize(
    ("tps", "code", "verdict"), [("4800.5", 0, "PASSED"), ("4000", 17, "REGRESSED")]
)
def test_a_bench_log_and_its_report_are_judged_as_run_judges_them(
    tmp_path: Path, tps: str, code: int, verdict: str
) -> None:
    shims = Shims(tmp_path / "shims")
    log = tmp_path / "bench.log"
    tool(shims, ["trtllm-bench", "--model", LLAMA, "throughput", "--dataset", "d.json",
                 "--report_json", "report.json"], log, tmp_path, SHIM_BENCH_TPS=tps)  # fmt: skip
    done = judge(str(log), "--report-json", str(tmp_path / "report.json"), "--reference",
                 str(references(tmp_path, 5000.0)))  # fmt: skip
    assert done.returncode == code, done.stdout + done.stderr
    assert done.stdout.startswith(f"{verdict}  ")
    assert "workflow bench: inferred from the files" in done.stdout
    assert f"model {LLAMA}: inferred from the log" in done.stdout
    assert f"output_throughput {float(tps):.2f} tokens/s (from 4500.00 to 7500.00" in done.stdout
    record = json.loads(
        judge(
            str(log),
            "--report-json",
            str(tmp_path / "report.json"),
            "--reference",
            str(references(tmp_path, 5000.0)),
            "--json",
        ).stdout
    )
    assert (
        record["verdict"] == verdict and record["final_state_source"] == "files (scriptast judge)"
    )


@pytest.mark.parametrize(
    ("score", "code", "verdict"), [("74.52", 0, "PASSED"), ("41.00", 17, "REGRESSED")]
)
def test_an_eval_log_is_judged_against_the_checkouts_references(
    site: Site, tmp_path: Path, score: str, code: int, verdict: str
) -> None:
    shims = Shims(tmp_path / "shims")
    log = tmp_path / "eval.log"
    log.write_text(f"+ trtllm-eval --model {LLAMA} --tp_size 1 gsm8k\n")
    tool(shims, ["trtllm-eval", "--model", LLAMA, "gsm8k"], log, tmp_path,
         SHIM_EVAL_MODE="upstream", SHIM_EVAL_ACCURACY=score)  # fmt: skip
    done = judge(str(log), "--repo-root", str(site.repo))
    assert done.returncode == code, done.stdout + done.stderr
    assert done.stdout.startswith(f"{verdict}  ")
    assert "workflow eval: inferred" in done.stdout and f"model {LLAMA}: inferred" in done.stdout
    assert f"gsm8k accuracy {score} (threshold 71.00, reference 74.20" in done.stdout


def test_a_ci_console_log_and_its_junit_name_the_failed_tests(tmp_path: Path) -> None:
    shims = Shims(tmp_path / "shims")
    log = tmp_path / "console.log"
    tool(shims, ["pytest", "-v", "--junitxml", str(tmp_path / "results.xml"), "accuracy"], log,
         tmp_path, SHIM_PYTEST_RESULTS="passed=8,failed=2")  # fmt: skip
    done = judge(str(log), "--junit", str(tmp_path / "results.xml"))
    assert done.returncode == 10, done.stdout + done.stderr
    assert done.stdout.startswith("FAILED  ")
    assert "tests: 10 run, 8 passed, 2 failed" in done.stdout
    assert "FAILED accuracy/test_llm_api_pytorch.py::test_case[0]: AssertionError" in done.stdout
    passing = tmp_path / "ok"
    passing.mkdir()
    tool(shims, ["pytest", "--junitxml", str(passing / "results.xml")], passing / "console.log",
         passing, SHIM_PYTEST_RESULTS="passed=3")  # fmt: skip
    ok = judge(str(passing / "console.log"), "--junit", str(passing / "results.xml"))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    none = judge(str(passing / "console.log"), "--workflow", "pytest")
    assert none.returncode == 11 and "the JUnit report (give --junit FILE)" in none.stdout


def test_judged_output_is_stored_marked_as_judged_from_files(tmp_path: Path) -> None:
    shims = Shims(tmp_path / "shims")
    log = tmp_path / "bench.log"
    tool(shims, ["trtllm-bench", "--model", LLAMA, "throughput", "--dataset", "d.json"], log,
         tmp_path, SHIM_BENCH_TPS="4800.5")  # fmt: skip
    store = f"sqlite:///{tmp_path / 'r.db'}"
    done = judge(str(log), "--store", "--results", store)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "judged from files" in done.stdout and "stored in the results store" in done.stdout
    listed = subprocess.run([SCRIPTAST, "results", "list", "--results", store],
                            capture_output=True, text=True)  # fmt: skip
    assert listed.returncode == 0 and LLAMA in listed.stdout and "PASSED" in listed.stdout


@pytest.mark.parametrize(
    ("args", "said"),
    [([], "error: give the job's log (and --junit or --report-json if it wrote one)"),
     (["/nonexistent/log"], "error: cannot read log /nonexistent/log: No such file or directory"),
     (["/dev/null", "--workflow", "train"], "error: --workflow train: give one of bench, eval, "
      "pytest, perf_sanity")],
)  # fmt: skip
def test_bad_input_is_one_error_line(args: list[str], said: str) -> None:
    done = judge(*args)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [said]


def test_a_log_with_nothing_measured_and_no_exit_line_is_never_passed(tmp_path: Path) -> None:
    log = tmp_path / "some.log"
    log.write_text("starting\nall good, I promise\n")
    done = judge(str(log))
    assert done.returncode == 11, done.stdout + done.stderr
    assert done.stdout.startswith("INCONCLUSIVE  ")


def test_a_job_spec_gives_everything_as_run_would_have_it(site: Site, tmp_path: Path) -> None:
    """With --job-spec, the job's own measures (its model, its tasks) and patterns are used,
    nothing is inferred."""
    from scriptast.pipeline.emit_job import generate, write_outputs

    command = f"trtllm-eval --model {LLAMA} --tp_size 1 gsm8k"
    output = generate(site.request(workflow_type="eval", eval_cmd=command, persistent_mode=False),
                      home=str(site.home))  # fmt: skip
    write_outputs(output)
    spec = Path(output.job.work_dir) / "job_spec.json"
    shims = Shims(tmp_path / "shims")
    log = tmp_path / "eval.log"
    tool(shims, ["trtllm-eval", "--model", LLAMA, "gsm8k"], log, tmp_path,
         SHIM_EVAL_MODE="upstream", SHIM_EVAL_ACCURACY="41.00")  # fmt: skip
    done = judge(str(log), "--job-spec", str(spec))
    assert done.returncode == 17, done.stdout + done.stderr
    assert "inferred" not in done.stdout
    assert "gsm8k accuracy 41.00 (threshold 71.00, reference 74.20" in done.stdout


@pytest.mark.parametrize(
    ("value", "code", "verdict"), [("1.950000", 0, "PASSED"), ("1.900000", 17, "REGRESSED")]
)
def test_an_acceptance_length_is_held_against_upstreams_min_al(
    tmp_path: Path, value: str, code: int, verdict: str
) -> None:
    """accuracy_core.py prints `[AL] <test> acceptance_length = X` and requires X >= min_al in
    references/acceptance_length.yaml (upstream's file: TestQwen3_4B::test_eagle3's min_al is
    1.9267)."""
    shims = Shims(tmp_path / "shims")
    log = tmp_path / "console.log"
    log.write_text(f"[AL] TestQwen3_4B::test_eagle3 acceptance_length = {value}\n"
                   "[AL] TestNotThere::test_x acceptance_length = 1.000000\n")  # fmt: skip
    tool(shims, ["pytest", "--junitxml", str(tmp_path / "results.xml")], log, tmp_path,
         SHIM_PYTEST_RESULTS="passed=2")  # fmt: skip
    repo = Path(__file__).resolve().parent / "fixtures/upstream_references"
    done = judge(str(log), "--junit", str(tmp_path / "results.xml"), "--repo-root", str(repo),
                 "--json")  # fmt: skip
    assert done.returncode == code, done.stdout + done.stderr
    record = json.loads(done.stdout)
    assert record["verdict"] == verdict
    figures = {f["name"]: f for f in record["figures"]}
    checked = figures["TestQwen3_4B::test_eagle3 acceptance_length"]["check"]
    assert checked["lower"] == pytest.approx(1.926694) and checked["reference"] == 2.028099
    assert "has no entry for TestNotThere::test_x" in figures[
        "TestNotThere::test_x acceptance_length"]["unchecked"]  # fmt: skip


def _judged_on_a_terminal(tmp_path: Path, command: str, **env: str) -> str:
    """What tmux's pane shows of `command` (escape sequences kept: capture-pane -e)."""
    import shutil
    import time

    tmux = shutil.which("tmux")
    assert tmux is not None, "tmux is installed by tests/slurm/cluster.sh install-deps"
    socket = str(tmp_path / f"tmux-{len(list(tmp_path.glob('tmux-*')))}.sock")
    kept = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "PYTHONPATH")}
    subprocess.run([tmux, "-S", socket, "new-session", "-d", "-x", "220", "-y", "50", "env",
                    "-u", "NO_COLOR", *(f"{k}={v}" for k, v in {**kept, "TERM": "xterm",
                    **env}.items()), "bash", "-c", f"{command}; echo DONE; sleep 30"],
                   check=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        screen = ""
        while time.monotonic() < deadline and "DONE" not in screen:
            time.sleep(0.2)
            screen = subprocess.run([tmux, "-S", socket, "capture-pane", "-p", "-e"],
                                    capture_output=True, text=True).stdout  # fmt: skip
    finally:
        subprocess.run([tmux, "-S", socket, "kill-server"], capture_output=True)
    assert "DONE" in screen, screen
    return screen


def test_verdicts_and_margins_are_coloured_on_a_terminal_only(tmp_path: Path) -> None:
    """On a terminal the verdict, the margin and its word are coloured; with NO_COLOR, or
    piped, the same text is plain."""
    shims = Shims(tmp_path / "shims")
    log = tmp_path / "bench.log"
    tool(shims, ["trtllm-bench", "--model", LLAMA, "throughput", "--dataset", "d.json",
                 "--report_json", "report.json"], log, tmp_path, SHIM_BENCH_TPS="4000")  # fmt: skip
    command = (f"{SCRIPTAST} judge {log} --report-json {tmp_path / 'report.json'} --reference "
               f"{references(tmp_path, 5000.0)}")  # fmt: skip
    coloured = _judged_on_a_terminal(tmp_path, command)
    assert "\x1b[1m\x1b[31mREGRESSED\x1b[0m" in coloured  # bold red, as tmux spells it
    assert "\x1b[31m" in coloured.split("output_throughput")[1].split("\n")[0]
    plain = _judged_on_a_terminal(tmp_path, command, NO_COLOR="1")
    assert "REGRESSED  " in plain
    assert "\x1b[31m" not in plain and "\x1b[1;31m" not in plain
    piped = judge(str(log), "--report-json", str(tmp_path / "report.json"), "--reference",
                  str(references(tmp_path, 5000.0)))  # fmt: skip
    assert "\x1b" not in piped.stdout


def test_nothing_a_job_printed_is_coloured_or_moves_the_cursor() -> None:
    """Colour goes on scriptast's own words after the record is escaped: a log line, a failure
    pattern hit or a figure name carrying escape sequences is shown escaped either way."""
    from scriptast.contract.measured import Check, Figure, Source
    from scriptast.contract.run_record import RECORD_VERSION, RunRecord, Verdict
    from scriptast.executor.report import summary

    hostile = "\x1b[32mPASSED\x1b[0m"
    figure = Figure(name=f"tps{hostile}", value=4000.0, unit="tokens/s",
                    source=Source(file="bench.log", line=3),
                    check=Check(reference=5000.0, lower=4500.0, upper=None, margin=-10.0,
                                ok=False, origin="references.toml"))  # fmt: skip
    record = RunRecord(version=RECORD_VERSION, work_dir="/w", script="/w/job.slurm",
                       submitted_at="2026-12-07T00:00:00Z", submit_command=("sbatch",),
                       out_log="/w/job.out", verdict=Verdict.REGRESSED, figures=(figure,),
                       last_lines=(hostile,))  # fmt: skip
    plain, painted = summary(record), summary(record, colour=True)
    assert "\x1b" not in plain and plain.count("\\x1b[32mPASSED\\x1b[0m") == 2
    assert painted.startswith("\x1b[1;31mREGRESSED\x1b[0m  /w\n")
    assert "margin \x1b[31m-10.00\x1b[0m): \x1b[31mREGRESSED\x1b[0m\n" in painted
    assert painted.count("\\x1b[32mPASSED\\x1b[0m") == 2  # the job's text, still escaped
    assert painted.replace("\x1b[1;31m", "").replace("\x1b[31m", "").replace("\x1b[0m",
                                                                             "") == plain  # fmt: skip
