"""What reading figures costs while a job is followed: the log scanner `run` feeds each chunk
it reads (16 KiB at most, every 0.2 s) with its figure reader and without, on distinct logs,
paired; and what following a whole job costs besides (bench/README.md, `scriptast run` rows).

    python bench/figures_bench.py [--pairs 15] [--lines 200000]

Each pair reads two fresh logs of the same shape (a trtllm-bench job: model loading, per-
iteration lines, the PERFORMANCE OVERVIEW at the end; a trtllm-eval job: progress lines and the
score lines), one with the reader and one without, in alternating order; the figures are the
median of the per-pair CPU ratios, and the slowest chunk either way (the delay a line can get
before it reaches the terminal)."""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scriptast.contract.measured import Measures
from scriptast.executor.log_verdict import LogScanner
from scriptast.results.judging import line_reader

CHUNK = 16 * 1024
SUCCESS = ("token/s", "throughput", "Request Throughput (req/sec):")
FAILURE = ("Error", "Traceback")


def bench_log(rng: random.Random, lines: int) -> bytes:
    """A trtllm-bench job's log: iteration lines, then the report."""
    out = [f"0: [TensorRT-LLM][INFO] Loading weights: {rng.randint(0, 99)}%" for _ in range(50)]
    for step in range(lines):
        out.append(
            f"{rng.randint(0, 7)}: [TensorRT-LLM][INFO] iter = {step}, global_rank = 0, "
            f"host_step_time = {rng.uniform(5, 9):.2f}ms, prev_device_step_time = "
            f"{rng.uniform(5, 9):.2f}ms, num_scheduled_requests: {rng.randint(1, 256)}"
        )
    tps = rng.uniform(1000, 9000)
    out += [
        "0: ===========================================================",
        "0: = PERFORMANCE OVERVIEW ",
        "0: ===========================================================",
        f"0: Request Throughput (req/sec):                     {tps / 128:.4f}",
        f"0: Total Output Throughput (tokens/sec):             {tps:.4f}",
        f"0: Total Token Throughput (tokens/sec):              {tps * 2:.4f}",
        f"0: Total Latency (ms):                               {rng.uniform(1e4, 9e4):.4f}",
        f"0: Average request latency (ms):                     {rng.uniform(1e3, 9e3):.4f}",
    ]
    out += [f"0: [Latency] P{p:<6}: {rng.uniform(1e3, 9e3):.4f}" for p in (50, 90, 95, 99)]
    return ("\n".join(out) + "\nBench finished with exit code 0\n").encode()


def eval_log(rng: random.Random, lines: int) -> bytes:
    """A trtllm-eval job's log: request progress, then lm-eval's score."""
    out = []
    for step in range(lines):
        out.append(
            f"0: Processed prompts: {step % 100}%|###   | {step}/{lines} "
            f"[00:{step % 60:02d}<00:10, {rng.uniform(10, 90):.2f}it/s]"
        )
    out.append(f"0: [TRT-LLM] [I] lm-eval gsm8k average accuracy: {rng.uniform(60, 80):.2f}")
    return ("\n".join(out) + "\nEval finished with exit code 0\n").encode()


def follow(log: bytes, measures: Measures | None) -> tuple[float, float]:
    """CPU seconds to scan the log chunk by chunk, and the slowest chunk's seconds."""
    scanner = LogScanner("job.out", SUCCESS, FAILURE, reader=line_reader(measures))
    slowest = 0.0
    start = time.process_time()
    for offset in range(0, len(log), CHUNK):
        before = time.perf_counter()
        scanner.feed(log[offset : offset + CHUNK])
        slowest = max(slowest, time.perf_counter() - before)
    scanner.close()
    return time.process_time() - start, slowest


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=15)
    parser.add_argument("--lines", type=int, default=200_000)
    args = parser.parse_args()
    rows = []
    cases = (
        ("bench", bench_log, Measures(kind="bench")),
        ("eval gsm8k", eval_log, Measures(kind="eval", tasks=("gsm8k",))),
        ("eval, no task named", eval_log, Measures(kind="eval")),
    )
    for kind, make, measures in cases:
        ratios, with_chunk, without_chunk = [], [], []
        for pair in range(args.pairs):
            rng = random.Random(f"{kind}-{pair}")
            reading, plain = make(rng, args.lines), make(rng, args.lines)
            order = [(reading, measures), (plain, None)]
            if pair % 2:
                order.reverse()
            timed = {id(m): follow(log, m) for log, m in order}
            read_cpu, read_chunk = timed[id(measures)]
            plain_cpu, plain_chunk = timed[id(None)]
            ratios.append(read_cpu / plain_cpu)
            with_chunk.append(read_chunk)
            without_chunk.append(plain_chunk)
        megabytes = len(make(random.Random(0), args.lines)) / 2**20
        rows += [
            (f"{kind}: CPU with figures / without, paired (target <= 1.05)",
             f"{statistics.median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f})"),
            (f"{kind}: slowest 16 KiB chunk, with / without figures",
             f"{max(with_chunk) * 1e3:.2f} ms / {max(without_chunk) * 1e3:.2f} ms"),
            (f"{kind}: log per pair", f"{megabytes:.1f} MiB, {args.lines} lines"),
        ]  # fmt: skip
    width = max(len(name) for name, _ in rows) + 2
    for name, value in rows:
        print(f"{name:<{width}}{value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
