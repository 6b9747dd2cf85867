"""A perf-sanity client's figures: the benchmark_serving report each client of
tests/integration/defs/perf/test_perf_sanity.py writes to
`<output-dir>/<test labels>/trtllm-benchmark.<server>.<client>.log`, read with the queries
upstream reads it with (PERF_METRIC_LOG_QUERIES, the first match of each, and the spec-decoding
and gen-only ones); every one of the main queries must be there, as upstream's
check_test_failure demands."""

from __future__ import annotations

import posixpath
import re

from scriptast.common.numbers import VALUE, not_a_number, read_number
from scriptast.contract.measured import Figure, Source

_N = r"\s+" + VALUE
QUERIES: dict[str, tuple[str, str, bool]] = {
    "seq_throughput": (r"Request throughput \(req\/s\):", "req/s", True),
    "token_throughput": (r"Output token throughput \(tok\/s\):", "tokens/s", True),
    "total_token_throughput": (r"Total Token throughput \(tok\/s\):", "tokens/s", True),
    "user_throughput": (r"User throughput \(tok\/s\):", "tokens/s/user", True),
    "mean_ttft": (r"Mean TTFT \(ms\):", "ms", False),
    "median_ttft": (r"Median TTFT \(ms\):", "ms", False),
    "p99_ttft": (r"P99 TTFT \(ms\):", "ms", False),
    "mean_itl": (r"Mean ITL \(ms\):", "ms", False),
    "median_itl": (r"Median ITL \(ms\):", "ms", False),
    "p99_itl": (r"P99 ITL \(ms\):", "ms", False),
    "mean_tpot": (r"Mean TPOT \(ms\):", "ms", False),
    "median_tpot": (r"Median TPOT \(ms\):", "ms", False),
    "p99_tpot": (r"P99 TPOT \(ms\):", "ms", False),
    "mean_e2el": (r"Mean E2EL \(ms\):", "ms", False),
    "median_e2el": (r"Median E2EL \(ms\):", "ms", False),
    "p99_e2el": (r"P99 E2EL \(ms\):", "ms", False),
}
"""Upstream's PERF_METRIC_LOG_QUERIES: its database name, the label, the unit, the direction."""
OPTIONAL: dict[str, tuple[str, str, bool]] = {
    "al": (r"Mean Avg Decoded Tokens per Iter:", "tokens/iter", True),
    "mean_gen_worker_per_iter_device_step_time": (
        r"Average Per Iter Device Step Time \(ms\):",
        "ms",
        False,
    ),
}
"""Read when printed (speculative decoding, gen-only disaggregated runs), never demanded."""
_COMPILED = {
    name: re.compile(label + _N) for name, (label, _, _) in {**QUERIES, **OPTIONAL}.items()
}
HEADLINE = "token_throughput"


def client_name(path: str) -> str:
    """`<test labels> <server>.<client>` of a client's log path."""
    folder = posixpath.basename(posixpath.dirname(path))
    middle = posixpath.basename(path).removeprefix("trtllm-benchmark.").removesuffix(".log")
    return f"{folder} {middle}"


def serving_figures(data: bytes, source: str) -> tuple[list[Figure], list[str], list[str]]:
    """The figures of one client's log, the names of the main ones it lacks, and the values
    it printed that are no number (such a figure is lacking too)."""
    client = client_name(source)
    found: dict[str, Figure] = {}
    unreadable: list[str] = []
    for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        for name, query in _COMPILED.items():
            if name in found:
                continue
            matched = query.search(line)
            if matched is None:
                continue
            _, unit, higher = QUERIES.get(name) or OPTIONAL[name]
            text = matched.group(1)
            value = read_number(text)
            if value is None:
                unreadable.append(not_a_number(f"{client} {name}", text, source, number))
                break
            found[name] = Figure(
                name=f"{client} {name}",
                value=value,
                unit=unit,
                source=Source(file=source, line=number),
                higher_is_better=higher,
            )
            break
    missing = [f"{client} {name}" for name in QUERIES if name not in found]
    return list(found.values()), missing, unreadable[:20]
