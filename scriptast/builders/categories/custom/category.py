"""Category 3, custom: any command or script on one node, run in every task by a generated
slurm_run_custom.sh (strict, ERR trap, custom_env exports)."""

from __future__ import annotations

import math
import posixpath
from pathlib import Path

from scriptast.builders import common
from scriptast.builders.categories.custom.request import CustomRequest
from scriptast.builders.category import (
    Category,
    Facts,
    MountFolders,
    Patterns,
    Resolution,
    SlurmScripts,
)
from scriptast.builders.request.fields import Request
from scriptast.builders.resolution import model_name as names
from scriptast.builders.resolution.job import ResolvedJob, UserCommand, Work
from scriptast.builders.resolution.parallelism import (
    Parallelism,
    Sourced,
    check_max,
    requested_devices,
    single_node,
)
from scriptast.builders.resolution.trail import Trail
from scriptast.common.text_files import require_file
from scriptast.contract.axes import ExecutionScenario
from scriptast.errors import ResolveError
from scriptast.model.node import IDENTIFIER
from scriptast.model.script import Script, Statement
from scriptast.model.slurm import SrunStep
from scriptast.model.statements import Assign, Comment, Export, ShellStatement, cmd
from scriptast.model.words import Lit, Param, RawShell, concat
from scriptast.readers.shellwords import tokenize

RUN_SCRIPT = "slurm_run_custom.sh"
ERR_TRAP = 'echo "ERROR: ${BASH_SOURCE[0]}:${LINENO}: command failed: ${BASH_COMMAND}" >&2'
"""The ERR trap's command: shell text that runs when the trap fires (expanded then)."""


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
    if request.execution_scenario is not ExecutionScenario.remote_slurm:
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


def resolve(facts: Facts, trail: Trail) -> Resolution:
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


def build_slurm(job: ResolvedJob) -> SlurmScripts:
    """The .slurm (install, then every task runs slurm_run_custom.sh) and that run script."""
    work = job.work_as(CustomWork)
    assert job.slurm is not None
    step = SrunStep(
        ntasks=job.slurm.ntasks,
        ntasks_per_node=job.slurm.ntasks_per_node,
        kill_on_bad_exit=True,
        container=common.container(job),
        command=(Lit(value="bash"), Lit(value=work.run_script)),
    )
    script = common.slurm_script(job, "TRT-LLM custom job", common.exit_capture(step, "Custom job"))
    carried = (work.script_local,) if work.script_local is not None else ()
    return SlurmScripts(
        main=script,
        others=((RUN_SCRIPT, run_script(job)),),
        carried=carried,
    )


def run_script(job: ResolvedJob) -> Script:
    """slurm_run_custom.sh: strict, the ERR trap, custom_env exports, MPI cleared on one
    node, then the custom command, its exit code echoed and returned."""
    work = job.work_as(CustomWork)
    body: list[Statement] = [
        cmd("set", "-Eeuo", "pipefail"),
        cmd("trap", RawShell(text=f"'{ERR_TRAP}'"), "ERR"),
    ]
    body += [Export(name=key, value=Lit(value=value)) for key, value in work.env]
    if job.slurm is None or job.slurm.nodes == 1:
        body.append(common.clear_mpi_env(common.KEEP_RANK))
    body.append(cmd("cd", job.project_path))
    rc = Param(name="rc")
    body += [
        cmd("set", "+e"),
        common.run_command(work.command),
        Assign(name="rc", value=Param(name="?")),
        cmd("set", "-e"),
        cmd(
            "echo",
            concat(
                "Rank",
                Param(name="SLURM_PROCID", form="default", default="0"),
                " Custom command finished with exit code ",
                rc,
            ),
        ),
        cmd("exit", rc),
    ]
    return Script(
        header=(Comment(text="Custom command runner, generated by scriptast; run by srun."),),
        body=tuple(body),
    )


def docker_commands(job: ResolvedJob) -> tuple[ShellStatement, ...]:
    """custom_env's exports, then the command."""
    work = job.work_as(CustomWork)
    exports = tuple(Export(name=key, value=Lit(value=value)) for key, value in work.env)
    return (*exports, common.run_command(work.command))


CATEGORY = Category(
    name="custom",
    suffix="custom",
    cli_name="custom",
    cli_help="Category 3: any command or script, with slurm_run_custom.sh.",
    docs="Category 3: any command or script, run by a generated `slurm_run_custom.sh`.",
    examples=(
        "scriptast emit custom <slurm> --custom-cmd 'python3 examples/quickstart.py' "
        "--custom-env 'NCCL_DEBUG=INFO FOO=bar' --required-devices 2",
        "scriptast emit custom --request examples/custom_local_docker.json",
    ),
    options=("custom_cmd", "custom_script", "custom_env"),
    request_part=CustomRequest,
    patterns=Patterns(success=(), failure=("Error", "Traceback")),
    check_request=check_request,
    mount_folders=mount_folders,
    resolve=resolve,
    build_slurm=build_slurm,
    docker_commands=docker_commands,
)
