"""The bash every backend's scripts are made of: the install commands, MPI environment clearing,
a user command as a statement (typed argv when plain, else `bash -c`), and each action of a
category's steps as the statements that do it."""

from __future__ import annotations

import functools
import posixpath

from scriptast.model.statements import (
    AndOr,
    Assign,
    Command,
    Export,
    For,
    If,
    Payload,
    Redirect,
    ShellStatement,
    Unset,
    cmd,
    to_stderr,
)
from scriptast.model.words import Lit, Param, RawShell
from scriptast.plan.launch import WHEEL_GLOB, LaunchPlan
from scriptast.plan.steps import (
    Action,
    ChangeDir,
    ClearMpiEnv,
    ExportModelsRoot,
    ExportVar,
    RunCommand,
    ShowGpus,
    UserCommand,
)

MPI_PREFIXES = ("PMI", "MPI", "OMPI", "SLURM")
"""Variable-name prefixes of the MPI/PMI/PMIx and Slurm step environment (`PMI` covers `PMIX`)."""
STRICT = ("set", "-euo", "pipefail")


PIP = ("pip", "install", "--retries", "10")


def install_commands(job: LaunchPlan) -> tuple[ShellStatement, ...]:
    """`cd <project>`, TensorRT-LLM from source (`pip install -e .`) or from a wheel (the
    given one, else the first build/tensorrt_llm-*.whl), then the dev requirements and those
    the job's work adds, as TRT-LLM's own slurm_install.sh installs them."""
    found: list[ShellStatement] = [cmd("cd", job.project_path)]
    if job.install_mode == "source":
        found.append(cmd(*PIP, "-e", "."))
    elif job.wheel_path:
        folder = posixpath.dirname(job.wheel_path) or "."
        found.append(cmd(*PIP, f"--find-links={folder}", job.wheel_path))
    else:
        found += _found_wheel(job.project_path)
    for requirements in ("requirements-dev.txt", *job.extra_requirements):
        found.append(cmd(*PIP, "-r", requirements))
    return tuple(found)


def _found_wheel(project: str) -> tuple[ShellStatement, ...]:
    """`wheel=<the first build/tensorrt_llm-*.whl>` (the glob expands sorted), an error when
    there is none, then the install."""
    wheel = Param(name="wheel")
    found = Param(name="found")
    message = f"error: no {WHEEL_GLOB} in {project}: build the wheel first, or give --wheel-path"
    first = If(
        condition=AndOr(op="&&", left=cmd("[", "-z", wheel, "]"), right=cmd("[", "-f", found, "]")),
        then=(Assign(name="wheel", value=found),),
    )
    return (
        Assign(name="wheel", value=Lit(value="")),
        For(var="found", items=(RawShell(text=WHEEL_GLOB),), body=(first,)),
        If(
            condition=cmd("[", "-z", wheel, "]"),
            then=(cmd("echo", message, redirects=(to_stderr(),)), cmd("exit", "1")),
        ),
        cmd(*PIP, "--find-links=build", wheel),
    )


@functools.lru_cache(maxsize=64)
def clear_mpi_env(keep: tuple[str, ...]) -> For:
    """Unset every PMI*, PMIX*, MPI*, OMPI* and SLURM* variable except those in `keep`; with
    `("SLURM_PROCID",)` it is emitted as a loop over `"${!PMI@}" "${!MPI@}" "${!OMPI@}"
    "${!SLURM@}"` whose body unsets `"${mpi_var}"` when it is not SLURM_PROCID."""
    name = Param(name="mpi_var")
    tests = [cmd("[", name, "!=", kept, "]") for kept in keep]
    condition: Command | AndOr = tests[0]
    for test in tests[1:]:
        condition = AndOr(op="&&", left=condition, right=test)
    return For(
        var="mpi_var",
        items=tuple(Param(name=prefix, form="prefix_names") for prefix in MPI_PREFIXES),
        body=(If(condition=condition, then=(Unset(names=(name,)),)),),
    )


def run_command(command: UserCommand, prefix: tuple[str, ...] = ()) -> Command:
    """A user command: typed argv when plain, else `bash -c '<text>'` (parsed once, intact)."""
    if command.argv is None:
        return cmd(*prefix, "bash", "-c", command.text)
    redirects = tuple(_redirect(symbol, target) for symbol, target in command.redirects)
    return Command(argv=tuple(Lit(value=w) for w in (*prefix, *command.argv)), redirects=redirects)


def _redirect(symbol: str, target: str) -> Redirect:
    fd = int(symbol[0]) if symbol[0].isdigit() else None
    op = symbol[1:] if fd is not None else symbol
    assert op in (">", ">>", "<", ">&")
    return Redirect(op=op, target=Lit(value=target), fd=fd)  # type: ignore[arg-type]


def with_launcher(command: UserCommand, world_size: int) -> tuple[str, ...]:
    """`trtllm-llmapi-launch` goes first when world_size > 1 and the command lacks it."""
    if world_size <= 1:
        return ()
    words = command.argv or ()
    if words and posixpath.basename(words[0]) == "trtllm-llmapi-launch":
        return ()
    if command.argv is None and "trtllm-llmapi-launch" in command.text:
        return ()
    return ("trtllm-llmapi-launch",)


def models_root_export(job: LaunchPlan) -> Export:
    """`export LLM_MODELS_ROOT=<llm_models_root>`."""
    return Export(name="LLM_MODELS_ROOT", value=Lit(value=job.llm_models_root))


def payload(*statements: ShellStatement) -> Payload:
    """A step payload that starts strict."""
    return Payload(body=(_strict(), *statements))


@functools.cache
def _strict() -> Command:
    return cmd(*STRICT)


def statements(job: LaunchPlan, action: Action, tasks: int) -> tuple[ShellStatement, ...]:
    """The statements that do `action` in a step of `tasks` tasks (`trtllm-llmapi-launch`
    goes before a launched command only when there are several)."""
    match action:
        case ShowGpus():
            return (cmd("nvidia-smi"),)
        case ClearMpiEnv(keep=keep):
            return (clear_mpi_env(keep),)
        case ExportModelsRoot():
            return (models_root_export(job),)
        case ExportVar(name=name, value=value):
            return (Export(name=name, value=Lit(value=value)),)
        case ChangeDir(path=path):
            return (cmd("cd", path),)
        case RunCommand(command=command, launcher=launcher):
            prefix = with_launcher(command, tasks) if launcher else ()
            return (run_command(command, prefix),)
    raise TypeError(f"no statements for {type(action).__name__}")
