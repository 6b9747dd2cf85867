"""eval's work and rule: world_size from --tp_size and --pp_size; a HuggingFace `--model` found
under the models root; past one node, the perf-sanity fallback."""

from __future__ import annotations

import math
import posixpath
from pathlib import Path

from scriptast.builders.category import HandOver, Resolution, SharedResolution
from scriptast.builders.request.fields import Request
from scriptast.builders.request.parts import EvalRequest, PerfSanityRequest
from scriptast.builders.resolution import model_name as names
from scriptast.builders.resolution.commands import user_command
from scriptast.builders.resolution.job import Work
from scriptast.builders.resolution.model_path import find_model_dir, is_hf_id
from scriptast.builders.resolution.parallelism import Parallelism, Sourced, int_flag
from scriptast.builders.resolution.trail import Trail
from scriptast.common.text_files import require_file
from scriptast.errors import ResolveError
from scriptast.plan.steps import UserCommand
from scriptast.readers.shellwords import tokenize

REQUIREMENTS = "examples/trtllm-eval/requirements.txt"


class EvalWork(Work, frozen=True, kw_only=True, tag="eval"):
    """The eval command (its HuggingFace `--model` made a local path) and whether the
    checkout has trtllm-eval's requirements file to install."""

    command: UserCommand
    requirements: bool = False

    def commands(self) -> tuple[tuple[str, UserCommand], ...]:
        return (("eval_cmd", self.command),)

    def extra_requirements(self) -> tuple[str, ...]:
        return (REQUIREMENTS,) if self.requirements else ()


def check_request(request: Request) -> None:
    """eval_cmd is required."""
    if not request.part(EvalRequest).eval_cmd:
        raise ResolveError("eval_cmd is required for workflow_type eval", field="eval_cmd")


def eval_parallelism(
    eval_cmd: str, gpus_per_node: Sourced | None
) -> tuple[Parallelism, Sourced | None]:
    """eval: world_size = --tp_size * --pp_size; `--gpus_per_node` overrides the cluster's."""
    argv = [t.value for t in tokenize(eval_cmd, "eval_cmd") if t.kind == "word"]
    tp = int_flag(argv, "--tp_size", 1, "eval_cmd")
    pp = int_flag(argv, "--pp_size", 1, "eval_cmd")
    override = int_flag(argv, "--gpus_per_node", 0, "eval_cmd")
    per_node = override if override.value else gpus_per_node
    world = tp.value * pp.value
    devices = Sourced(world, f"tp_size * pp_size = {tp.value} * {pp.value}")
    multi = per_node is not None and world > per_node.value
    nodes = math.ceil(world / per_node.value) if multi and per_node else 1
    result = Parallelism(
        devices, world, tp, pp, Sourced(0, "default"), nodes, world, math.ceil(world / nodes), multi
    )
    return result, per_node


