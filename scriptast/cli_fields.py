"""The request's CLI flags: one typer option per request field (kebab-case), in help panels."""

from __future__ import annotations

import inspect
from typing import Any

import typer

JOB = "Job"
CLUSTER = "Cluster"
CONTAINER = "Container and models"
OUTPUT = "Output"

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
    ("persistent_mode", bool, "Persistent-allocation fields in job_spec (local_slurm).", CLUSTER),
    ("device_type", str, "Required GPU type (recorded only).", CLUSTER),
    ("container_image", str, "Image to use instead of the repo's image-tags file.", CONTAINER),
    ("llm_models_root", str, "Models root inside the container (required).", CONTAINER),
    ("checkpoint_path", str, "Host path of a checkpoint (its parent is mounted).", CONTAINER),
    ("models_path", str, "Host path of the models directory.", CONTAINER),
    ("install", bool, "Run the pip install step (always off for remote_slurm).", CONTAINER),
)
ENV_CHECK_FLAGS: tuple[tuple[str, type, str], ...] = (
    ("gpus_per_node", int, "env_check.gpus_per_node: GPUs per node of a docker host."),
    ("available_gpus", int, "env_check.available_gpus."),
    ("default_models_repo", str, "env_check.default_models_repo: models host path fallback."),
)


def _slurm_env_names(ctx: typer.Context, key: str) -> list[str]:
    """Names from the slurm_env.json given earlier on the command line (or in --request)."""
    import json

    path = ctx.params.get("slurm_env_file")
    if not path and ctx.params.get("request"):
        try:
            with open(ctx.params["request"], encoding="utf-8") as stream:
                path = json.load(stream).get("slurm_env_file")
        except (OSError, ValueError, AttributeError):
            path = None
    if not path:
        return []
    try:
        with open(path, encoding="utf-8") as stream:
            data = json.load(stream)
    except (OSError, ValueError):
        return []
    if key == "partitions":
        return [str(p.get("name")) for p in data.get("partitions", []) if isinstance(p, dict)]
    return [str(a) for a in data.get(key, [])]


def complete_partition(ctx: typer.Context, incomplete: str) -> list[str]:
    """Partition names from --slurm-env-file."""
    return [n for n in _slurm_env_names(ctx, "partitions") if n.startswith(incomplete)]


def complete_account(ctx: typer.Context, incomplete: str) -> list[str]:
    """Account names from --slurm-env-file."""
    return [n for n in _slurm_env_names(ctx, "accounts") if n.startswith(incomplete)]


_COMPLETERS = {"partition": complete_partition, "account": complete_account}


def _option(name: str, kind: type, help_text: str, panel: str) -> inspect.Parameter:
    flag = "--" + name.replace("_", "-")
    declarations = [f"{flag}/--no-{flag[2:]}"] if kind is bool else [flag]
    default = typer.Option(
        None,
        *declarations,
        help=help_text,
        rich_help_panel=panel,
        autocompletion=_COMPLETERS.get(name),
    )
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=kind | None
    )


def request_parameters(skip: tuple[str, ...] = ()) -> list[inspect.Parameter]:
    """typer parameters for every request field (and env_check's) not in `skip`."""
    found = [_option(n, k, h, p) for n, k, h, p in REQUEST_FLAGS if n not in skip]
    found += [_option(n, k, h, CLUSTER) for n, k, h in ENV_CHECK_FLAGS]
    return found


def split_flags(values: dict[str, Any]) -> dict[str, Any]:
    """Flag values as request fields; env_check's flags gathered into one object."""
    fields = {n: values.get(n) for n, *_ in REQUEST_FLAGS if values.get(n) is not None}
    env_check = {n: values[n] for n, *_ in ENV_CHECK_FLAGS if values.get(n) is not None}
    if env_check:
        fields["env_check"] = env_check
    return fields
