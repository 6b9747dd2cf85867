"""What a finished job measured: trtllm-bench's and trtllm-eval's lines read as upstream prints
them, JUnit XML, the repository's accuracy references and a team's references file, and the
verdict and the words they give."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from scriptast.contract.axes import ExecutionScenario
from scriptast.contract.measured import Check, FailedTest, Figure, Measures, PytestResults, Source
from scriptast.contract.run_record import RunRecord, Verdict
from scriptast.errors import InputError
from scriptast.executor.log_verdict import LogScanner, judge
from scriptast.executor.report import figure_text, measured_lines, table
from scriptast.results.accuracy import TASKS, accuracy_check, threshold
from scriptast.results.bench_report import BenchLines, report_figures
from scriptast.results.eval_lines import EvalLines
from scriptast.results.judging import Measured, expected_figures, measure
from scriptast.results.junit import JunitError, read_junit
from scriptast.results.reference_file import Where, choose, read_references
from tests.site import FIXTURES

SHIMS = Path(__file__).resolve().parent / "shims"
REPO = str(FIXTURES / "trtllm")
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"


def upstream(program: str, *argv: str, **env: str) -> str:
    """What the stand-in prints for `program`, in upstream's format."""
    code = (f"import sys; sys.path.insert(0, {str(SHIMS)!r}); import upstream; "
            f"sys.exit(upstream.speak({program!r}, sys.argv[1:]))")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                          env={**os.environ, **env}, check=True)  # fmt: skip
    return done.stdout


def read(reader: BenchLines | EvalLines, text: str) -> dict[str, Figure]:
    for number, line in enumerate(text.splitlines(), 1):
        reader.line(line, "job.out", number)
    return {f.name: f for f in reader.figures()}


def test_every_line_of_the_performance_overview_is_a_figure() -> None:
    found = read(BenchLines(), upstream("trtllm-bench", "--tp", "2", SHIM_BENCH_TPS="5120"))
    assert found["output_throughput"].value == 5120.0
    assert found["output_throughput"].unit == "tokens/s"
    assert found["per_gpu_output_throughput"].value == 2560.0
    assert found["request_throughput"].value == 40.0
    assert found["total_token_throughput"].value == 10240.0
    assert found["total_latency"].higher_is_better is False
    assert found["avg_request_latency"].value == 20345.6789
    assert found["per_user_output_throughput"].value == 80.0
    assert found["request_latency_p99"].value == 26000.0
    assert found["request_latency_minimum"].value == 15000.0
    line = found["output_throughput"].source.line
    assert (
        line is not None
        and "Total Output Throughput"
        in upstream("trtllm-bench", SHIM_BENCH_TPS="5120").splitlines()[line - 1]
    )


def test_the_streaming_lines_and_their_breakdowns_are_figures() -> None:
    text = """Average time-to-first-token [TTFT] (ms):          45.1234
Average time-per-output-token [TPOT] (ms):        7.5000
Per User Output Speed (tps/user):                 133.3333
[TPOT] P99    : 9.8765
[TTFT] MINIMUM: 12.0000
[GTPS] AVERAGE: 130.0000"""
    found = read(BenchLines(), text)
    assert (found["avg_ttft"].value, found["avg_tpot"].value) == (45.1234, 7.5)
    assert found["per_user_output_speed"].value == 133.3333
    assert found["tpot_p99"].value == 9.8765 and found["ttft_minimum"].value == 12.0
    assert found["gtps_average"].higher_is_better is True


def test_the_old_stand_in_line_is_no_figure() -> None:
    """`Throughput: 512.3 token/s` is not what trtllm-bench prints."""
    assert read(BenchLines(), "Throughput: 512.3 token/s") == {}


