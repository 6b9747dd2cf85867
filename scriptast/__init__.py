"""scriptast: typed, verified Slurm/pyxis and docker launch scripts for TensorRT-LLM workloads.

The public API: the script model (words, statements, Slurm pieces, docker run, the script),
`emit` to write it as verified bash, and the job pipeline (`build_request`, `Request`,
`resolve`, `generate`, `write_outputs`). Importing this package loads neither typer nor
bashlex, nor any of these modules: a name loads its module on first use (PEP 562), so
`import scriptast` costs little.
The imports under TYPE_CHECKING below are the one list of public names; the loader reads it.
"""

from __future__ import annotations

TYPE_CHECKING = False
"""True for type checkers only (mypy reads the name so); `typing` is not imported, as it would
cost more than the rest of `import scriptast`."""

__version__ = "0.1.0"

if TYPE_CHECKING:  # the public names, one import each; at run time each loads on first use
    from scriptast.builders.read_request import build_request as build_request
    from scriptast.builders.request.fields import Request as Request
    from scriptast.builders.resolve import resolve as resolve
    from scriptast.errors import (
        InputError as InputError,
        ModelError as ModelError,
        QuoteError as QuoteError,
        ResolveError as ResolveError,
        ScriptastError as ScriptastError,
        UnsupportedError as UnsupportedError,
        VerifyError as VerifyError,
    )
    from scriptast.model.docker import (
        BindMount as BindMount,
        DockerRun as DockerRun,
        EnvVar as EnvVar,
    )
    from scriptast.model.script import Script as Script, Statement as Statement
    from scriptast.model.slurm import (
        Mount as Mount,
        PyxisContainer as PyxisContainer,
        SbatchDirective as SbatchDirective,
        SrunOption as SrunOption,
        SrunStep as SrunStep,
    )
    from scriptast.model.statements import (
        AndOr as AndOr,
        Assign as Assign,
        Blank as Blank,
        Command as Command,
        Comment as Comment,
        Export as Export,
        For as For,
        If as If,
        Payload as Payload,
        Redirect as Redirect,
        ShellStatement as ShellStatement,
        Unset as Unset,
        cmd as cmd,
        to_stderr as to_stderr,
    )
    from scriptast.model.words import (
        Concat as Concat,
        Lit as Lit,
        Param as Param,
        RawShell as RawShell,
        Word as Word,
        as_word as as_word,
        concat as concat,
    )
    from scriptast.pipeline.emit_job import generate as generate, write_outputs as write_outputs
    from scriptast.pipeline.verified_emit import emit as emit

__all__: list[str]  # computed on first use, by __getattr__
_PUBLIC: dict[str, str] = {}
"""Each public name and the module that defines it, read from the imports above."""


def _public() -> dict[str, str]:
    if not _PUBLIC:
        import ast

        with open(__file__, encoding="utf-8") as stream:
            tree = ast.parse(stream.read())
        for node in tree.body:
            if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
                for statement in node.body:
                    assert isinstance(statement, ast.ImportFrom) and statement.module
                    _PUBLIC.update((alias.name, statement.module) for alias in statement.names)
    return _PUBLIC


def __getattr__(name: str) -> object:
    if name == "__all__":
        return sorted([*_public(), "__version__"])
    module = _public().get(name)
    if module is None:
        raise AttributeError(f"module 'scriptast' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*_public(), "__version__"])
