"""The emit command's flags: request fields (types from the request as a file writes it; help from
a table for the shared fields, from each category's part for its own), env_check and output
switches; no typer."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

import msgspec

from scriptast.contract.axes import ExecutionScenario, WorkflowType

JOB = "Job"
CLUSTER = "Cluster"
CONTAINER = "Container and models"
OUTPUT = "Output"


def _one_of(values: type[StrEnum]) -> str:
    """`a, b or c.`: the values a field takes."""
    names = [str(value) for value in values]
    return f"{', '.join(names[:-1])} or {names[-1]}."


def workflows() -> dict[str, tuple[str, str]]:
    """`scriptast emit <name>`: (workflow_type, help), from the category registry."""
    from scriptast.builders.categories import CATEGORIES

    return {c.cli_name: (c.name, c.cli_help) for c in CATEGORIES.values()}


def foreign_options(name: str) -> dict[str, str]:
    """The request fields only other categories use, each with the first category that owns it
    (`emit <name> --help` hides them, and `emit <name>` refuses them as flags)."""
    from scriptast.builders.categories import CATEGORIES

    own = set(CATEGORIES[name].options)
    found: dict[str, str] = {}
    for other in CATEGORIES.values():
        for option in other.options:
            if other.name != name and option not in own:
                found.setdefault(option, other.cli_name)
    return dict(sorted(found.items()))


PARTS_AFTER = "repo_root"
"""--help lists the categories' own fields after this one."""
# Each shared request field's help and panel, in the order --help lists them; the flag's type
# is the field's in the request (a test and REQUEST_FLAGS below keep the two in step). A
# category's own fields carry their help.
REQUEST_HELP: dict[str, tuple[str, str]] = {
    "workflow_type": (_one_of(WorkflowType), JOB),
    "execution_scenario": (_one_of(ExecutionScenario), JOB),
    "work_dir": ("Where the script and job_spec.json are written (created if absent).", JOB),
    "repo_root": ("The TensorRT-LLM checkout.", JOB),
    "model_name": ("Short model name (derived when absent).", JOB),
    "required_devices": ("GPUs needed (derived when absent).", JOB),
    "node_count": ("Slurm nodes (derived when absent).", JOB),
    "skill_dir": ("trtllm-case-executor's skill folder; accepted, unused.", JOB),
    "reference": (
        "A references file (TOML or YAML) the job's figures are held against by run; see "
        "docs/references.md.",
        JOB,
    ),
    "baseline": (
        "history: run holds each figure without a reference against the median of its last "
        "comparable PASSED runs in the results store (see docs/results.md).",
        JOB,
    ),
    "hang_pattern": (
        "A regular expression that, found in a log line, means the job hangs: run cancels it "
        "and judges it HANG (default: TRT-LLM's detector line, 'Hang detected after N "
        "seconds').",
        JOB,
    ),
    "partition": ("Slurm partition (must be in slurm_env.json).", CLUSTER),
    "account": ("Slurm account.", CLUSTER),
    "cluster_name": (
        "The cluster's name, for submit.py's per-cluster UCX settings (perf_sanity; default "
        "slurm_env's cluster_name).",
        CLUSTER,
    ),
    "slurm_env_file": ("slurm_env.json from the cluster probe.", CLUSTER),
    "time_limit": ("Slurm time limit (default 02:00:00).", CLUSTER),
    "remote_repo_path": ("The checkout on the cluster (remote_slurm).", CLUSTER),
    "remote_work_dir": ("The work directory on the cluster (remote_slurm).", CLUSTER),
    "remote_home": (
        "The home directory on the cluster (remote_slurm); default slurm_env's home, else the "
        "parent of its remote_cwd.",
        CLUSTER,
    ),
    "persistent_mode": ("Persistent allocation fields in job_spec (local_slurm).", CLUSTER),
    "device_type": (
        "Required GPU type (recorded in job_spec.json; a references file's entries may be "
        "keyed by it).",
        CLUSTER,
    ),
    "container_image": ("Image to use instead of the repo's image-tags file.", CONTAINER),
    "llm_models_root": ("Models root inside the container (required).", CONTAINER),
    "checkpoint_path": (
        "Host path of a checkpoint (its parent is mounted); a cluster path for remote_slurm.",
        CONTAINER,
    ),
    "models_path": (
        "Host path of the models directory; a cluster path for remote_slurm.",
        CONTAINER,
    ),
    "install": (
        "Run the pip install step (for remote_slurm, in the checkout at remote_repo_path).",
        CONTAINER,
    ),
    "install_mode": (
        "source (pip install -e ., default) or wheel (a prebuilt tensorrt_llm wheel).",
        CONTAINER,
    ),
    "wheel_path": (
        "The wheel for --install-mode wheel (else the first build/tensorrt_llm-*.whl).",
        CONTAINER,
    ),
}


