"""What the TRT-LLM tools print and write, in upstream's exact formats, for the stand-ins:
trtllm-bench's report (tensorrt_llm/bench/dataclasses/reporting.py: the PERFORMANCE OVERVIEW
block as one logger.info message, and --report_json with get_statistics_dict's keys),
trtllm-eval's score lines (tensorrt_llm/evaluate/: lm_eval.py, mmlu.py) behind the TRT-LLM
logger's prefix, and pytest's summary line with the JUnit XML --junitxml writes.

Driven by the environment: SHIM_BENCH_TPS (the output throughput), SHIM_EVAL_ACCURACY (each
task's score; unset: no score line), SHIM_PYTEST_RESULTS (`passed=8,failed=2,skipped=0`, or `from-test-list`: a CI stage's run,
tests/shims/ci_pytest.py),
SHIM_PYTEST_BROKEN_JUNIT (what pytest writes instead of its JUnit XML), SHIM_PYTEST_JUNIT_FILE (a
file whose bytes it writes instead), SHIM_BENCH_GROUPED (the overview's numbers with thousands
grouped by commas), SHIM_BENCH_REPORT_NAN (report_json keys written as NaN or Infinity),
SHIM_SERVING_SAYS (`label=text;...`: a client's value printed as that text), SHIM_PRINT_FIRST (a
line printed before the tool's own output), SHIM_SERVING_TPS (a
perf-sanity client's output throughput, tests/integration/defs/perf/
test_perf_sanity.py's trtllm-benchmark logs)."""

import json
import os
import sys
import time

LOGGER = "[TensorRT-LLM][INFO] "
EVAL_PREFIX = "[12/04/2026-10:00:00] [TRT-LLM] [I] "
BAR = "=" * 59


def flag(argv: list[str], name: str) -> str | None:
    found = None
    for index, word in enumerate(argv):
        if word == name and index + 1 < len(argv):
            found = argv[index + 1]
        elif word.startswith(name + "="):
            found = word.split("=", 1)[1]
    return found


def bench(argv: list[str]) -> int:
    tps = float(os.environ["SHIM_BENCH_TPS"])
    world = int(flag(argv, "--tp") or 1) * int(flag(argv, "--pp") or 1)
    users = int(flag(argv, "--concurrency") or 64)
    median = 20100.0
    if flag(argv, "--concurrency"):  # a sweep's point: more GPUs and users, more throughput
        tps = tps * world**0.85 * users / (users + 16)
        median = 100.0 * users / world**0.5
    perf = {
        "total_latency_ms": 61234.5678,
        "avg_request_latency_ms": 20345.6789,
        "request_throughput_req_s": tps / 128.0,
        "system_output_throughput_tok_s": tps,
        "system_total_throughput_tok_s": tps * 2.0,
        "output_throughput_per_user_tok_s": tps / users,
        "output_throughput_per_gpu_tok_s": tps / world,
    }
    percentiles = {
        "p50": median, "p90": 24000.0, "p95": 25000.0, "p99": 26000.0,
        "minimum": 15000.0, "maximum": 27000.0, "average": 20345.6789,
    }  # fmt: skip
    latency = "\n".join(f"[Latency] {k.upper():<7}: {v:.4f}" for k, v in percentiles.items())
    shown = {k: f"{v:,.4f}" if os.environ.get("SHIM_BENCH_GROUPED") else f"{v:.4f}"
             for k, v in perf.items()}  # fmt: skip
    print(
        LOGGER + "\n"
        f"{BAR}\n= PYTORCH BACKEND\n{BAR}\n"
        "Model:\t\t\tmeta-llama/Llama-3.1-8B-Instruct\n\n"
        f"{BAR}\n= REQUEST DETAILS \n{BAR}\n"
        "Number of requests:             1000\n\n"
        f"{BAR}\n= PERFORMANCE OVERVIEW \n{BAR}\n"
        f"Request Throughput (req/sec):                     {shown['request_throughput_req_s']}\n"
        f"Total Output Throughput (tokens/sec):             {shown['system_output_throughput_tok_s']}\n"
        f"Total Token Throughput (tokens/sec):              {shown['system_total_throughput_tok_s']}\n"
        f"Total Latency (ms):                               {shown['total_latency_ms']}\n"
        f"Average request latency (ms):                     {shown['avg_request_latency_ms']}\n"
        f"Per User Output Throughput [w/ ctx] (tps/user):   {shown['output_throughput_per_user_tok_s']}\n"
        f"Per GPU Output Throughput (tps/gpu):              {shown['output_throughput_per_gpu_tok_s']}\n"
        "\n-- Request Latency Breakdown (ms) -----------------------\n\n"
        f"{latency}\n\n{BAR}\n",
        flush=True,
    )  # fmt: skip
    report = flag(argv, "--report_json")
    if report:
        with open(report, "w", encoding="utf-8") as stream:
            performance = {**perf, "request_latency_percentiles_ms": percentiles}
            for key in os.environ.get("SHIM_BENCH_REPORT_NAN", "").split(","):
                if key:  # what json.dump writes for a statistic of no requests
                    performance[key] = float("nan") if key.startswith("avg") else float("inf")
            json.dump({"engine": {"model": "stand-in"}, "performance": performance}, stream)
    return 0


