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


def workflow_examples(examples: tuple[str, ...]) -> str:
    """A category's examples, `<slurm>` standing for the Slurm flags of the bundled example."""
    return _examples(*(line.replace("<slurm>", SLURM) for line in examples))


VERIFY = _examples(
    "scriptast verify out/bench_local_slurm/llama_3_1_8b_instruct_bench.slurm",
    "scriptast verify *.slurm --slurm-env-file examples/slurm_env.json",
)
SCHEMA = _examples("scriptast schema request", "scriptast schema job-spec > job_spec.schema.json")
PROBE = _examples(
    "scriptast probe-slurm",
    "scriptast probe-slurm -o /path/to/work_dir/slurm_env.json",
    "scriptast probe-slurm --ssh-host login.cluster -o slurm_env.json",
)
RUN = _examples(
    "scriptast run out/bench_local_slurm",
    "scriptast run out/sweep/* --json > results.json",
    "scriptast run out/job --detach && scriptast watch out/job",
    "scriptast run out/job --run-timeout 30m --dry-run",
)
JUDGE = _examples(
    "scriptast judge console.log --junit results.xml",
    "scriptast judge bench.log --report-json report.json --reference references.toml",
    "scriptast judge eval.log --model meta-llama/Llama-3.1-8B-Instruct --repo-root TensorRT-LLM",
    "scriptast judge out/job/*.out --job-spec out/job/job_spec.json --store",
)
WATCH = _examples("scriptast watch out/job", "scriptast watch out/sweep/* --json")
CANCEL = _examples("scriptast cancel out/job")
ALLOC = _examples("scriptast alloc list", "scriptast alloc release 1234")
