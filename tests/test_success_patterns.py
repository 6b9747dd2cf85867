"""Each workflow's success patterns match what the real tool prints when it ends well (lines as
upstream's source writes them), and the seed's own patterns are kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from scriptast.builders.categories import CATEGORIES
from scriptast.executor.log_verdict import LogScanner

ROOT = Path(__file__).resolve().parent.parent
SEED = {
    "pytest": ("passed",),
    "eval": ("accuracy:", "score:"),
    "bench": ("token/s", "throughput"),
    "perf_sanity": ("8_done_",),
    "custom": (),
}
REAL_LINES = {
    # pytest's summary line
    "pytest": ["==================== 3 passed, 1 skipped in 12.31s ===================="],
    # trtllm-eval (tensorrt_llm/evaluate): mmlu, lm_eval tasks, gpqa, cnn_dailymail
    "eval": [
        "[05/01/2025-13:56:15] [TRT-LLM] [I] MMLU weighted average accuracy: 79.09 (14042)",
        "[TRT-LLM] [I] gsm8k average accuracy: 91.20",
        "[TRT-LLM] [I] GPQA average accuracy: 40.40 (198)",
        "[TRT-LLM] [I] rouge1: 28.51",
    ],
    # trtllm-bench's report (tensorrt_llm/bench/dataclasses/reporting.py)
    "bench": ["Request Throughput (req/sec):                     12.3456"],
    # upstream's jenkins/scripts/perf/{aggregated,disaggregated}/slurm_launch_draft.sh
    "perf_sanity": [
        "Aggregated test completed successfully",
        "Disagg server and benchmark completed successfully",
    ],
}


@pytest.mark.parametrize("workflow", sorted(SEED))
def test_the_seeds_patterns_are_kept(workflow: str) -> None:
    success = CATEGORIES[workflow].patterns.success
    assert set(SEED[workflow]) <= set(success)


@pytest.mark.parametrize(
    ("workflow", "line"), [(w, line) for w, lines in sorted(REAL_LINES.items()) for line in lines]
)
def test_a_real_success_line_is_success(workflow: str, line: str) -> None:
    scanner = LogScanner("job.out", CATEGORIES[workflow].patterns.success, ())
    scanner.feed(line.encode() + b"\n")
    assert scanner.success_hits, f"{workflow}: {line!r} matches none of its success patterns"


@pytest.mark.parametrize("mode", ["aggregated", "disaggregated"])
def test_the_draft_stand_ins_end_as_upstreams_do(mode: str) -> None:
    draft = ROOT / f"tests/fixtures/trtllm/jenkins/scripts/perf/{mode}/slurm_launch_draft.sh"
    text = draft.read_text()
    assert "completed successfully" in text and "8_done_" not in text