def evaluate(argv: list[str]) -> int:
    score = os.environ.get("SHIM_EVAL_ACCURACY")
    print(EVAL_PREFIX + "TRTLLM initialization time: 1.234 seconds.", flush=True)
    if score is None:
        return 0
    for task in argv:
        if task == "mmlu":
            print(f"{EVAL_PREFIX}MMLU weighted average accuracy: {float(score):.2f} (14042)")
        elif task in ("gsm8k", "gpqa_diamond", "gpqa_main", "gpqa_extended", "mmmu"):
            print(f"{EVAL_PREFIX}lm-eval {task} average accuracy: {float(score):.2f}")
    sys.stdout.flush()
    return 0


def run_pytest(argv: list[str]) -> int:
    if os.environ["SHIM_PYTEST_RESULTS"] == "from-test-list":  # a CI stage's run
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from ci_pytest import run_stage  # type: ignore[import-not-found]  # beside it in shims/bin

        code: int = run_stage(argv, flag)
        return code
    counts = dict(
        (key, int(value))
        for key, value in (pair.split("=") for pair in os.environ["SHIM_PYTEST_RESULTS"].split(","))
    )
    passed, failed, skipped = (counts.get(k, 0) for k in ("passed", "failed", "skipped"))
    cases = []
    for index in range(passed + failed + skipped):
        name = f"test_case[{index}]"
        if index < failed:
            body = (f'<failure message="AssertionError: assert {40 + index}.0 &gt;= 71.0">'
                    "def test_case():\n&gt;       assert accuracy &gt;= threshold</failure>")  # fmt: skip
        elif index < failed + skipped:
            body = '<skipped type="pytest.skip" message="needs 8 GPUs">skipped</skipped>'
        else:
            body = ""
        cases.append(f'<testcase classname="accuracy.test_llm_api_pytorch" name="{name}" '
                     f'time="0.{index + 1}">{body}</testcase>')  # fmt: skip
    total = len(cases)
    junit = flag(argv, "--junitxml") or flag(argv, "--junit-xml")
    broken = os.environ.get("SHIM_PYTEST_BROKEN_JUNIT")
    given = os.environ.get("SHIM_PYTEST_JUNIT_FILE")
    if junit and given:
        with open(given, "rb") as source, open(junit, "wb") as stream:
            stream.write(source.read())
    elif junit and broken:
        with open(junit, "w", encoding="utf-8") as stream:
            stream.write(broken)
    elif junit:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        with open(junit, "w", encoding="utf-8") as stream:
            stream.write(
                '<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" '
                f'errors="0" failures="{failed}" skipped="{skipped}" tests="{total}" '
                f'time="{total * 0.5:.3f}" timestamp="{stamp}" hostname="node1">'
                + "".join(cases)
                + "</testsuite></testsuites>"
            )
    words = [
        f"{n} {w}" for n, w in ((failed, "failed"), (passed, "passed"), (skipped, "skipped")) if n
    ]
    print(f"{'=' * 20} {', '.join(words) or 'no tests ran'} in {total * 0.5:.2f}s {'=' * 20}")
    if failed:
        return 1
    return 5 if total == 0 else 0


