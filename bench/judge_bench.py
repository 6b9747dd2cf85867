"""`scriptast judge` on large logs: a trtllm-bench job's log of 128 MiB, 256 MiB and 1 GiB
(iteration lines, then upstream's PERFORMANCE OVERVIEW), each written fresh with its own
numbers; the wall time and peak resident memory of the whole process (targets: under 100 MiB,
time linear in the size: the seconds per GiB alike).

    python bench/judge_bench.py [--sizes 128,256,1024]"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.peak_memory import run_measured

SCRIPTAST = str(Path(sys.executable).parent / "scriptast")
REPORT = """===========================================================
= PERFORMANCE OVERVIEW \n===========================================================
Request Throughput (req/sec):                     {req:.4f}
Total Output Throughput (tokens/sec):             {tps:.4f}
Total Token Throughput (tokens/sec):              {total:.4f}
Total Latency (ms):                               61234.5678
Average request latency (ms):                     20345.6789
Per User Output Throughput [w/ ctx] (tps/user):   {user:.4f}
Per GPU Output Throughput (tps/gpu):              {tps:.4f}
"""


def write_log(path: Path, megabytes: int, rng: random.Random) -> None:
    """Iteration lines up to `megabytes`, then the report."""
    line = (
        "{rank}: [TensorRT-LLM][INFO] iter = {step}, global_rank = 0, host_step_time = "
        "{a:.2f}ms, prev_device_step_time = {b:.2f}ms, num_scheduled_requests: {n}\n"
    )
    target = megabytes << 20
    written = 0
    with open(path, "w", encoding="ascii") as out:
        out.write("Model:\t\t\tmeta-llama/Llama-3.1-8B-Instruct\n")
        block: list[str] = []
        step = 0
        while written < target:
            block.clear()
            for _ in range(5000):
                block.append(line.format(rank=rng.randint(0, 7), step=step, a=rng.uniform(5, 9),
                                         b=rng.uniform(5, 9), n=rng.randint(1, 256)))  # fmt: skip
                step += 1
            text = "".join(block)
            out.write(text)
            written += len(text)
        tps = rng.uniform(4000, 6000)
        out.write(REPORT.format(req=tps / 128, tps=tps, total=tps * 2, user=tps / 64))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="128,256,1024")
    args = parser.parse_args()
    rng = random.Random(7)
    print(f"{'log':>10}  {'seconds':>8}  {'s/GiB':>6}  {'peak MiB':>8}  verdict")
    for megabytes in (int(size) for size in args.sizes.split(",")):
        with tempfile.TemporaryDirectory(prefix="scriptast-judge-") as folder:
            log = Path(folder) / "bench.log"
            write_log(log, megabytes, rng)
            started = time.monotonic()
            with open(Path(folder) / "said.txt", "wb") as said:
                done = run_measured([SCRIPTAST, "judge", str(log)], stdout=said)
            seconds = time.monotonic() - started
            verdict = (Path(folder) / "said.txt").read_text().split(" ", 1)[0]
            size = log.stat().st_size / (1 << 30)
            print(
                f"{log.stat().st_size >> 20:>7} MiB  {seconds:8.2f}  {seconds / size:6.1f}  "
                f"{done.peak_bytes / (1 << 20):8.1f}  {verdict}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