def _unwrapped(kind: msgspec.inspect.Type) -> msgspec.inspect.Type:
    return kind.type if isinstance(kind, msgspec.inspect.Metadata) else kind


def _flag_kind(field: msgspec.inspect.Field) -> type:
    """str, int or bool: the flag type of a request field (enums and literals are str)."""
    outer = _unwrapped(field.type)
    kinds = outer.types if isinstance(outer, msgspec.inspect.UnionType) else (outer,)
    for kind in kinds:
        if isinstance(kind, msgspec.inspect.BoolType):
            return bool
        if isinstance(kind, msgspec.inspect.IntType):
            return int
        if isinstance(
            kind, msgspec.inspect.StrType | msgspec.inspect.EnumType | msgspec.inspect.LiteralType
        ):
            return str
    raise TypeError(f"request field {field.name} has no flag type")


def _help(field: msgspec.inspect.Field) -> tuple[str, str]:
    """(help, panel) of a request field: the table's, else the description its part gives."""
    if field.name in REQUEST_HELP:
        return REQUEST_HELP[field.name]
    outer = field.type
    if isinstance(outer, msgspec.inspect.Metadata) and outer.extra_json_schema:
        return str(outer.extra_json_schema.get("description", "")), JOB
    raise AssertionError(f"request field {field.name} has no help: give it a description")


NO_FLAG = ("env_check", "only_tests", "total_required_devices", "required_devices_per_node",
           "skip_install")  # fmt: skip
"""Request fields with no flag of their own: env_check has one a key; only_tests is a list
(emit --rerun-failed RUN fills it); trtllm-case-executor's own names for what flags already
set (--required-devices, --no-install) come in a request file."""


def _request_flags() -> tuple[tuple[str, type, str, str], ...]:
    from scriptast.builders.read_request import request_type

    info = msgspec.inspect.type_info(request_type())
    assert isinstance(info, msgspec.inspect.StructType)
    fields = [f for f in info.fields if f.name not in NO_FLAG]
    stale = set(REQUEST_HELP) - {f.name for f in fields}
    if stale:
        raise AssertionError(f"REQUEST_HELP names fields the request lacks: {sorted(stale)}")
    shared = list(REQUEST_HELP)
    owned = [f.name for f in fields if f.name not in REQUEST_HELP]
    cut = shared.index(PARTS_AFTER) + 1
    by_name = {f.name: f for f in fields}
    order = [*shared[:cut], *owned, *shared[cut:]]
    return tuple((name, _flag_kind(by_name[name]), *_help(by_name[name])) for name in order)


# (field, type, help, panel); types are str, int or bool.
REQUEST_FLAGS = _request_flags()
ENV_CHECK_FLAGS: tuple[tuple[str, type, str], ...] = (
    ("gpus_per_node", int, "GPUs per node of a docker host (the env check's)."),
    ("available_gpus", int, "GPUs the env check found available."),
    ("default_models_repo", str, "Models host path the env check found (a fallback)."),
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
    (
        "array",
        bool,
        "With --requests: also one Slurm job array a shape (partition, account, nodes, "
        "tasks, gres, time, image, mounts), in <sweep>_arrays/ beside the sweep file; "
        "docker jobs run as processes here.",
    ),
    (
        "array_limit",
        int,
        "With --array: at most this many tasks of an array run at once (%N), "
        "and of the docker jobs (default: one at a time).",
    ),
    ("stdout", bool, "Print the script instead of writing files."),
    ("shell", str, "With --stdout, quote the docker command for this shell."),
    ("json", bool, "Print the result (files, job_spec) as JSON."),
    ("explain", bool, "Print where every value came from (on stderr)."),
    ("debug", bool, "Show a traceback on errors."),
    (
        "rerun_failed",
        int,
        "pytest: a job of just the failed tests of this stored run (its id in "
        "`scriptast results list`), the request otherwise the same, in <work_dir>_rerun<RUN>.",
    ),
    (
        "results",
        str,
        "With --rerun-failed: the results store (a path, sqlite:///PATH or "
        "postgresql://...; default: the SCRIPTAST_RESULTS variable, else results.db in "
        "XDG_DATA_HOME's scriptast folder).",
    ),
)


def flag(field: str) -> str:
    """The command-line spelling of a field: `--kebab-case`."""
    return "--" + field.replace("_", "-")


def negated_flag(field: str) -> str:
    """The spelling that turns a request switch off: `--no-kebab-case`."""
    return "--no-" + field.replace("_", "-")
