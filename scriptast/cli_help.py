"""Examples shown at the end of each command's --help (real invocations on the bundled example)."""

from __future__ import annotations


def _examples(*lines: str) -> str:
    return "Examples:\n\n" + "\n\n".join(f"  $ {line}" for line in lines)


OVERVIEW = _examples(
    "scriptast emit --request examples/bench_local_slurm.json",
    "scriptast emit bench --help",
    "scriptast probe-slurm -o slurm_env.json",
    "scriptast verify job.slurm --slurm-env-file slurm_env.json",
)
SLURM = (
    "--execution-scenario local_slurm --slurm-env-file examples/slurm_env.json "
    "--partition batch --account coreai_trtllm --repo-root tests/fixtures/trtllm "
    "--llm-models-root /models --models-path tests/fixtures/models --work-dir out/job"
)
EMIT = _examples(
    "scriptast emit --request examples/pytest_local_slurm.json --explain",
    "scriptast emit --request examples/bench_remote_slurm.json --stdout",
    "scriptast emit --request - --json < request.json",
    "scriptast emit --requests sweep.jsonl",
)
WORKFLOW_EXAMPLES = {
    "pytest": _examples(
        f"scriptast emit pytest {SLURM} --test-cmd "
        "'pytest -v accuracy/test_llm_api_pytorch.py::"
        "TestLlama3_1_8BInstruct::test_param_mark[tp2pp2]'",
        "scriptast emit pytest --request examples/pytest_remote_slurm.json",
    ),
    "eval": _examples(
        f"scriptast emit eval {SLURM} --eval-cmd "
        "'trtllm-eval --model meta-llama/Llama-3.1-8B-Instruct --tp_size 2 gsm8k'",
        "scriptast emit eval --request examples/eval_local_docker.json --stdout --shell fish",
    ),
    "bench": _examples(
        f"scriptast emit bench {SLURM} --bench-cmd 'trtllm-bench --model meta-llama/Llama-3.1-8B "
        "prepare-dataset --output /tmp/d.json token-norm-dist --num-requests 8 && trtllm-bench "
        "--model meta-llama/Llama-3.1-8B throughput --dataset /tmp/d.json --tp 2'",
        "scriptast emit bench --request examples/bench_remote_slurm.json --explain",
    ),
    "custom": _examples(
        f"scriptast emit custom {SLURM} --custom-cmd 'python3 examples/quickstart.py' "
        "--custom-env 'NCCL_DEBUG=INFO FOO=bar' --required-devices 2",
        "scriptast emit custom --request examples/custom_local_docker.json",
    ),
    "perf-sanity": _examples(
        f"scriptast emit perf-sanity {SLURM} --perf-config-yaml "
        "tests/fixtures/trtllm/tests/scripts/perf-sanity/aggregated/llama_8b_aggr.yaml "
        "--perf-test-name llama_8b_tp4",
        "scriptast emit perf-sanity --request examples/perf_sanity_remote_slurm.json",
    ),
}
VERIFY = _examples(
    "scriptast verify out/bench_local_slurm/llama_3_1_8b_instruct_bench.slurm",
    "scriptast verify *.slurm --slurm-env-file examples/slurm_env.json",
)
SCHEMA = _examples("scriptast schema request", "scriptast schema job-spec > job_spec.schema.json")
PROBE = _examples(
    "scriptast probe-slurm", "scriptast probe-slurm -o /path/to/work_dir/slurm_env.json"
)