def test_report_json_holds_the_same_figures(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    upstream("trtllm-bench", "--report_json", str(report), SHIM_BENCH_TPS="300")
    found = {f.name: f for f in report_figures(report.read_bytes(), str(report))[0]}
    assert found["output_throughput"].value == 300.0
    assert found["output_throughput"].source == Source(file=str(report))
    with pytest.raises(ValueError, match="not JSON"):
        report_figures(b"{", "r.json")
    with pytest.raises(ValueError, match="no `performance` section"):
        report_figures(b'{"engine": {}}', "r.json")


@pytest.mark.parametrize(
    ("line", "name", "value", "samples"),
    [
        ("[I] MMLU weighted average accuracy: 68.20 (4104)", "mmlu accuracy", 68.2, 4104),
        ("[I] lm-eval gsm8k average accuracy: 73.88", "gsm8k accuracy", 73.88, None),
        ("lm-eval gpqa_diamond_cot_zeroshot_aa average accuracy: 51.01", "gpqa_diamond accuracy",
         51.01, None),
        ("lm-eval mmmu_val average accuracy: 50.11", "mmmu accuracy", 50.11, None),
        ("GPQA average accuracy: 40.40 (198)", "gpqa accuracy", 40.4, 198),
        ("JSON Mode Eval accuracy: 75.00 (100)", "json_mode_eval accuracy", 75.0, 100),
        ("JSON Mode Eval grammar accuracy: 99.00 (100)", "json_mode_eval grammar accuracy",
         99.0, 100),
        ("Overall Accuracy: 42.33% (91/215)", "longbench_v2 accuracy", 42.33, 215),
        ("audio ASR WER: 7.25", "voxpopuli wer", 7.25, None),
        ("CoVoST2 [en_de] corpus BLEU = 25.10", "covost2_en_de bleu", 25.1, None),
    ],
)  # fmt: skip
def test_each_evaluator_line_is_its_score(
    line: str, name: str, value: float, samples: int | None
) -> None:
    found = read(EvalLines(), f"[12/04/2026-10:00:00] [TRT-LLM] {line}")
    assert list(found) == [name]
    assert (found[name].value, found[name].samples) == (value, samples)


def test_rouge_is_read_for_beam_zero_only() -> None:
    text = (
        "Beam 1 rouge scores:\n  rouge1: 10.0\nBeam 0 rouge scores:\n  rouge1: 29.5\n  rouge2: 9.1"
    )
    found = read(EvalLines(), text)
    assert (found["cnn_dailymail rouge1"].value, found["cnn_dailymail rouge2"].value) == (29.5, 9.1)


def scanned(reader: EvalLines, text: str, chunk: int = 16 * 1024) -> dict[str, float]:
    """What the reader takes from a log fed to the scanner as `run` feeds it, `chunk` bytes at
    a time (the reader then sees blocks, and looks only at those holding its words)."""
    scanner = LogScanner("job.out", (), (), reader=reader)
    data = text.encode()
    for offset in range(0, len(data), chunk):
        scanner.feed(data[offset : offset + chunk])
    scanner.close()
    return {f.name: f.value for f in reader.figures()}


NAMED_ONLY = (
    "Beam 0 rouge scores:\n  rouge1: 29.5\n"
    "[TRT-LLM] [I] audio ASR WER: 7.25\n"
    "[TRT-LLM] [I] CoVoST2 [en_de] corpus BLEU = 25.10 (sys_len=1, ref_len=1, precisions=[])\n"
)


def test_the_rouge_wer_and_bleu_lines_are_read_when_their_task_is_named() -> None:
    named = EvalLines(("cnn_dailymail", "voxpopuli", "covost2_en_de"))
    assert scanned(named, NAMED_ONLY) == {
        "cnn_dailymail rouge1": 29.5, "voxpopuli wer": 7.25, "covost2_en_de bleu": 25.1}  # fmt: skip
    # a command that names no task is watched for accuracy lines and NeMo-Skills' results only:
    # those three tasks' commands always name them
    assert scanned(EvalLines(), NAMED_ONLY) == {}


@pytest.mark.parametrize(
    ("message", "name", "value"),
    [
        ("NeMo-Skills gpqa results:\n  accuracy        = 71.21%  (141/198)\n"
         "  no_answer       = 1.01%  (2/198)", "gpqa accuracy", 71.21),
        ("NeMo-Skills scicode results (65 problems, 288 subtasks):\n"
         "  problem_accuracy = 7.69%  (5/65)\n  subtask_accuracy = 30.21%  (87/288)",
         "scicode accuracy", 7.69),
        ("NeMo-Skills hle (hle-aa) results (judge=self, 50 samples):\n"
         "  accuracy = 12.00%  (6/50)", "hle accuracy", 12.0),
        ("NeMo-Skills arena-hard results (judge=self, 20 questions, 40 games):\n"
         "  win_rate_vs_baseline = 61.50%  (95% CI +3.10/-2.90; baseline gpt-4-0314 = 50)\n"
         "  invalid_judgements   = 0", "arena-hard win_rate_vs_baseline", 61.5),
        ("NeMo-Skills ifbench results (294 samples):\n"
         "  strict  prompt-level=40.14%  instruction-level=45.10%\n"
         "  loose   prompt-level=44.22%  instruction-level=48.50%",
         "ifbench strict prompt-level accuracy", 40.14),
    ],
)  # fmt: skip
def test_each_nemo_skills_results_message_is_its_score(
    message: str, name: str, value: float
) -> None:
    """nemo_skills_eval.py logs one multi-line message a benchmark; the score is on the line
    its evaluator returns. Read with no task named (its commands are not task words), and
    with the message cut between the header and the score by the chunk size."""
    log = "x" * 100 + "\n" + f"[12/06/2026-10:00:00] [TRT-LLM] [I] {message}\n"
    assert scanned(EvalLines(), log) == {name: value}
    cut = log.index("\n", 102) + 1  # the header's line ends the first chunk
    assert scanned(EvalLines(), log, chunk=cut) == {name: value}


def test_the_stand_ins_eval_lines_are_read() -> None:
    said = upstream("trtllm-eval", "--model", LLAMA, "mmlu", "gsm8k", SHIM_EVAL_MODE="upstream",
                    SHIM_EVAL_ACCURACY="70.5")  # fmt: skip
    found = read(EvalLines(), said)
    assert {n: f.value for n, f in found.items()} == {"mmlu accuracy": 70.5, "gsm8k accuracy": 70.5}


JUNIT = b"""<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="1"
failures="1" skipped="1" tests="4" time="2.5"><testcase classname="a.b" name="test_ok" time="0.1"/>
<testcase classname="a.b" name="test_bad" time="1.0"><failure message="assert 1 == 2&#10;more">
trace</failure></testcase><testcase classname="a.b" name="test_err"><error message="">
RuntimeError: boom
second line</error></testcase><testcase classname="a.b" name="test_skip"><skipped message="x"/>
</testcase></testsuite></testsuites>"""


def test_junit_counts_and_failed_tests_with_their_first_message_line() -> None:
    tests = read_junit(JUNIT, "results.xml")
    assert (tests.tests, tests.failures, tests.errors, tests.skipped, tests.passed) == (
        4,
        1,
        1,
        1,
        1,
    )
    assert tests.seconds == 2.5
    assert tests.failed == (
        FailedTest(id="a.b::test_bad", outcome="failed", message="assert 1 == 2", seconds=1.0),
        FailedTest(id="a.b::test_err", outcome="error", message="RuntimeError: boom"),
    )


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"this is not <xml", "not XML"),
        (b"<html><body/></html>", "its root is <html>"),
        (b'<!DOCTYPE t [<!ENTITY x "y">]><testsuite tests="&x;"/>', "DTD or entities"),
    ],
)
def test_a_junit_file_that_is_not_a_report_is_refused(data: bytes, why: str) -> None:
    with pytest.raises(JunitError, match=why):
        read_junit(data, "results.xml")


