"""The emit command's flags as one table (request fields, env_check, output switches); no typer."""

from __future__ import annotations

from typing import Any

JOB = "Job"
CLUSTER = "Cluster"
CONTAINER = "Container and models"
OUTPUT = "Output"

# `scriptast emit <name>`: (workflow_type, help).
WORKFLOWS: dict[str, tuple[str, str]] = {
    "pytest": ("pytest", "Category 2: run a pytest test id on one node."),
    "eval": ("eval", "Category 5: run trtllm-eval (single node, always under --mpi)."),
    "bench": ("bench", "Category 6: trtllm-bench, optionally 'prepare-dataset && throughput'."),
    "custom": ("custom", "Category 3: any command or script, with slurm_run_custom.sh."),
    "perf-sanity": ("perf_sanity", "Category 4: run the repo's submit.py on a perf config."),
}

# (field, type, help, panel); types are str, int or bool.
REQUEST_FLAGS: tuple[tuple[str, type, str, str], ...] = (
    ("workflow_type", str, "pytest, eval, bench, custom or perf_sanity.", JOB),
    ("execution_scenario", str, "local_docker, local_slurm or remote_slurm.", JOB),
    ("work_dir", str, "Where the script and job_spec.json are written (created if absent).", JOB),
    ("repo_root", str, "The TensorRT-LLM checkout.", JOB),
    ("test_cmd", str, "pytest command (pytest workflow).", JOB),
    ("eval_cmd", str, "trtllm-eval command (eval workflow).", JOB),
    ("bench_cmd", str, "trtllm-bench command, optionally 'prepare && run' (bench workflow).", JOB),
    ("custom_cmd", str, "Any command (custom workflow).", JOB),
    ("custom_script", str, "A script to run with bash (custom workflow).", JOB),
    ("custom_env", str, "Space-separated KEY=VALUE pairs exported for the custom command.", JOB),
    ("perf_config_yaml", str, "Perf-sanity / benchmark config YAML.", JOB),
    ("perf_test_name", str, "Server config name for aggregated mode.", JOB),
    ("model_name", str, "Short model name (derived when absent).", JOB),
    ("required_devices", int, "GPUs needed (derived when absent).", JOB),
    ("node_count", int, "Slurm nodes (derived when absent).", JOB),
    ("skill_dir", str, "Accepted for compatibility; unused.", JOB),
    ("partition", str, "Slurm partition (must be in slurm_env.json).", CLUSTER),
    ("account", str, "Slurm account.", CLUSTER),
    ("slurm_env_file", str, "slurm_env.json from the cluster probe.", CLUSTER),
    ("time_limit", str, "Slurm time limit (default 02:00:00).", CLUSTER),
    ("remote_repo_path", str, "The checkout on the cluster (remote_slurm).", CLUSTER),
    ("remote_work_dir", str, "The work directory on the cluster (remote_slurm).", CLUSTER),
    (
        "remote_home",
        str,
        "The home directory on the cluster (remote_slurm), when slurm_env has no remote_cwd.",
        CLUSTER,
    ),
    ("persistent_mode", bool, "Persistent-allocation fields in job_spec (local_slurm).", CLUSTER),
    ("device_type", str, "Required GPU type (recorded only).", CLUSTER),
    ("container_image", str, "Image to use instead of the repo's image-tags file.", CONTAINER),
    ("llm_models_root", str, "Models root inside the container (required).", CONTAINER),
    (
        "checkpoint_path",
        str,
        "Host path of a checkpoint (its parent is mounted); a cluster path for remote_slurm.",
        CONTAINER,
    ),
    (
        "models_path",
        str,
        "Host path of the models directory; a cluster path for remote_slurm.",
        CONTAINER,
    ),
    ("install", bool, "Run the pip install step (always off for remote_slurm).", CONTAINER),
    (
        "install_mode",
        str,
        "source (pip install -e ., default) or wheel (a prebuilt tensorrt_llm wheel).",
        CONTAINER,
    ),
    (
        "wheel_path",
        str,
        "The wheel for --install-mode wheel (else the first build/tensorrt_llm-*.whl).",
        CONTAINER,
    ),
)
ENV_CHECK_FLAGS: tuple[tuple[str, type, str], ...] = (
    ("gpus_per_node", int, "env_check.gpus_per_node: GPUs per node of a docker host."),
    ("available_gpus", int, "env_check.available_gpus."),
    ("default_models_repo", str, "env_check.default_models_repo: models host path fallback."),
)


def split_flags(values: dict[str, Any]) -> dict[str, Any]:
    """Flag values as request fields; env_check's flags gathered into one object."""
    fields = {n: values.get(n) for n, *_ in REQUEST_FLAGS if values.get(n) is not None}
    env_check = {n: values[n] for n, *_ in ENV_CHECK_FLAGS if values.get(n) is not None}
    if env_check:
        fields["env_check"] = env_check
    return fields


# (field, type, help); a bool here is a switch without a --no- form, off by default.
OUTPUT_FLAGS: tuple[tuple[str, type, str], ...] = (
    ("request", str, "Request file (JSON, TOML or YAML); '-' reads stdin."),
    ("requests", str, "A sweep: one JSON request a line, each its own work_dir."),
    ("stdout", bool, "Print the script instead of writing files."),
    ("shell", str, "With --stdout, quote the docker command for this shell."),
    ("json", bool, "Print the result (files, job_spec) as JSON."),
    ("explain", bool, "Print where every value came from (on stderr)."),
    ("debug", bool, "Show a traceback on errors."),
)


def flag(field: str) -> str:
    """The command-line spelling of a field: `--kebab-case`."""
    return "--" + field.replace("_", "-")


def negated_flag(field: str) -> str:
    """The spelling that turns a request switch off: `--no-kebab-case`."""
    return "--no-" + field.replace("_", "-")
