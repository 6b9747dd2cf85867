"""bench's record: Category 6, trtllm-bench on one node (a prepare step and a run step)."""

from __future__ import annotations

from scriptast.builders.category import (
    Category,
    MeasuresRule,
    Patterns,
    RequestCheck,
    ResolveRule,
    StepsRule,
)
from scriptast.builders.request.parts import BenchRequest

WORK = "scriptast.builders.categories.bench.work"
MEASURES = "scriptast.builders.categories.bench.measures"
STEPS = "scriptast.builders.categories.bench.steps"

CATEGORY = Category(
    name="bench",
    suffix="bench",
    cli_name="bench",
    cli_help="Run trtllm-bench, optionally 'prepare-dataset && throughput'.",
    docs="Category 6: `trtllm-bench`: a prepare step and a run step, split at the top `&&`.",
    examples=(
        "scriptast emit bench <slurm> --bench-cmd 'trtllm-bench --model meta-llama/Llama-3.1-8B "
        "prepare-dataset --output /tmp/d.json token-norm-dist --num-requests 8 && trtllm-bench "
        "--model meta-llama/Llama-3.1-8B throughput --dataset /tmp/d.json --tp 2'",
        "scriptast emit bench --request examples/bench_remote_slurm.json --explain",
    ),
    options=("bench_cmd",),
    # the seed's, and the line trtllm-bench's report starts with ("Throughput", capitalized)
    needs=("bench_cmd",),
    request_part=BenchRequest,
    patterns=Patterns(
        success=("token/s", "throughput", "Request Throughput (req/sec):"),
        failure=("Error", "Traceback"),
    ),
    check_request=RequestCheck(WORK, "check_request"),
    resolve=ResolveRule(WORK, "resolve"),
    steps=StepsRule(STEPS, "steps"),
    measures=MeasuresRule(MEASURES, "measures"),
)