def test_upstreams_gsm8k_threshold_for_llama_3_1_8b() -> None:
    """accuracy_core.py: 74.20 + z(0.05) * sqrt(2 * 50^2 / 1319); WER's turns the other way."""
    assert threshold(74.20, 0.05, 50, 1319, True) == pytest.approx(70.997, abs=0.001)
    assert threshold(10.0, 0.05, 50, 32, False) == pytest.approx(30.56, abs=0.01)
    assert TASKS["cnn_dailymail"].alpha == 0.002 and TASKS["mmlu"].num_samples == 4096


def score(name: str, value: float, samples: int | None = None) -> Figure:
    return Figure(name=name, value=value, unit="%", source=Source(file="job.out", line=3),
                  higher_is_better=True, samples=samples)  # fmt: skip


def measures(model: str | None = LLAMA, **changes: object) -> Measures:
    return msgspec.structs.replace(
        Measures(kind="eval", model=model, tasks=("gsm8k",), quantization_known=True), **changes
    )


def test_the_models_own_entry_gives_the_threshold() -> None:
    checked = accuracy_check(score("gsm8k accuracy", 72.0), measures(), REPO).figure
    assert checked.check is not None
    assert (checked.check.reference, checked.check.ok) == (74.2, True)
    assert checked.check.lower == pytest.approx(70.9975, abs=1e-4)
    assert checked.check.margin == pytest.approx(1.0025, abs=1e-4)
    assert "(n=1319)" in checked.check.origin