def resolve(facts: SharedResolution, trail: Trail) -> Resolution | HandOver:
    """world_size from the command; past one node (or given a disaggregated config), handed
    to perf_sanity, which runs it with accuracy on (Slurm only)."""
    request = facts.request
    eval_cmd = request.part(EvalRequest).eval_cmd
    assert eval_cmd is not None
    par, per_node = eval_parallelism(eval_cmd, facts.gpus_per_node)
    disaggregated = _disaggregated_config(request)
    if par.multi_node_eval and not facts.is_slurm:
        raise ResolveError(
            f"eval world_size = {par.world_size} needs {par.nodes} nodes (gpus_per_node = "
            f"{per_node.value if per_node else '?'}), but local_docker runs on this one "
            "machine and trtllm-eval is single-node; run it on Slurm (local_slurm or "
            "remote_slurm), where it goes through the perf-sanity path",
            field="eval_cmd",
        )
    if disaggregated and not facts.is_slurm:
        raise ResolveError(
            f"perf_config_yaml {disaggregated} is a disaggregated config: disaggregated "
            "accuracy testing goes through the perf-sanity path, which submits to Slurm; run "
            "it on local_slurm or remote_slurm, or drop perf_config_yaml to run trtllm-eval "
            "here",
            field="perf_config_yaml",
        )
    if par.multi_node_eval or disaggregated:
        why = (
            f"eval over {par.nodes} nodes falls back to perf-sanity"
            if par.multi_node_eval
            else "disaggregated accuracy testing takes the perf-sanity path, as a multi-node "
            "eval does"
        )
        if not request.part(PerfSanityRequest).perf_config_yaml:
            raise ResolveError(
                f"eval world_size = {par.world_size} needs {par.nodes} nodes (gpus_per_node = "
                f"{per_node.value if per_node else '?'}), but trtllm-eval is single-node only; "
                "pass --perf-config-yaml to run it through the perf-sanity path with "
                "accuracy.enable_accuracy_test: true",
                field="perf_config_yaml",
            )
        return HandOver(
            to="perf_sanity",
            why=why,
            parallelism=par,
            gpus_per_node=per_node,
            derived_name=names.from_model_flag(eval_cmd, "eval_cmd"),
        )
    config = request.part(PerfSanityRequest).perf_config_yaml
    if config:
        trail.warn(
            f"perf_config_yaml {config} is not used: the eval fits one node (world_size "
            f"{par.world_size}) and the config is aggregated, so trtllm-eval runs directly; "
            "only a multi-node eval or a disaggregated config takes the perf-sanity path"
        )
    command = _eval_command(eval_cmd, facts.models_host_path, facts, trail)
    requirements = (Path(request.repo_root) / REQUIREMENTS).is_file()
    return Resolution(
        work=EvalWork(command=command, requirements=requirements),
        parallelism=par,
        derived_name=names.from_model_flag(eval_cmd, "eval_cmd"),
        world_source="tp * pp",
        gpus_per_node=per_node,
        gres_need=par.ntasks_per_node,
    )


def _disaggregated_config(request: Request) -> str | None:
    """The request's perf_config_yaml when it is a disaggregated config (worker_config), else
    None."""
    given = request.part(PerfSanityRequest).perf_config_yaml
    if not given:
        return None
    from scriptast.builders.resolution.perf_config import load_config, runtime_mode

    path = require_file(given, "perf_config_yaml")
    return path if runtime_mode(load_config(path), path) == "disaggregated" else None


def _eval_command(
    eval_cmd: str, models_host: str | None, facts: SharedResolution, trail: Trail
) -> UserCommand:
    """eval_cmd with a HuggingFace `--model` rewritten to its directory under llm_models_root."""
    command = user_command(eval_cmd, "eval_cmd")
    argv = list(command.argv or ())
    for index, word in enumerate(argv):
        inline = word.startswith("--model=")
        if word != "--model" and not inline:
            continue
        value_index = index if inline else index + 1
        if value_index >= len(argv):
            break
        value = argv[value_index].removeprefix("--model=")
        if not is_hf_id(value):
            continue
        if facts.placement.remote:
            trail.warn(
                f"model {value!r} is a HuggingFace id; the models host path "
                f"{models_host or '(unknown)'} is on the cluster, which scriptast does not "
                "search from here: give --model as its path under llm_models_root, or "
                "trtllm-eval will try to download it"
            )
            continue
        relative = find_model_dir(models_host, value) if models_host else None
        if relative is None:
            trail.warn(
                f"model {value!r} was not found under the models host path "
                f"{models_host or '(unknown)'} (depth <= 3); trtllm-eval will try to download it"
            )
            continue
        local = posixpath.join(facts.request.llm_models_root or "/", relative)
        argv[value_index] = f"--model={local}" if inline else local
        trail.add("eval --model", local, f"HF id {value} found under {models_host}")
    if command.argv is None:
        if "--model" in eval_cmd:
            trail.warn("eval_cmd is not a plain command; its --model was not rewritten")
        return command
    return UserCommand(text=eval_cmd, argv=tuple(argv), redirects=command.redirects)
