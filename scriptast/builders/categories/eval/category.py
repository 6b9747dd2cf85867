"""eval's record: Category 5, trtllm-eval on one node, always under --mpi; over more nodes than
one, the perf-sanity path with accuracy on."""

from __future__ import annotations

from scriptast.builders.category import (
    Category,
    MeasuresRule,
    Patterns,
    RequestCheck,
    ResolveRule,
    StepsRule,
)
from scriptast.builders.request.parts import EvalRequest

WORK = "scriptast.builders.categories.eval.work"
MEASURES = "scriptast.builders.categories.eval.measures"
STEPS = "scriptast.builders.categories.eval.steps"

CATEGORY = Category(
    name="eval",
    suffix="eval",
    cli_name="eval",
    cli_help="Run trtllm-eval (one node, always under --mpi).",
    docs="Category 5: `trtllm-eval`, always under `--mpi`; HuggingFace ids become local paths.",
    examples=(
        "scriptast emit eval <slurm> --eval-cmd "
        "'trtllm-eval --model meta-llama/Llama-3.1-8B-Instruct --tp_size 2 gsm8k'",
        "scriptast emit eval --request examples/eval_local_docker.json --stdout --shell fish",
    ),
    options=("eval_cmd", "perf_config_yaml", "perf_test_name"),
    # the seed's ("... average accuracy: N" for mmlu, gsm8k, gpqa), and the rouge1 line
    # trtllm-eval prints for cnn_dailymail, which has no accuracy
    needs=("eval_cmd",),
    request_part=EvalRequest,
    patterns=Patterns(
        success=("accuracy:", "score:", "rouge1:"), failure=("AssertionError", "Error")
    ),
    check_request=RequestCheck(WORK, "check_request"),
    resolve=ResolveRule(WORK, "resolve"),
    steps=StepsRule(STEPS, "steps"),
    measures=MeasuresRule(MEASURES, "measures"),
)