def test_a_local_path_finds_the_model_by_the_hf_id_it_ends_in_and_fp8_its_entry() -> None:
    fp8 = measures("/models/meta-llama/Llama-3.1-8B-Instruct", quant_algo="FP8",
                   kv_cache_quant_algo="FP8")  # fmt: skip
    checked = accuracy_check(score("gsm8k accuracy", 72.0), fp8, REPO).figure
    assert checked.check is not None and checked.check.reference == 72.85
    assert "meta-llama/Llama-3.1-8B-Instruct (the HF id" in checked.check.origin


def test_the_threshold_uses_the_references_sample_count_never_the_logs() -> None:
    """MMLU at 66.80 over the 14042 samples the log counts is judged with upstream's n = 4096
    (threshold 66.35 for 68.17), not n = 14042 (67.19); the record says the counts differ."""
    checked = accuracy_check(score("mmlu accuracy", 66.80, samples=14042), measures(), REPO)
    assert checked.figure.check is not None
    assert checked.figure.check.lower == pytest.approx(threshold(68.17, 0.05, 50, 4096, True))
    assert checked.figure.check.lower == pytest.approx(66.353, abs=1e-3)
    assert checked.figure.check.ok is True and "(n=4096)" in checked.figure.check.origin
    assert checked.note == (
        "mmlu accuracy: this run evaluated 14042 samples; the reference was measured on 4096, "
        "which the threshold uses, as upstream's does"
    )


@pytest.mark.parametrize(
    ("model", "changes", "why"),
    [
        ("meta-llama/Llama-2-7b-hf", {}, "has no entry for model meta-llama/Llama-2-7b-hf"),
        ("someorg/Llama-3.1-8B-Instruct", {}, "no entry for model someorg/Llama-3.1-8B-Instruct "
         "(looked up by its exact name"),
        ("/models/Llama-3.1-8B-Instruct", {}, "no entry for model /models/Llama-3.1-8B-Instruct"),
        (LLAMA, {"quant_algo": "NVFP4"}, "no entry for meta-llama/Llama-3.1-8B-Instruct with NVFP4"),
        (None, {}, "names no --model"),
    ],
)  # fmt: skip
def test_a_reference_that_does_not_apply_is_never_used(
    model: str | None, changes: dict[str, object], why: str
) -> None:
    checked = accuracy_check(score("gsm8k accuracy", 10.0), measures(model, **changes), REPO).figure
    assert checked.check is None and checked.unchecked is not None and why in checked.unchecked


def test_a_task_the_repository_has_no_references_for_says_so(tmp_path: Path) -> None:
    checked = accuracy_check(score("gpqa_diamond accuracy", 50.0), measures(), REPO).figure
    assert checked.unchecked is not None and "no references file" in checked.unchecked


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


TEAM_TOML = """
["meta-llama/Llama-3.1-8B-Instruct".batch]
output_throughput = [5000, -0.1, 0.5, "tokens/s"]
["meta-llama/Llama-3.1-8B-Instruct".H100]
output_throughput = {value = 6000, lower = -0.05}
["*"."*"]
avg_ttft = [50, 0, 0.2, "ms"]
"""


