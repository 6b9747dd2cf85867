"""scriptast: typed, verified Slurm/pyxis and docker launch scripts for TensorRT-LLM workloads.

The public API: the script model (words, statements, Slurm pieces, docker run, the script),
`emit` to write it as verified bash, and the job pipeline (`resolve`, `build`, `generate`).
Importing this package loads neither typer nor bashlex; they load when a command needs them.
"""

from __future__ import annotations

from scriptast.docker import BindMount, DockerRun, EnvVar
from scriptast.emitters.bash import emit
from scriptast.errors import (
    InputError,
    ModelError,
    QuoteError,
    ResolveError,
    ScriptastError,
    UnsupportedError,
    VerifyError,
)
from scriptast.script import Script, Statement
from scriptast.slurm import Mount, PyxisContainer, SbatchDirective, SrunOption, SrunStep
from scriptast.statements import (
    AndOr,
    Assign,
    Blank,
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
from scriptast.words import Concat, Lit, Param, RawShell, Word, as_word, concat

__version__ = "0.1.0"

__all__ = [
    "AndOr",
    "Assign",
    "BindMount",
    "Blank",
    "Command",
    "Comment",
    "Concat",
    "DockerRun",
    "EnvVar",
    "Export",
    "For",
    "If",
    "InputError",
    "Lit",
    "ModelError",
    "Mount",
    "Param",
    "Payload",
    "PyxisContainer",
    "QuoteError",
    "RawShell",
    "Redirect",
    "ResolveError",
    "SbatchDirective",
    "Script",
    "ScriptastError",
    "ShellStatement",
    "SrunOption",
    "SrunStep",
    "Statement",
    "Unset",
    "UnsupportedError",
    "VerifyError",
    "Word",
    "__version__",
    "as_word",
    "cmd",
    "concat",
    "emit",
    "to_stderr",
]
