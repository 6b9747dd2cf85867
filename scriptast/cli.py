"""The scriptast command line: thin typer commands over the builders and emitters."""

from __future__ import annotations

import sys
from enum import Enum

import typer

app = typer.Typer(
    name="scriptast",
    help="Write verified Slurm/pyxis scripts and docker commands for TensorRT-LLM jobs.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
)


class SchemaName(str, Enum):
    model = "model"


def _version(value: bool) -> None:
    if value:
        from scriptast import __version__

        typer.echo(f"scriptast {__version__}")
        raise typer.Exit()


@app.callback()
def main_callback(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Write verified Slurm/pyxis scripts and docker commands for TensorRT-LLM jobs."""


@app.command()
def schema(name: SchemaName = typer.Argument(..., help="Which schema to print.")) -> None:
    """Print a JSON Schema derived from scriptast's types."""
    import msgspec

    from scriptast.script import Script

    types = {SchemaName.model: Script}
    sys.stdout.write(msgspec.json.format(msgspec.json.encode(msgspec.json.schema(types[name]))).decode())
    sys.stdout.write("\n")


def main() -> None:
    """Console-script entry point."""
    app()