def test_a_references_file_chooses_by_model_then_partition_then_gpu(tmp_path: Path) -> None:
    table_ = read_references(write(tmp_path, "refs.toml", TEAM_TOML))
    on_batch = choose(table_, Where(LLAMA, "batch", "H100"), "output_throughput")
    assert not isinstance(on_batch, str) and on_batch[0].value == 5000
    on_h100 = choose(
        table_, Where("/models/Llama-3.1-8B-Instruct", "gpu", "H100"), "output_throughput"
    )
    assert not isinstance(on_h100, str) and on_h100[0].bounds() == (5700.0, None)
    assert not isinstance(choose(table_, Where("other", None, None), "avg_ttft"), str)
    elsewhere = choose(table_, Where("Qwen/Qwen3-8B", "batch", "A100"), "output_throughput")
    assert elsewhere == (f"{tmp_path}/refs.toml has no output_throughput for model Qwen/Qwen3-8B "
                         "on batch or A100 or *")  # fmt: skip


def test_yaml_references_read_the_same(tmp_path: Path) -> None:
    path = write(
        tmp_path, "refs.yaml", f"{LLAMA}:\n  batch:\n    output_throughput: [5000, -0.1, null]\n"
    )
    found = read_references(path).table[LLAMA]["batch"]["output_throughput"]
    assert (found.value, found.lower, found.upper) == (5000.0, -0.1, None)


@pytest.mark.parametrize(
    ("name", "text", "why"),
    [
        ("r.toml", "[a\n", "is not valid TOML"),
        ("r.yaml", "a: [1\n", "is not valid YAML"),
        ("r.yaml", "m:\n  p:\n    f: {lower: -0.1}\n", "m / p / f has no value"),
        ("r.yaml", "m:\n  p:\n    f: [1, null, null]\n", "neither a lower nor an upper"),
        ("r.yaml", "m:\n  p:\n    f: [1, 0.1, null]\n", "lower must be a fraction from -1 to 0"),
        ("r.yaml", "m:\n  p:\n    f: [1, -0.1, -1]\n", "upper must be a fraction of 0 or more"),
        ("r.yaml", "m:\n  p:\n    f: {value: 1, lower: -1, typo: 2}\n", r"unknown keys \['typo'\]"),
        ("r.yaml", "m: [1, 2]\n", "references file .*: m must be a mapping"),
        ("r.yaml", "", "must map models to places to figures"),
    ],
)
def test_a_bad_references_file_is_one_error(tmp_path: Path, name: str, text: str, why: str) -> None:
    with pytest.raises(InputError, match=why):
        read_references(write(tmp_path, name, text))


def test_measure_checks_marks_the_headline_and_names_what_is_missing(tmp_path: Path) -> None:
    eval_measures = measures(tasks=("gsm8k", "mmlu"))
    found = measure(eval_measures, [score("gsm8k accuracy", 41.0)], _no_file, repo_root=REPO,
                    where=Where(LLAMA, "batch", None), references=None)  # fmt: skip
    assert found.missing == ["mmlu accuracy"]
    (gsm8k,) = found.figures
    assert gsm8k.headline and gsm8k.check is not None and not gsm8k.check.ok
    assert found.regressed == [gsm8k]


def _no_file(path: str) -> bytes:
    raise FileNotFoundError(2, "No such file or directory")


def test_expected_figures_follow_the_eval_tasks() -> None:
    assert expected_figures(measures(tasks=("gsm8k", "cnn_dailymail", "voxpopuli"))) == [
        "gsm8k accuracy", "cnn_dailymail rouge1", "voxpopuli wer"]  # fmt: skip
    assert expected_figures(Measures(kind="bench")) == ["output_throughput"]


def test_a_junit_file_that_cannot_be_read_is_noted() -> None:
    found = measure(Measures(kind="pytest", junit="/w/results.xml"), [], _no_file, repo_root=REPO,
                    where=Where(None, None, None), references=None)  # fmt: skip
    assert found.unread == ["/w/results.xml: No such file or directory"] and found.tests is None


def verdict(measured: Measured, code: int = 0) -> Verdict:
    return judge(state=None, exit_code=code, hung=False, timed_out=False, cancelled=False,
                 success_patterns=("passed",), success_found=True, measured=measured)  # fmt: skip


