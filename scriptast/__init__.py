"""scriptast: typed, verified Slurm/pyxis and docker launch scripts for TensorRT-LLM workloads.

The public API: the script model (words, statements, Slurm pieces, docker run, the script),
`emit` to write it as verified bash, and the job pipeline (`resolve`, `build`, `generate`).
Importing this package loads neither typer nor bashlex; they load when a command needs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# Public names and the module that defines each; loaded on first use (PEP 562), so that
# `import scriptast` costs little and a CLI command pays only for what it uses.
_EXPORTS = {
    "BindMount": "docker", "DockerRun": "docker", "EnvVar": "docker",
    "emit": "render",
    "InputError": "errors", "ModelError": "errors", "QuoteError": "errors",
    "ResolveError": "errors", "ScriptastError": "errors", "UnsupportedError": "errors",
    "VerifyError": "errors",
    "Script": "script", "Statement": "script",
    "Mount": "slurm", "PyxisContainer": "slurm", "SbatchDirective": "slurm",
    "SrunOption": "slurm", "SrunStep": "slurm",
    "AndOr": "statements", "Assign": "statements", "Blank": "statements",
    "Command": "statements", "Comment": "statements", "Export": "statements",
    "For": "statements", "If": "statements", "Payload": "statements",
    "Redirect": "statements", "ShellStatement": "statements", "Unset": "statements",
    "cmd": "statements", "to_stderr": "statements",
    "Concat": "words", "Lit": "words", "Param": "words", "RawShell": "words",
    "Word": "words", "as_word": "words", "concat": "words",
    "Request": "builders.request", "resolve": "builders.resolve",
    "generate": "pipeline", "write_outputs": "pipeline",
}  # fmt: skip


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'scriptast' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"scriptast.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*_EXPORTS, "__version__"])


if TYPE_CHECKING:
    from scriptast.builders.request import Request
    from scriptast.builders.resolve import resolve
    from scriptast.docker import BindMount, DockerRun, EnvVar
    from scriptast.errors import (
        InputError,
        ModelError,
        QuoteError,
        ResolveError,
        ScriptastError,
        UnsupportedError,
        VerifyError,
    )
    from scriptast.pipeline import generate, write_outputs
    from scriptast.render import emit
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
    "Request",
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
    "generate",
    "resolve",
    "to_stderr",
    "write_outputs",
]
