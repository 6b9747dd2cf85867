"""What a category runs, said once for every scheduler: steps of tasks, each a list of actions. A
scheduler backend lowers them to its script form (Slurm: srun steps in a batch script; docker:
one container's commands); the category never writes a script itself.

`Action` is the tagged union of `ShowGpus`, `ClearMpiEnv`, `ExportModelsRoot`, `ExportVar`,
`ChangeDir` and `RunCommand`.
"""

from __future__ import annotations

import msgspec


class UserCommand(msgspec.Struct, frozen=True, kw_only=True):
    """A command the user gave. `argv` is set when it is plain (literal words, simple
    redirections) and becomes a typed command; otherwise `text` runs through `bash -c`."""

    text: str
    argv: tuple[str, ...] | None = None
    redirects: tuple[tuple[str, str], ...] = ()


KEEP_RANK = ("SLURM_PROCID",)
"""What a single task keeps of the scheduler's step environment when it clears MPI's."""
KEEP_RANK_AND_LOCAL = ("SLURM_PROCID", "SLURM_LOCALID")


class ShowGpus(msgspec.Struct, frozen=True, tag="show_gpus"):
    """Print the GPUs the step got (`nvidia-smi`): a scheduler that hands a step some of a
    node's GPUs shows which."""


class ClearMpiEnv(msgspec.Struct, frozen=True, tag="clear_mpi_env"):
    """Unset the MPI/PMI and scheduler step variables a single task must not see (so that
    mpi4py does not take it for a rank of a world it is not in), except those in `keep`."""

    keep: tuple[str, ...]


class ExportModelsRoot(msgspec.Struct, frozen=True, tag="export_models_root"):
    """`LLM_MODELS_ROOT` in the step's environment (a backend may set it by other means)."""


class ExportVar(msgspec.Struct, frozen=True, kw_only=True, tag="export_var"):
    """One variable the user asked for (custom_env)."""

    name: str
    value: str


class ChangeDir(msgspec.Struct, frozen=True, tag="change_dir"):
    """Run what follows in `path` (a path as the job sees it)."""

    path: str


class RunCommand(msgspec.Struct, frozen=True, kw_only=True, tag="run_command"):
    """The user's command. `launcher`: each of a multi-task step's tasks runs it under
    `trtllm-llmapi-launch` (TRT-LLM's own MPI launcher for LLM API programs)."""

    command: UserCommand
    launcher: bool = False


Action = ShowGpus | ClearMpiEnv | ExportModelsRoot | ExportVar | ChangeDir | RunCommand


class Runner(msgspec.Struct, frozen=True, kw_only=True):
    """A generated file each task runs the step's actions from (custom's slurm_run_custom.sh):
    `name` in work_dir, `path` as the job sees it, `label` in the line each task prints."""

    name: str
    path: str
    label: str


class Step(msgspec.Struct, frozen=True, kw_only=True):
    """`tasks` copies of `actions` (one a GPU rank); `mpi`: the tasks form one MPI world, so the
    scheduler's MPI plugin wires them up; `runner`: each task runs them from a generated file."""

    tasks: int
    actions: tuple[Action, ...]
    mpi: bool = False
    runner: Runner | None = None


class JobSteps(msgspec.Struct, frozen=True, kw_only=True):
    """A category's job: its steps in order (an install step goes before them when the job
    installs), the title its script carries, and `label`, the word the last step's exit line
    starts with (`Bench finished with exit code 0`)."""

    title: str
    steps: tuple[Step, ...]
    label: str