def serving_report(tps: float) -> str:
    """A benchmark client's report (bench_serving's benchmark_serving.py) as
    test_perf_sanity.py saves it to trtllm-benchmark.<server>.<client>.log."""
    rows = [
        ("Successful requests:", "1000"),
        ("Benchmark duration (s):", "123.45"),
        ("Request throughput (req/s):", f"{tps / 128:.2f}"),
        ("Output token throughput (tok/s):", f"{tps:.2f}"),
        ("Total Token throughput (tok/s):", f"{tps * 2:.2f}"),
        ("User throughput (tok/s):", f"{tps / 64:.2f}"),
    ]
    for title, prefix, values in (
        ("Time to First Token", "TTFT", (45.67, 40.12, 120.34)),
        ("Time per Output Token (excl. 1st token)", "TPOT", (7.5, 7.1, 9.9)),
        ("Inter-token Latency", "ITL", (7.4, 7.0, 9.8)),
        ("End-to-end Latency", "E2EL", (2000.0, 1900.0, 3100.0)),
    ):
        rows.append((f"{title:-^50}", ""))
        rows += [(f"{kind} {prefix} (ms):", f"{v:.2f}") for kind, v in zip(
            ("Mean", "Median", "P99"), values, strict=True)]  # fmt: skip
    body = "\n".join(f"{label:<40} {value}".rstrip() for label, value in rows)
    return f"{' Serving Benchmark Result ':=^50}\n{body}\n{'=' * 50}\n"


def lm_eval_output(score: float) -> str:
    """What lm_eval prints for gsm8k against a server (its make_table markdown), as
    test_perf_sanity.py's accuracy run saves it to accuracy_eval_gsm8k.<server>.log."""
    head = ("local-completions (model=/models/llama,base_url=http://node:8000/v1/completions,"
            "num_concurrent=512), gen_kwargs: (None), limit: None, num_fewshot: None, "
            "batch_size: 1")  # fmt: skip
    return (
        f"{head}\n"
        "|Tasks|Version|     Filter     |n-shot|  Metric   |   |Value |   |Stderr|\n"
        "|-----|------:|----------------|-----:|-----------|---|-----:|---|-----:|\n"
        f"|gsm8k|      3|flexible-extract|     5|exact_match|\u2191  |{score:.4f}|\u00b1  |0.0118|\n"
        f"|     |       |strict-match    |     5|exact_match|\u2191  |{score - 0.01:.4f}|\u00b1  "
        "|0.0120|\n\n"
    )


def perf_sanity(argv: list[str]) -> int:
    """The BENCHMARK task of a perf-sanity test: each test of the list writes its client's
    report under --output-dir/<test labels>/ (the server tasks write none)."""
    if os.environ.get("DISAGG_SERVING_TYPE", "BENCHMARK") != "BENCHMARK":
        return 0
    output = flag(argv, "--output-dir") or "."
    listed = flag(argv, "--test-list")
    tests: list[str] = []
    if listed:
        with open(listed, encoding="utf-8") as stream:
            tests = stream.read().split()
    for test in tests:
        label = test.split("[", 1)[1].rstrip("]") if "[" in test else "test"
        os.makedirs(os.path.join(output, label), exist_ok=True)
        path = os.path.join(output, label, "trtllm-benchmark.0.0.log")
        with open(path, "w", encoding="utf-8") as stream:
            report = serving_report(float(os.environ["SHIM_SERVING_TPS"]))
            for said in os.environ.get("SHIM_SERVING_SAYS", "").split(";"):
                if said:  # a value the client printed otherwise: `label=text`
                    label, _, text = said.partition("=")
                    report = "\n".join(
                        f"{label:<40} {text}" if line.startswith(label) else line
                        for line in report.split("\n")
                    )
            stream.write(report)
        score = os.environ.get("SHIM_LM_EVAL_GSM8K")
        if score is not None:  # the client's accuracy_config ran lm_eval gsm8k on server 0
            accuracy = os.path.join(output, label, "accuracy_eval_gsm8k.0.log")
            with open(accuracy, "w", encoding="utf-8") as stream:
                stream.write(lm_eval_output(float(score)) if score else "lm_eval: no results\n")
        print(f"{test} PASSED")
    return 0


SPEAKERS = {"trtllm-bench": ("SHIM_BENCH_TPS", bench), "trtllm-eval": ("SHIM_EVAL_MODE", evaluate),
            "pytest": ("SHIM_PYTEST_RESULTS", run_pytest)}  # fmt: skip


def speak(name: str, argv: list[str]) -> int | None:
    """Print and write what the real tool would, when its variable is set; None otherwise."""
    serving = "SHIM_SERVING_TPS" in os.environ
    if name == "pytest" and serving and any(w.endswith("test_perf_sanity.py") for w in argv):
        return perf_sanity(argv)
    variable, speaker = SPEAKERS.get(name, ("", None))
    if speaker is None or variable not in os.environ:
        return None
    first = os.environ.get("SHIM_PRINT_FIRST")
    if first:  # a line the tool printed before its own output (an earlier score, say)
        print(first, flush=True)
    return speaker(argv)
