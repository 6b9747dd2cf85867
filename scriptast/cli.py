"""The scriptast command line: thin typer commands over the pipeline, builders and emitters."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer

from scriptast import cli_help
from scriptast.cli_fields import OUTPUT, request_parameters, split_flags

if TYPE_CHECKING:
    from scriptast.pipeline import Output

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

WORKFLOWS = {
    "pytest": ("pytest", "Category 2: run a pytest test id on one node."),
    "eval": ("eval", "Category 5: run trtllm-eval (single node, always under --mpi)."),
    "bench": ("bench", "Category 6: trtllm-bench, optionally 'prepare-dataset && throughput'."),
    "custom": ("custom", "Category 3: any command or script, with slurm_run_custom.sh."),
    "perf-sanity": ("perf_sanity", "Category 4: run the repo's submit.py on a perf config."),
}


def _colour(text: str, code: str) -> str:
    """ANSI colour on a terminal, unless NO_COLOR is set."""
    import os

    if os.environ.get("NO_COLOR") or not sys.stderr.isatty():
        return text
    return f"\x1b[{code}m{text}\x1b[0m"


def fail(message: str, code: int = 1) -> NoReturn:
    """`error: <message>` on stderr and exit."""
    sys.stderr.write(f"{_colour('error:', '1;31')} {message}\n")
    raise typer.Exit(code)


def warn(message: str) -> None:
    """`warning: <message>` on stderr."""
    sys.stderr.write(f"{_colour('warning:', '1;33')} {message}\n")


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


def _output(flag: str, help_text: str) -> Any:
    return typer.Option(
        None if flag in ("--request", "--requests", "--shell") else False,
        flag,
        help=help_text,
        rich_help_panel=OUTPUT,
    )


_OUTPUT_OPTIONS: tuple[tuple[str, type, Any], ...] = (
    ("request", str, _output("--request", "Request file (JSON, TOML or YAML); '-' reads stdin.")),
    (
        "requests",
        str,
        _output("--requests", "A sweep: one JSON request a line, each its own work_dir."),
    ),
    ("stdout", bool, _output("--stdout", "Print the script instead of writing files.")),
    ("shell", str, _output("--shell", "With --stdout, quote the docker command for this shell.")),
    ("json", bool, _output("--json", "Print the result (files, job_spec) as JSON.")),
    ("explain", bool, _output("--explain", "Print where every value came from (on stderr).")),
    ("debug", bool, _output("--debug", "Show a traceback on errors.")),
)


def _run_emit(workflow: str | None, values: dict[str, Any]) -> None:
    from scriptast.builders.request import build_request, read_request_file
    from scriptast.errors import ScriptastError

    debug = bool(values.get("debug"))
    if values.get("requests"):
        _run_sweep(workflow, values)
        return
    try:
        file_fields = None
        origin = "the flags"
        if values.get("request"):
            path = values["request"]
            text = sys.stdin.read() if path == "-" else None
            file_fields = read_request_file(path if path != "-" else "stdin.json", text)
            origin = f"request file {path}"
        flags = split_flags(values)
        if workflow is not None:
            given = flags.get("workflow_type") or (file_fields or {}).get("workflow_type")
            if given and given != workflow:
                fail(f"workflow_type {given!r} contradicts `scriptast emit {workflow}`", 2)
            flags["workflow_type"] = workflow
        request = build_request(file_fields, flags, origin=origin)
        from scriptast.pipeline import generate, write_outputs

        output = generate(request)
        if values.get("explain"):
            sys.stderr.write(output.job.explain())
        for warning in output.job.warnings:
            warn(warning)
        if values.get("stdout"):
            sys.stdout.write(_stdout_text(output, values.get("shell")))
            return
        write_outputs(output)
        if values.get("json"):
            sys.stdout.write(_json_result(output))
        else:
            sys.stdout.write(output.summary)
    except ScriptastError as error:
        if debug:
            raise
        fail(str(error))


def _stdout_text(output: Output, shell: str | None) -> str:
    """The main script; a docker job on a terminal (or with --shell) as a command for the shell."""
    main = next(f for f in output.files if f.path == output.main_script)
    if not output.job.is_docker or (shell is None and not sys.stdout.isatty()):
        return str(main.text)
    from scriptast.emitters.shells import QUOTERS, detect_shell, quoter_for

    if shell is not None and shell.lower() not in QUOTERS:
        fail(f"unknown --shell {shell!r}; known: {', '.join(sorted(QUOTERS))}", 2)
    from scriptast.emitters.bash import BashEmitter
    from scriptast.words import literal_text

    assert output.docker_run is not None
    lines = BashEmitter().docker_lines(output.docker_run)
    words = [[literal_text(w) or "" for w in line] for line in lines]
    return quoter_for(shell or detect_shell()).command(words)


def _json_result(output: Output) -> str:
    """The machine-readable result of an emit: files written, main script, job_spec, warnings."""
    import json

    import msgspec

    result = {
        "files": [f.path for f in output.files],
        "script": output.main_script,
        "job_spec": msgspec.to_builtins(output.job_spec),
        "warnings": list(output.job.warnings),
    }
    return json.dumps(result, indent=2) + "\n"


def _run_sweep(workflow: str | None, values: dict[str, Any]) -> None:
    """Emit every request of a JSON-lines file; flags apply to each; one error line per failure."""
    from scriptast.sweep import run_sweep

    path = values["requests"]
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        fail(f"cannot read {path}: {error.strerror}")
    flags = split_flags(values)
    if workflow is not None:
        flags["workflow_type"] = workflow
    jobs = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    progress = sys.stderr.isatty()
    failures = 0
    for done, (number, message) in enumerate(run_sweep(path, jobs, flags), start=1):
        if message is not None:
            failures += 1
            sys.stderr.write(
                ("\r" if progress else "") + f"error: {path} line {number}: {message}\n"
            )
        if progress:
            bar = "#" * (30 * done // len(jobs))
            sys.stderr.write(f"\r[{bar:<30}] {done}/{len(jobs)}")
    if progress:
        sys.stderr.write("\n")
    sys.stdout.write(f"Generated {len(jobs) - failures} of {len(jobs)} jobs from {path}\n")
    if failures:
        raise typer.Exit(1)


def _command(workflow: str | None) -> Callable[..., None]:
    def handler(**values: Any) -> None:
        _run_emit(workflow, values)

    skip = ("workflow_type",) if workflow else ()
    parameters = [
        inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=d, annotation=t | None)
        for n, t, d in _OUTPUT_OPTIONS
    ]
    handler.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        parameters + request_parameters(skip)
    )
    return handler


def _emit_group(ctx: typer.Context, **values: Any) -> None:
    if ctx.invoked_subcommand is None:
        _run_emit(None, values)


_emit_group.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [
        inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context),
        *inspect.signature(_command(None)).parameters.values(),
    ]
)
emit_app.callback(invoke_without_command=True)(_emit_group)

for _name, (_workflow, _help) in WORKFLOWS.items():
    emit_app.command(name=_name, help=_help, epilog=cli_help.WORKFLOW_EXAMPLES[_name])(
        _command(_workflow)
    )


class SchemaName(StrEnum):
    model = "model"
    request = "request"
    job_spec = "job-spec"
    slurm_env = "slurm-env"


@app.command(epilog=cli_help.SCHEMA)
def schema(name: SchemaName = typer.Argument(..., help="Which schema to print.")) -> None:
    """Print a JSON Schema derived from scriptast's types."""
    import msgspec

    from scriptast.builders.job_spec import JobSpec
    from scriptast.builders.request import Request
    from scriptast.builders.slurm_env import SlurmEnv
    from scriptast.script import Script

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
    from scriptast.emitters.lint import lint_text

    env = None
    if slurm_env_file is not None:
        from scriptast.builders.slurm_env import load_slurm_env
        from scriptast.errors import ScriptastError

        try:
            env = load_slurm_env(str(slurm_env_file), "verify").env
        except ScriptastError as error:
            fail(str(error))
    failed = False
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as error:
            fail(f"cannot read {path}: {error.strerror}")
        report = lint_text(text, context=str(path))
        findings = list(report.findings)
        if env is not None:
            from scriptast.emitters.cluster_check import check_against

            findings += check_against(report, env, str(path))
        for finding in findings:
            failed = True
            sys.stderr.write(f"{finding.where}: {finding.message}\n")
        if not findings:
            sys.stdout.write(f"{path}: ok\n")
    if failed:
        raise typer.Exit(1)


@app.command("probe-slurm", epilog=cli_help.PROBE)
def probe_slurm(
    output: Path | None = typer.Option(None, "--output", "-o", help="Write here, not stdout."),
) -> None:
    """Probe the cluster (sinfo, scontrol, srun --mpi=list) into slurm_env.json."""
    import json

    from scriptast.probe_slurm import probe

    text = json.dumps(probe(), indent=2) + "\n"
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text, encoding="utf-8")


def main() -> None:
    """Console-script entry point."""
    app()
