"""custom's work and rule: required_devices on one node, the command (or `bash <script>`) and its
KEY=VALUE exports, and the folders the job needs mounted."""

from __future__ import annotations

import math
import posixpath
from pathlib import Path

from scriptast.builders.category import (
    MountFolders,
    Resolution,
    SharedResolution,
)
from scriptast.builders.request.fields import Request
from scriptast.builders.request.parts import CustomRequest
from scriptast.builders.resolution import model_name as names
from scriptast.builders.resolution.job import Work
from scriptast.builders.resolution.parallelism import (
    Parallelism,
    Sourced,
    check_max,
    requested_devices,
    single_node,
)
from scriptast.builders.resolution.trail import Trail
from scriptast.common.text_files import require_file
from scriptast.errors import ResolveError
from scriptast.model.node import IDENTIFIER
from scriptast.plan.steps import UserCommand
from scriptast.readers.shellwords import tokenize

RUN_SCRIPT = "slurm_run_custom.sh"


class CustomWork(Work, frozen=True, kw_only=True, tag="custom"):
    """The command, its KEY=VALUE exports, the run script's path in the job (it is written
    into work_dir as slurm_run_custom.sh) and the local custom script to carry to the cluster,
    if any."""

    command: UserCommand
    env: tuple[tuple[str, str], ...] = ()
    run_script: str
    script_local: str | None = None

    def commands(self) -> tuple[tuple[str, UserCommand], ...]:
        return (("custom_cmd", self.command),)

    def carried(self) -> tuple[str, ...]:
        return (self.script_local,) if self.script_local is not None else ()


def check_request(request: Request) -> None:
    """custom_cmd or custom_script (with both, the script runs: see resolve)."""
    if not (request.part(CustomRequest).custom_cmd or request.part(CustomRequest).custom_script):
        raise ResolveError(
            "custom_cmd or custom_script is required for workflow_type custom", field="custom_cmd"
        )


BASH_READONLY = frozenset({"UID", "EUID", "PPID", "SHELLOPTS", "BASHOPTS", "BASH_VERSINFO"})
"""Names bash refuses to assign (`readonly variable`): under `set -e` the run script would stop."""
BASH_DYNAMIC = frozenset(
    {"BASHPID", "GROUPS", "FUNCNAME", "BASH_COMMAND", "LINENO", "EPOCHSECONDS", "EPOCHREALTIME",
     "SRANDOM", "BASH_LINENO", "BASH_SOURCE", "HISTCMD", "RANDOM"}
)  # fmt: skip
"""Names whose assignment bash ignores or overwrites: the command would never see the value."""


def parse_custom_env(text: str | None) -> tuple[tuple[str, str], ...]:
    """Space-separated KEY=VALUE pairs, split as the shell would (quotes group)."""
    if not text:
        return ()
    pairs = []
    for token in tokenize(text, "custom_env"):
        if token.kind != "word":
            raise ResolveError(
                f"custom_env has a shell operator {token.value!r}: give KEY=VALUE pairs",
                field="custom_env",
            )
        key, equals, value = token.value.partition("=")
        if not equals:
            raise ResolveError(
                f"custom_env entry {token.value!r} has no '=': give space-separated "
                "KEY=VALUE pairs",
                field="custom_env",
            )
        if not IDENTIFIER.match(key):
            raise ResolveError(
                f"custom_env key {key!r} is not a shell identifier ([A-Za-z_][A-Za-z0-9_]*)",
                field="custom_env",
            )
        if key in BASH_READONLY or key in BASH_DYNAMIC:
            why = "is read-only" if key in BASH_READONLY else "is set by bash itself"
            raise ResolveError(
                f"custom_env key {key!r} {why}: the run script cannot export it; give the value "
                "another name",
                field="custom_env",
            )
        pairs.append((key, value))
    return tuple(pairs)


def custom_script(request: Request, log_dir: str) -> tuple[str | None, str | None]:
    """(the path the job runs, the local file to copy there or None). remote_slurm: a script
    that exists here travels to remote_work_dir; any other is a path on the cluster."""
    path = request.part(CustomRequest).custom_script
    if not path:
        return None, None
    if not request.placement.remote:
        return require_file(path, "custom_script"), None
    if Path(path).is_file():
        return posixpath.join(log_dir, posixpath.basename(path)), path
    return path, None


def mount_folders(request: Request, log_dir: str) -> MountFolders:
    """The custom script's folder and the work directory (it holds slurm_run_custom.sh)."""
    script, _ = custom_script(request, log_dir)
    folders = [(log_dir, "work directory (holds slurm_run_custom.sh)")]
    if script:
        folders.insert(0, (posixpath.dirname(script), "custom_script folder"))
    return MountFolders(folders=tuple(folders), note=", custom_script folder" if script else "")


def custom_parallelism(
    required_devices: int | None, node_count: int | None, gpus_per_node: Sourced | None
) -> Parallelism:
    """custom: required_devices (1); at most 8 and one node."""
    devices = requested_devices(required_devices)
    check_max(devices, "custom commands")
    if gpus_per_node is None:
        raise ResolveError(
            "gpus_per_node is unknown: the partition has no gpus_per_node or gpu gres, and "
            "env_check.gpus_per_node is not given; pass env_check.gpus_per_node "
            "(--gpus-per-node)",
            field="env_check.gpus_per_node",
        )
    nodes = math.ceil(devices.value / gpus_per_node.value)
    if nodes <= 1 and node_count is not None and node_count > 1:
        raise ResolveError(
            f"node_count = {node_count}, but custom commands run on 1 node (required_devices "
            f"= {devices.value} fits one node of {gpus_per_node.value} GPUs); drop node_count "
            "or set it to 1",
            field="node_count",
        )
    if nodes > 1:
        raise ResolveError(
            f"required_devices = {devices.value} requires {nodes} nodes (gpus_per_node = "
            f"{gpus_per_node.value}), but custom commands are limited to 1 node. "
            f"Reduce required_devices to at most {gpus_per_node.value}.",
            field="required_devices",
        )
    one = Sourced(1, "default")
    return Parallelism(
        devices, devices.value, one, one, Sourced(0, "default"), *single_node(devices.value)
    )


def resolve(facts: SharedResolution, trail: Trail) -> Resolution:
    """required_devices on one node; the command (or `bash <script>`) and its exports."""
    request = facts.request
    par = custom_parallelism(request.required_devices, request.node_count, facts.gpus_per_node)
    script, script_local = custom_script(request, facts.log_dir)
    derived = None
    own = request.part(CustomRequest)
    if script and own.custom_cmd:
        trail.warn(
            f"custom_cmd and custom_script are both given: the script runs (bash {script}), "
            f"custom_cmd {own.custom_cmd!r} does not"
        )
    if script:
        command = UserCommand(text=f"bash {script}", argv=("bash", script))
    else:
        assert own.custom_cmd is not None
        command = UserCommand(text=own.custom_cmd)
        derived = names.from_model_flag(own.custom_cmd, "custom_cmd")
    work = CustomWork(
        command=command,
        env=parse_custom_env(own.custom_env),
        run_script=posixpath.join(facts.log_dir, RUN_SCRIPT),
        script_local=script_local,
    )
    return Resolution(
        work=work,
        parallelism=par,
        derived_name=derived or "custom",
        world_source="required_devices",
        gpus_per_node=facts.gpus_per_node,
        gres_need=par.ntasks_per_node,
    )
