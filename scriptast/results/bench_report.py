"""trtllm-bench's report as figures: each line of its PERFORMANCE OVERVIEW block, as upstream's
tensorrt_llm/bench/dataclasses/reporting.py prints it, read as the log streams; and the same
figures from the `--report_json` file (`get_statistics_dict`'s keys) once the job is over."""

from __future__ import annotations

import json
import math
import re

from scriptast.common.numbers import VALUE, not_a_number
from scriptast.contract.measured import Figure, Source
from scriptast.results.figure_book import FigureBook
from scriptast.results.keyword_lines import KeywordLines

Meaning = tuple[str, str, bool]
"""A figure's name, unit, and whether higher is better."""

OVERVIEW: dict[str, Meaning] = {
    "Request Throughput (req/sec)": ("request_throughput", "req/s", True),
    "Total Output Throughput (tokens/sec)": ("output_throughput", "tokens/s", True),
    "Total Token Throughput (tokens/sec)": ("total_token_throughput", "tokens/s", True),
    "Total Latency (ms)": ("total_latency", "ms", False),
    "Average request latency (ms)": ("avg_request_latency", "ms", False),
    "Per User Output Throughput [w/ ctx] (tps/user)": (
        "per_user_output_throughput",
        "tokens/s/user",
        True,
    ),
    "Per GPU Output Throughput (tps/gpu)": ("per_gpu_output_throughput", "tokens/s/gpu", True),
    "Average time-to-first-token [TTFT] (ms)": ("avg_ttft", "ms", False),
    "Average time-per-output-token [TPOT] (ms)": ("avg_tpot", "ms", False),
    "Per User Output Speed (tps/user)": ("per_user_output_speed", "tokens/s/user", True),
}
"""Each PERFORMANCE OVERVIEW label (the streaming ones only with --streaming)."""
BREAKDOWNS: dict[str, Meaning] = {
    "TPOT": ("tpot", "ms", False),
    "TTFT": ("ttft", "ms", False),
    "GTPS": ("gtps", "tokens/s/user", True),
    "Latency": ("request_latency", "ms", False),
}
"""The per-request breakdown lines, `[TPOT] P99    : 12.3456`: name prefix, unit, direction."""
HEADLINE = "output_throughput"

_OVERVIEW = re.compile("(" + "|".join(re.escape(label) for label in OVERVIEW) + r"):\s+" + VALUE)
_BREAKDOWN = re.compile(r"\[(" + "|".join(BREAKDOWNS) + r")\]\s+([A-Z0-9]+)\s*:\s+" + VALUE)

REPORT_KEYS: dict[tuple[str, str], str] = {
    ("performance", "request_throughput_req_s"): "request_throughput",
    ("performance", "system_output_throughput_tok_s"): "output_throughput",
    ("performance", "system_total_throughput_tok_s"): "total_token_throughput",
    ("performance", "total_latency_ms"): "total_latency",
    ("performance", "avg_request_latency_ms"): "avg_request_latency",
    ("performance", "output_throughput_per_user_tok_s"): "per_user_output_throughput",
    ("performance", "output_throughput_per_gpu_tok_s"): "per_gpu_output_throughput",
    ("streaming_metrics", "avg_ttft_ms"): "avg_ttft",
    ("streaming_metrics", "avg_tpot_ms"): "avg_tpot",
    ("streaming_metrics", "token_output_speed_tok_s"): "per_user_output_speed",
}
"""The report_json keys (section, key) of each overview figure."""
_BY_NAME = {meaning[0]: meaning for meaning in OVERVIEW.values()}


class BenchLines(KeywordLines):
    """Reads the PERFORMANCE OVERVIEW lines of a log as they come; a line printed again (a
    second report) replaces the first, and the figure lists both values."""

    def __init__(self) -> None:
        # every overview label ends in "):", and a block without ")" (one memchr) holds none;
        # the breakdown lines print only after them, in the same report, so they are watched
        # for once an overview line was read
        keywords = (b"):", b"[TPOT]", b"[TTFT]", b"[GTPS]", b"[Latency]")
        super().__init__(keywords, watch=(b")",))
        self.book = FigureBook("last")

    def line(self, text: str, source: str, number: int) -> None:
        """Take one line of the log."""
        if ":" not in text:
            return
        matched = _OVERVIEW.search(text)
        if matched is not None:
            name, unit, higher = OVERVIEW[matched.group(1)]
            self._keep(name, unit, higher, matched.group(2), source, number)
            return
        matched = _BREAKDOWN.search(text)
        if matched is not None:
            prefix, unit, higher = BREAKDOWNS[matched.group(1)]
            name = f"{prefix}_{matched.group(2).lower()}"
            self._keep(name, unit, higher, matched.group(3), source, number)

    def _keep(self, name: str, unit: str, higher: bool, value: str, file: str, line: int) -> None:
        self.watch = self.keywords
        self.book.add(name, value, unit, Source(file=file, line=line), higher=higher)

    def figures(self) -> list[Figure]:
        """The figures read, in the order they were first printed."""
        return self.book.figures()

    def unreadable(self) -> list[str]:
        """The values printed that are no number."""
        return self.book.unreadable


def report_figures(data: bytes, source: str) -> tuple[list[Figure], list[str]]:
    """The overview figures of a `--report_json` file, and the values it holds that are no
    finite number (Python's json.dump writes NaN and Infinity); ValueError when it is not that
    JSON."""
    try:
        report = json.loads(data)
    except (ValueError, RecursionError) as error:
        raise ValueError(f"not JSON ({error})") from None
    if not isinstance(report, dict) or not isinstance(report.get("performance"), dict):
        raise ValueError("no `performance` section (is it trtllm-bench's --report_json?)")
    found, unreadable = [], []
    for (section, key), name in REPORT_KEYS.items():
        value = (report.get(section) or {}).get(key)
        if not isinstance(value, int | float) or isinstance(value, bool):
            continue
        if not math.isfinite(value):
            unreadable.append(not_a_number(f"{section}.{key}", str(value), source, None))
            continue
        _, unit, higher = _BY_NAME[name]
        found.append(
            Figure(
                name=name,
                value=float(value),
                unit=unit,
                source=Source(file=source),
                higher_is_better=higher,
            )
        )
    return found, unreadable