def results_of(tests: int = 0, failures: int = 0, skipped: int = 0) -> PytestResults:
    return PytestResults(source="results.xml", tests=tests, failures=failures, errors=0,
                         skipped=skipped)  # fmt: skip


def test_the_verdict_follows_what_was_measured() -> None:
    ok = score("gsm8k accuracy", 74.0)
    low = msgspec.structs.replace(ok, check=Check(reference=74.2, lower=71.0, origin="x",
                                                  margin=-3.0, ok=False))  # fmt: skip
    assert verdict(Measured(figures=[ok])) is Verdict.PASSED
    assert verdict(Measured(figures=[low])) is Verdict.REGRESSED
    assert verdict(Measured(figures=[low]), code=1) is Verdict.FAILED
    assert verdict(Measured(figures=[ok], missing=["mmlu accuracy"])) is Verdict.INCONCLUSIVE
    assert verdict(Measured(figures=[], unread=["r.xml: not XML"])) is Verdict.INCONCLUSIVE
    assert verdict(Measured(figures=[], tests=results_of(tests=10, failures=2))) is Verdict.FAILED
    assert (
        verdict(Measured(figures=[], tests=results_of(tests=3, skipped=3))) is Verdict.INCONCLUSIVE
    )
    assert verdict(Measured(figures=[], tests=results_of())) is Verdict.INCONCLUSIVE
    assert verdict(Measured(figures=[], tests=results_of(tests=3, skipped=1))) is Verdict.PASSED
    order = list(Verdict)
    assert (
        order.index(Verdict.FAILED)
        < order.index(Verdict.REGRESSED)
        < order.index(Verdict.INCONCLUSIVE)
    )


def test_the_scanner_hands_each_line_to_its_reader() -> None:
    reader = EvalLines()
    scanner = LogScanner("job.out", (), (), reader=reader)
    scanner.feed(b"start\nlm-eval gsm8k average accuracy: 7")
    assert reader.figures() == []  # the line is not complete yet
    scanner.feed(b"3.88\n")
    (found,) = reader.figures()
    assert (found.value, found.source) == (73.88, Source(file="job.out", line=2))


def test_the_words_for_a_figure_and_a_table_of_jobs() -> None:
    check = Check(reference=74.2, lower=71.03, origin="gsm8k.yaml", margin=3.49, ok=True)
    shown = msgspec.structs.replace(score("gsm8k accuracy", 74.52), check=check, headline=True)
    assert figure_text(shown) == (
        "gsm8k accuracy 74.52 (threshold 71.03, reference 74.20, margin +3.49): ok"
    )
    bare = Figure(name="output_throughput", value=512.3, unit="tokens/s",
                  source=Source(file="o"), unchecked="no references file was given")  # fmt: skip
    assert figure_text(bare) == (
        "output_throughput 512.30 tokens/s (no reference: no references file was given)"
    )
    record = RunRecord(version=1, work_dir="/w/a", execution_scenario=ExecutionScenario("local_slurm"),
                       script="/w/a/s.slurm", submitted_at="t", submit_command=(), out_log="/w/a/o",
                       verdict=Verdict.PASSED, exit_code=0, figures=(shown,))  # fmt: skip
    assert "gsm8k accuracy 74.52 (+3.49)" in table([record]).splitlines()[1]
    failing = PytestResults(source="r.xml", tests=30, failures=25, errors=0, skipped=0, failed=tuple(
        FailedTest(id=f"t{i}", outcome="failed", message="m") for i in range(25)))  # fmt: skip
    lines = measured_lines(msgspec.structs.replace(record, figures=(), tests=failing))
    assert sum(line.startswith("    FAILED t") for line in lines) == 20
    assert lines[-1] == "    and 5 more (run.json lists up to 100)"


def test_figures_are_the_same_however_the_log_arrives() -> None:
    """Chunks that cut lines anywhere, CRLF endings and a last line without a newline give the
    figures, with their line numbers, that reading the lines one by one gives."""
    said = upstream("trtllm-bench", SHIM_BENCH_TPS="777.5")
    whole = read(BenchLines(), said)
    for size in (1, 7, 64, 4096):
        reader = BenchLines()
        scanner = LogScanner("job.out", (), (), reader=reader)
        data = said.replace("\n", "\r\n").rstrip("\r\n").encode()
        for offset in range(0, len(data), size):
            scanner.feed(data[offset : offset + size])
        scanner.close()
        assert {f.name: (f.value, f.source) for f in reader.figures()} == {
            f.name: (f.value, f.source) for f in whole.values()
        }, size


