"""Pieces the categories share: header directives, preamble, container, install step, MPI
environment clearing, user commands as statements, exit-code capture and the script frame."""

from __future__ import annotations

import functools
import posixpath

from scriptast.builders.resolution.job import ResolvedJob, UserCommand
from scriptast.contract.job_spec import JobLogs
from scriptast.model.script import Script, Statement
from scriptast.model.slurm import Mount, PyxisContainer, SbatchDirective, SrunStep, filename_literal
from scriptast.model.statements import (
    AndOr,
    Assign,
    Command,
    Comment,
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
from scriptast.model.words import Lit, Param, RawShell, concat

MPI_PREFIXES = ("PMI", "MPI", "OMPI", "SLURM")
"""Variable-name prefixes of the MPI/PMI/PMIx and Slurm step environment (`PMI` covers `PMIX`)."""
STRICT = ("set", "-euo", "pipefail")


def batch_logs(job: ResolvedJob) -> JobLogs:
    """The `--output`/`--error` files of a Category 2, 3, 5 or 6 script, as sbatch reads them
    (`%j` for the job id; a `%` of the path written `%%`)."""
    log = filename_literal(posixpath.join(job.log_dir, job.job_name))
    return JobLogs(output=f"{log}_%j.out", error=f"{log}_%j.err", job_name=job.job_name)


def directives(job: ResolvedJob) -> tuple[SbatchDirective, ...]:
    """The `#SBATCH` header of a Category 2, 3, 5 or 6 script."""
    slurm = job.slurm
    assert slurm is not None
    logs = batch_logs(job)
    found = [
        SbatchDirective(option="job-name", value=job.job_name),
        SbatchDirective(option="output", value=logs.output),
        SbatchDirective(option="error", value=logs.error),
        SbatchDirective(option="nodes", value=slurm.nodes),
        SbatchDirective(option="ntasks", value=slurm.ntasks),
        SbatchDirective(option="ntasks-per-node", value=slurm.ntasks_per_node),
    ]
    if slurm.gres:
        found.append(SbatchDirective(option="gres", value=slurm.gres))
    found += [
        SbatchDirective(option="time", value=slurm.time_limit),
        SbatchDirective(option="partition", value=slurm.partition),
        SbatchDirective(option="account", value=slurm.account),
    ]
    return tuple(found)


def _env(name: str) -> Param:
    return Param(name=name, form="default")


# Builders below that take only values are cached: nodes are frozen, so sharing them between
# jobs built in one process is safe, and a loop over jobs then rebuilds only what differs.


@functools.cache
def preamble() -> tuple[Statement, ...]:
    """`set -euo pipefail` and the job's identity on stdout."""
    return (
        cmd(*STRICT),
        cmd("echo", concat("Job ID: ", _env("SLURM_JOB_ID"))),
        cmd("echo", concat("Submit host: ", _env("SLURM_SUBMIT_HOST"))),
        cmd("echo", concat("Nodes: ", _env("SLURM_JOB_NODELIST"))),
        cmd("echo", concat("Tasks: ", _env("SLURM_NTASKS"))),
    )


def container(job: ResolvedJob) -> PyxisContainer:
    """The pyxis container every step of the job runs in."""
    return _container(job.image_enroot, job.job_name, job.mounts, job.project_path)


@functools.lru_cache(maxsize=256)
def _container(
    image: str, name: str, mounts: tuple[Mount, ...], workdir: str | None
) -> PyxisContainer:
    return PyxisContainer(image=image, name=name, mounts=mounts, workdir=workdir)


PIP = ("pip", "install", "--retries", "10")
WHEEL_GLOB = "build/tensorrt_llm-*.whl"


def install_commands(job: ResolvedJob) -> tuple[ShellStatement, ...]:
    """`cd <project>`, TensorRT-LLM from source (`pip install -e .`) or from a wheel (the
    given one, else the first build/tensorrt_llm-*.whl), then the dev requirements and those
    the job's work adds, as TRT-LLM's own slurm_install.sh installs them."""
    found: list[ShellStatement] = [cmd("cd", job.project_path)]
    request = job.request
    if request.install_mode == "source":
        found.append(cmd(*PIP, "-e", "."))
    elif request.wheel_path:
        folder = posixpath.dirname(request.wheel_path) or "."
        found.append(cmd(*PIP, f"--find-links={folder}", request.wheel_path))
    else:
        found += _found_wheel(job.project_path)
    for requirements in ("requirements-dev.txt", *job.work.extra_requirements()):
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


def install_step(job: ResolvedJob) -> tuple[Statement, ...]:
    """The install step (one task), or nothing when install is off."""
    if not job.install:
        return ()
    return (
        SrunStep(
            ntasks=1,
            ntasks_per_node=1,
            kill_on_bad_exit=True,
            container=container(job),
            payload=payload(*install_commands(job)),
        ),
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


def exit_capture(step: Statement, label: str) -> tuple[Statement, ...]:
    """Run the last step without errexit, echo its exit code, and exit with it."""
    before, after = _exit_capture_around(label)
    return (*before, step, *after)


@functools.lru_cache(maxsize=64)
def _exit_capture_around(label: str) -> tuple[tuple[Statement, ...], tuple[Statement, ...]]:
    code = Param(name="rc")
    return (cmd("set", "+e"),), (
        Assign(name="rc", value=Param(name="?")),
        cmd("set", "-e"),
        cmd("echo", concat(f"{label} finished with exit code ", code)),
        cmd("exit", code),
    )


def models_root_export(job: ResolvedJob) -> Export:
    """`export LLM_MODELS_ROOT=<llm_models_root>`."""
    return Export(name="LLM_MODELS_ROOT", value=Lit(value=job.llm_models_root))


def payload(*statements: ShellStatement) -> Payload:
    """A step payload that starts strict."""
    return Payload(body=(_strict(), *statements))


@functools.cache
def _strict() -> Command:
    return cmd(*STRICT)


KEEP_RANK = ("SLURM_PROCID",)
"""What a single-task step keeps of the Slurm step environment when it clears MPI's."""
KEEP_RANK_AND_LOCAL = ("SLURM_PROCID", "SLURM_LOCALID")


def slurm_script(job: ResolvedJob, title: str, steps: tuple[Statement, ...]) -> Script:
    """A batch script: the title comment, the `#SBATCH` header, the preamble, the install
    step and then `steps`."""
    return Script(
        header=(Comment(text=f"{title}, generated by scriptast; submit with sbatch."),),
        directives=directives(job),
        body=(*preamble(), *install_step(job), *steps),
    )


def task_step(job: ResolvedJob, ntasks: int, mpi: str | None, *body: ShellStatement) -> SrunStep:
    """An srun step of `ntasks` tasks on one node in the job's container, running `body`."""
    return SrunStep(
        ntasks=ntasks,
        ntasks_per_node=ntasks,
        mpi=mpi,
        kill_on_bad_exit=True,
        container=container(job),
        payload=payload(*body),
    )
