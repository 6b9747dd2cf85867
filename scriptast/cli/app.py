"""The scriptast command line: thin typer commands over the pipeline, builders and emitters."""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer

from scriptast.cli import examples as cli_help
from scriptast.cli.emit_command import fail, run_emit
from scriptast.cli.options import emit_parameters, other_categories_options

PIPED_WIDTH = 100
"""Help written to a pipe is this wide (rich's 80 cuts long option names short)."""
if not sys.stdout.isatty() and not {"TERMINAL_WIDTH", "COLUMNS"} & set(os.environ):
    import typer.rich_utils

    typer.rich_utils.MAX_WIDTH = PIPED_WIDTH

app = typer.Typer(
    name="scriptast",
    help="Write verified Slurm/pyxis scripts and docker commands for TensorRT-LLM jobs.",
    epilog=cli_help.OVERVIEW,
    pretty_exceptions_enable=False,
)
emit_app = typer.Typer(
    help="Resolve a job request and write its script and job_spec.json into work_dir.",
    epilog=cli_help.EMIT,
    pretty_exceptions_enable=False,
)
app.add_typer(emit_app, name="emit")


def _version(value: bool) -> None:
    if value:
        from scriptast import __version__

        typer.echo(f"scriptast {__version__}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
def main_callback(
    ctx: typer.Context,
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Write verified Slurm/pyxis scripts and docker commands for TensorRT-LLM jobs."""
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())
        raise typer.Exit()


def _command(workflow: str | None) -> Callable[..., None]:
    """`emit <workflow>` (or `emit` itself for None): every request flag is accepted, and its
    help lists the shared ones and the category's own."""

    def handler(**values: Any) -> None:
        run_emit(workflow, values)

    skip = ("workflow_type",) if workflow else ()
    hidden = other_categories_options(workflow) if workflow else ()
    parameters = emit_parameters(skip, hidden)
    handler.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    return handler


def _emit_group(ctx: typer.Context, **values: Any) -> None:
    if ctx.invoked_subcommand is None:
        run_emit(None, values)


_emit_group.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [
        inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context),
        *inspect.signature(_command(None)).parameters.values(),
    ]
)
emit_app.callback(invoke_without_command=True)(_emit_group)


def _add_category_commands() -> None:
    from scriptast.builders.categories import CATEGORIES

    for chosen in CATEGORIES.values():
        epilog = cli_help.workflow_examples(chosen.examples)
        emit_app.command(name=chosen.cli_name, help=chosen.cli_help, epilog=epilog)(
            _command(chosen.name)
        )


_add_category_commands()


class SchemaName(StrEnum):
    model = "model"
    request = "request"
    job_spec = "job-spec"
    slurm_env = "slurm-env"


@app.command(epilog=cli_help.SCHEMA)
def schema(name: SchemaName = typer.Argument(..., help="Which schema to print.")) -> None:
    """Print a JSON Schema derived from scriptast's types."""
    import msgspec

    from scriptast.builders.request import Request
    from scriptast.cluster.slurm_env import SlurmEnv
    from scriptast.model.job_spec import JobSpec
    from scriptast.model.script import Script

    types: dict[SchemaName, type] = {
        SchemaName.model: Script,
        SchemaName.request: Request,
        SchemaName.job_spec: JobSpec,
        SchemaName.slurm_env: SlurmEnv,
    }
    schema_json = msgspec.json.encode(msgspec.json.schema(types[name]))
    sys.stdout.write(msgspec.json.format(schema_json, indent=2).decode() + "\n")


@app.command(epilog=cli_help.VERIFY)
def verify(
    files: list[Path] = typer.Argument(..., help="Scripts to check."),
    slurm_env_file: Path | None = typer.Option(
        None, "--slurm-env-file", help="Also check partition, GPUs, time and --mpi against it."
    ),
) -> None:
    """Check bash/Slurm scripts: they parse, #SBATCH comes first, srun/pyxis flags are valid."""
    from scriptast.common.text_files import read_text_file
    from scriptast.errors import ScriptastError
    from scriptast.readers.lint import lint_text

    env = None
    if slurm_env_file is not None:
        from scriptast.cluster.slurm_env import load_slurm_env

        try:
            env = load_slurm_env(str(slurm_env_file), "verify").env
        except ScriptastError as error:
            fail(str(error))
    failed = False
    for path in files:
        try:
            text = read_text_file(path, "script")
        except ScriptastError as error:
            failed = True
            sys.stderr.write(f"error: {error}\n")
            continue
        report = lint_text(text, context=str(path))
        findings = list(report.findings)
        if env is not None:
            from scriptast.readers.cluster_check import check_against

            findings += check_against(report, env, str(path))
        for finding in findings:
            failed = True
            sys.stderr.write(f"{finding.where}: {finding.message}\n")
        if not findings and report.bash_only is not None:
            sys.stdout.write(
                f"{path}: ok (checked by bash -n only; bashlex cannot read it: "
                f"{report.bash_only}; srun options not checked)\n"
            )
        elif not findings:
            sys.stdout.write(f"{path}: ok\n")
    if failed:
        raise typer.Exit(1)


@app.command("probe-slurm", epilog=cli_help.PROBE)
def probe_slurm(
    output: Path | None = typer.Option(None, "--output", "-o", help="Write here, not stdout."),
) -> None:
    """Probe the cluster (sinfo, scontrol, srun --mpi=list) into slurm_env.json."""
    import json

    from scriptast.cluster.probe import probe

    text = json.dumps(probe(), indent=2) + "\n"
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text, encoding="utf-8")


def main() -> None:
    """Console-script entry point."""
    app()
