"""Read back what a launch script written by someone else (submit.py) asks Slurm for: its
`#SBATCH` header as sbatch reads it, and the options of its srun steps, `"${srunArgs[@]}"`
expanded from the `srunArgs=(...)` array it builds."""

from __future__ import annotations

import re

import msgspec

from scriptast.builders.categories.perf_sanity.submit_call import PerfSubmit
from scriptast.errors import ScriptastError
from scriptast.readers.linter.lint import read_directives
from scriptast.readers.linter.script_commands import commands_named
from scriptast.readers.shellwords import Token, flag_value, tokenize

_ARRAY = re.compile(r"^srunArgs(\+?)=\((.*?)\)[ \t]*$", re.MULTILINE | re.DOTALL)
_ARRAY_WORD = "${srunArgs[@]}"


class LaunchError(ScriptastError):
    """The launch script does not say what scriptast must read from it."""


class LaunchScript(msgspec.Struct, frozen=True, kw_only=True):
    """What the script requests. `step_mpi` holds each srun step's `--mpi` (None: the cluster's
    MpiDefault), in script order."""

    nodes: int
    ntasks: int
    ntasks_per_node: int
    gpus_per_node: int | None
    gres: str | None
    partition: str | None
    account: str | None
    time_limit: str | None
    job_name: str | None
    output: str | None
    error: str | None
    container_name: str | None
    step_mpi: tuple[str | None, ...]

    @property
    def mpi_plugin(self) -> str | None:
        """The plugin the script's MPI steps use: the first srun step's that names one."""
        return next((plugin for plugin in self.step_mpi if plugin), None)


def read_launch_script(text: str, what: str = "the launch script") -> LaunchScript:
    """The header and srun options of `text`; LaunchError when a count it must state is absent."""
    directives, _ = read_directives(text, what)
    header: dict[str, str | None] = {}
    for directive in directives:
        header[directive.name] = directive.value
    array = _srun_array(text)
    steps = _srun_steps(text, array)
    name = flag_value((*array, *(word for step in steps for word in step)), "--container-name")
    return LaunchScript(
        nodes=_count(header, "nodes", what),
        ntasks=_count(header, "ntasks", what),
        ntasks_per_node=_count(header, "ntasks-per-node", what),
        gpus_per_node=_count(header, "gpus-per-node", what) if "gpus-per-node" in header else None,
        gres=header.get("gres"),
        partition=header.get("partition"),
        account=header.get("account"),
        time_limit=header.get("time"),
        job_name=header.get("job-name"),
        output=header.get("output"),
        error=header.get("error"),
        container_name=name,
        step_mpi=tuple(flag_value(step, "--mpi") for step in steps),
    )


def _count(header: dict[str, str | None], name: str, what: str) -> int:
    value = header.get(name)
    if value is None:
        raise LaunchError(f"{what} has no #SBATCH --{name}: scriptast cannot tell what it requests")
    if not value.isdigit() or int(value) < 1:
        raise LaunchError(f"{what} asks for #SBATCH --{name}={value}, not a count >= 1")
    return int(value)


def _words(text: str) -> list[Token]:
    try:
        return tokenize(text, "the launch script")
    except ScriptastError:
        return []


def _srun_array(text: str) -> tuple[str, ...]:
    """The words of `srunArgs=(...)` and of every later `srunArgs+=(...)`."""
    words: list[str] = []
    for match in _ARRAY.finditer(text):
        if not match.group(1):
            words = []
        words += [t.value for t in _words(match.group(2)) if t.kind == "word"]
    return tuple(words)


def _srun_steps(text: str, array: tuple[str, ...]) -> list[tuple[str, ...]]:
    """Each srun command's arguments (found by the script scanner verify uses), the array
    expanded."""
    steps: list[tuple[str, ...]] = []
    for command in commands_named(text, "srun"):
        arguments: list[str] = []
        for raw in command.words[1:]:
            if raw == f'"{_ARRAY_WORD}"':
                arguments += array
            else:
                arguments += [t.value for t in _words(raw) if t.kind == "word"]
        steps.append(tuple(arguments))
    return steps


HEADER_ASKED = frozenset(
    {"nodes", "segment", "ntasks", "ntasks-per-node", "gpus-per-node", "gres", "partition",
     "time", "account", "job-name", "output"}
)  # fmt: skip
"""The `#SBATCH` options a launch script of submit.py may hold: what scriptast asked for, and
the sizes submit.py derives from the config."""
SRUN_ASKED = ("--container-name=", "--container-image=", "--container-workdir=",
              "--container-mounts=", "--container-env=", "--mpi=")  # fmt: skip
_SIZES = {"nodes", "segment", "ntasks", "ntasks-per-node", "gpus-per-node"}
_GRES = re.compile(r"gpu:\d+\Z")


def unexpected(text: str, submit: PerfSubmit) -> list[str]:
    """What a launch script asks for beyond what scriptast passed submit.py: an option it did
    not ask for, a value other than the one it passed, a mount or a workspace it did not give."""
    directives, _ = read_directives(text, "the launch script")
    found: list[str] = []
    passed = {
        "partition": submit.partition,
        "account": submit.account,
        "time": submit.time,
        "job-name": submit.job_name,
        "output": f"{submit.work_dir}/slurm-%j.out",
    }
    for directive in directives:
        name, value = directive.name, directive.value or ""
        shown = f"#SBATCH --{name}={value} (line {directive.line})"
        if name not in HEADER_ASKED:
            found.append(f"{shown}: an option scriptast did not ask for")
        elif name in passed and value != passed[name]:
            found.append(f"{shown}: scriptast passed {passed[name]!r}")
        elif (name in _SIZES and not value.isdigit()) or (
            name == "gres" and not _GRES.match(value)
        ):
            found.append(f"{shown}: not a count")
    allowed_mounts = {(m.source, m.target) for m in submit.mounts}
    allowed_mounts.add((submit.llm_src, submit.llm_src))
    for word in _srun_array(text):
        if not word.startswith(SRUN_ASKED):
            found.append(f"srunArgs holds {word!r}: an option scriptast did not ask for")
        elif word.startswith("--container-image=") and word != f"--container-image={submit.image}":
            found.append(f"srunArgs holds {word!r}: scriptast passed the image {submit.image!r}")
        elif word.startswith("--container-workdir=") and word != (
            f"--container-workdir={submit.work_dir}"
        ):
            found.append(f"srunArgs holds {word!r}: the work dir is {submit.work_dir!r}")
        elif word.startswith("--container-mounts="):
            for entry in word.split("=", 1)[1].split(","):
                parts = entry.split(":")
                if len(parts) < 2 or (parts[0], parts[1]) not in allowed_mounts:
                    found.append(f"srunArgs mounts {entry!r}: a mount scriptast did not give")
    for variable, expected in (("llmSrcNode", submit.llm_src), ("jobWorkspace", submit.work_dir)):
        for value in re.findall(rf"^export {variable}=(.*)$", text, re.MULTILINE):
            if value != f"'{expected}'":
                found.append(f"export {variable}={value}: scriptast passed {expected!r}")
    return found