def test_lm_evals_table_reads_top_level_scores_only() -> None:
    """A groups table (mmlu): the group's row is the score, its ` - ` subtasks are left out;
    a row without a task name continues the task above it; a line outside a table ends it."""
    from scriptast.results.lm_eval_table import lm_eval_figures

    table = (
        "|      Groups      |Version|Filter|n-shot|Metric|   |Value |   |Stderr|\n"
        "|------------------|------:|------|------|------|---|-----:|---|-----:|\n"
        "|mmlu              |      2|none  |      |acc   |\u2191  |0.6800|\u00b1  |0.0037|\n"
        "| - humanities     |      2|none  |      |acc   |\u2191  |0.6200|\u00b1  |0.0066|\n"
        "|                  |       |none  |      |acc_n |\u2191  |0.6100|\u00b1  |0.0066|\n"
        "|wikitext          |      2|none  |      |word_perplexity|\u2193  |9.1200|\u00b1  |N/A|\n"
        "not a table\n"
        "|gsm8k|3|strict-match|5|exact_match|\u2191|0.5|\u00b1|0.01|\n"
    ).encode()
    found = [(f.name, f.value, f.higher_is_better, f.source.line)
             for f in lm_eval_figures(table, "a.log", "t1")]  # fmt: skip
    assert found == [("t1 mmlu acc", 0.68, True, 3),
                     ("t1 wikitext word_perplexity", 9.12, False, 6)]  # fmt: skip


@pytest.mark.parametrize(
    ("classname", "file", "prefix", "expected", "sure"),
    [
        ("accuracy.test_llm_api_pytorch.TestLlama3_1_8BInstruct", None, None,
         "accuracy/test_llm_api_pytorch.py::TestLlama3_1_8BInstruct::test_fp8_kvcache[a-b]", True),
        ("DGX_H100-PyTorch-3.accuracy.test_llm_api_pytorch.TestLlama3_1_8BInstruct", None,
         "DGX_H100-PyTorch-3",
         "accuracy/test_llm_api_pytorch.py::TestLlama3_1_8BInstruct::test_fp8_kvcache[a-b]", True),
        ("DGX_H100-PyTorch-3.accuracy.test_llm_api_pytorch.TestLlama3_1_8BInstruct", None, None,
         "accuracy/test_llm_api_pytorch.py::TestLlama3_1_8BInstruct::test_fp8_kvcache[a-b]", False),
        ("accuracy.test_llm_api_pytorch.TestLlama3_1_8BInstruct", "accuracy/test_llm_api_pytorch.py",
         None, "accuracy/test_llm_api_pytorch.py::TestLlama3_1_8BInstruct::test_fp8_kvcache[a-b]",
         True),
        ("a.b", None, None, "a.b::test_fp8_kvcache[a-b]", False),
    ],
)  # fmt: skip
def test_a_failed_test_is_recorded_as_the_node_id_a_person_pastes(
    classname: str, file: str | None, prefix: str | None, expected: str, sure: bool
) -> None:
    """pytest's JUnit classname is the module's dotted path and its classes (after a CI
    stage's --test-prefix); the id is the one `pytest <id>` runs, and an unsure mapping is
    said."""
    from scriptast.results.junit import node_id

    assert node_id(classname, "test_fp8_kvcache[a-b]", file, prefix) == (expected, sure)
    case = f'<testcase classname="{classname}" name="test_fp8_kvcache[a-b]"' + (
        f' file="{file}"' if file else "") + '><failure message="x"/></testcase>'  # fmt: skip
    suite = f'<testsuite tests="1" failures="1">{case}</testsuite>'
    tests = read_junit(suite.encode(), "r.xml", prefix)
    [failed] = tests.failed
    assert failed.id == expected
    assert bool(tests.notes) == (not sure and failed.junit is not None)
