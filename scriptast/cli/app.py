"""The scriptast command line: thin typer commands over the pipeline, builders and emitters."""

from __future__ import annotations

import inspect
import os
import sys
import typing
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer

from scriptast.cli import examples as cli_help, run_action
from scriptast.cli.emit_command import run_emit
from scriptast.cli.emit_options import emit_parameters, other_categories_options
from scriptast.cli.results_command import results_app
from scriptast.cli.say import fail

PIPED_WIDTH = 100
"""Help written to a pipe is this wide (rich's 80 cuts long option names short)."""
if not sys.stdout.isatty() and not {"TERMINAL_WIDTH", "COLUMNS"} & set(os.environ):
    import typer.rich_utils

    typer.rich_utils.MAX_WIDTH = PIPED_WIDTH


def _plain_type_labels() -> None:
    """Help shows no type for a flag (typer writes `<bool>` on switches that take no value) and
    the element type for a list argument or option (`<path>...`, not `<list[Path]>...`)."""
    from typer.core import TyperArgument, TyperOption

    option_label = TyperOption.display_type_rich

    def option_type(self: TyperOption, ctx: Any) -> str | None:
        if self.is_flag:
            return None
        element = _list_element(getattr(self, "type_descriptor", None))
        return element if element is not None else option_label(self, ctx)

    argument_label = TyperArgument.display_type_rich

    def argument_type(self: TyperArgument, ctx: Any) -> str | None:
        element = _list_element(self.type_descriptor)
        return element if element is not None else argument_label(self, ctx)

    TyperOption.display_type_rich = option_type  # type: ignore[method-assign]
    TyperArgument.display_type_rich = argument_type  # type: ignore[method-assign,assignment]


def _list_element(descriptor: Any) -> str | None:
    """`<str>` for a parameter typed `list[str]` (its element, as the help shows it), else None."""
    annotation: Any = getattr(descriptor, "annotation", None)
    if typing.get_origin(annotation) is not list:
        return None
    (element,) = typing.get_args(annotation)
    return f"<{getattr(element, '__name__', str(element)).lower()}>"


_plain_type_labels()

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
    helps: dict[str, str] = {}
    if workflow:
        from scriptast.builders.categories import CATEGORIES

        chosen = CATEGORIES[workflow]
        if workflow != "pytest":
            hidden = (*hidden, "rerun_failed", "results")
        if chosen.submit is not None:  # submit.py writes the script: nothing to print
            hidden = (*hidden, "stdout", "shell")
        if chosen.only_on is not None:
            helps["execution_scenario"] = "local_slurm or remote_slurm (Slurm only)."
    parameters = emit_parameters(skip, hidden, helps)
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
        also = f" (also: emit {chosen.name})" if chosen.name != chosen.cli_name else ""
        emit_app.command(name=chosen.cli_name, help=chosen.cli_help + also, epilog=epilog)(
            _command(chosen.name)
        )
        if also:  # the workflow_type value works as the command's name too
            emit_app.command(name=chosen.name, hidden=True, help=chosen.cli_help, epilog=epilog)(
                _command(chosen.name)
            )


_add_category_commands()


class SchemaName(StrEnum):
    model = "model"
    request = "request"
    job_spec = "job-spec"
    slurm_env = "slurm-env"
    run = "run"


@app.command(epilog=cli_help.SCHEMA)
def schema(name: SchemaName = typer.Argument(..., help="Which schema to print.")) -> None:
    """Print a JSON Schema derived from scriptast's types."""
    import msgspec

    from scriptast.builders.read_request import request_type
    from scriptast.contract.job_spec import JobSpec
    from scriptast.contract.run_record import RunRecord
    from scriptast.contract.schemas import json_schema
    from scriptast.contract.slurm_env import SlurmEnv
    from scriptast.model.script import Script

    types: dict[SchemaName, type] = {
        SchemaName.model: Script,
        SchemaName.request: request_type(),
        SchemaName.job_spec: JobSpec,
        SchemaName.slurm_env: SlurmEnv,
        SchemaName.run: RunRecord,
    }
    schema_json = msgspec.json.encode(json_schema(types[name]))
    sys.stdout.write(msgspec.json.format(schema_json, indent=2).decode() + "\n")


@app.command(epilog=cli_help.VERIFY)
def verify(
    files: list[Path] = typer.Argument(..., help="Scripts to check.", metavar="SCRIPT"),
    slurm_env_file: Path | None = typer.Option(
        None, "--slurm-env-file", help="Also check partition, GPUs, time and --mpi against it."
    ),
) -> None:
    """Check bash/Slurm scripts: they parse, #SBATCH comes first, srun/pyxis flags are valid."""
    from scriptast.cli.verify_command import run_verify

    code = run_verify(files, slurm_env_file)
    if code:
        raise typer.Exit(code)


@app.command("probe-slurm", epilog=cli_help.PROBE)
def probe_slurm(
    output: Path | None = typer.Option(None, "--output", "-o", help="Write here, not stdout."),
    ssh_host: str | None = typer.Option(
        None, "--ssh-host", help="Probe the cluster behind this ssh host (the master run uses)."
    ),
    ssh_config: str | None = typer.Option(None, "--ssh-config", help="An ssh config file (-F)."),
) -> None:
    """Probe the cluster (sinfo, scontrol, srun --mpi=list) into slurm_env.json."""
    import json

    from scriptast.cluster.probe import probe, summary
    from scriptast.errors import ScriptastError

    if output is not None and output.is_dir():
        fail(f"-o {output} is a folder: give a file name, such as {output / 'slurm_env.json'}")
    if output is not None and not output.parent.is_dir():
        fail(f"cannot write {output}: its folder {output.parent} does not exist; create it first")
    try:
        if ssh_host is None:
            env = probe()
        else:
            from scriptast.cluster.probe import over_ssh
            from scriptast.contract.axes import SSH
            from scriptast.transports.registry import transport as reach

            transport = reach(SSH, ssh_host, ssh_config)
            try:
                env = over_ssh(transport)
            finally:
                transport.close()
    except ScriptastError as error:
        fail(str(error))
    text = json.dumps(env, indent=2) + "\n"
    if output is None:
        sys.stdout.write(text)
    else:
        try:
            output.write_text(text, encoding="utf-8")
        except OSError as error:
            fail(f"cannot write {output}: {error.strerror}")
    where = "standard output" if output is None else str(output)
    if not env["partitions"]:
        fail(
            f"no Slurm partition could be read ({'; '.join(env['errors'])}); what was learned is "
            f"on {where}, with these in errors[]: check that the controller is up and this "
            "host is its client"
        )
    if output is not None:
        sys.stderr.write(f"{output}: {summary(env)}\n")


RUN_EXIT = run_action.RUN_EXIT
"""`run`, `watch`, `cancel` and `alloc`: bad input (no job_spec.json, a torn set, sbatch refusing
the script, no Slurm) exits 2, apart from the verdicts' own codes."""


def _checked(read: Callable[[Any], Any], value: Any, option: str) -> Any:
    """`read(value)`, its ValueError as typer's bad-parameter error naming `option`."""
    try:
        return read(value)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint=f"'{option}'") from None


def _duration(value: str | None, option: str) -> float | None:
    result: float | None = _checked(run_action.duration, value, option)
    return result


def _baseline(value: str | None) -> str | None:
    result: str | None = _checked(run_action.baseline, value, "--baseline")
    return result


def _tolerance(value: str) -> float:
    result: float = _checked(run_action.tolerance, value, "--tolerance")
    return result


_executing = run_action.executing


WORK_DIRS = typer.Argument(..., help="Work dirs that emit wrote (one job each).")
JSON_OUTPUT = typer.Option(False, "--json", help="Print the result record(s) as JSON.")
POLL_MAX = typer.Option(30.0, "--poll-max", help="Most seconds between two squeue calls.")
SSH_HOST = typer.Option(
    None, "--ssh-host", help="remote_slurm: the cluster's ssh host (default: job_spec's)."
)
SSH_CONFIG = typer.Option(None, "--ssh-config", help="remote_slurm: an ssh config file (-F).")
KEEP_CONNECTION = typer.Option(
    False, "--keep-connection", help="remote_slurm: leave the ssh master open at the end."
)
FETCH = typer.Option(
    [], "--fetch", help="remote_slurm: also bring back these globs of remote_work_dir."
)
REFERENCE = typer.Option(
    None,
    "--reference",
    help="A references file (TOML or YAML) to hold the figures against (default: the job's).",
)
NO_STORE = typer.Option(
    False, "--no-store", help="Keep the verdict in run.json only; open no results store."
)
BASELINE = typer.Option(
    None,
    "--baseline",
    help="history: hold each figure without a reference against the median of its last "
    "comparable PASSED runs in the results store (default: the request's baseline).",
)
BASELINE_RUNS = typer.Option(
    5, "--baseline-runs", min=1, max=1000, help="How many earlier runs make a history baseline."
)
TOLERANCE = typer.Option(
    "5%", "--tolerance", help="How far a figure may fall from its history baseline."
)
RESULTS = typer.Option(
    None,
    "--results",
    help="The results store: a path, sqlite:///PATH or postgresql://... (default: the "
    "SCRIPTAST_RESULTS variable, else results.db in XDG_DATA_HOME's scriptast folder).",
)


@app.command(epilog=cli_help.RUN)
def run(
    work_dirs: list[str] = WORK_DIRS,
    json_output: bool = JSON_OUTPUT,
    detach: bool = typer.Option(False, "--detach", help="Return once submitted; see watch."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the commands; run none."),
    force: bool = typer.Option(False, "--force", help="Run a set whose digests do not match."),
    again: bool = typer.Option(False, "--again", help="Run although a live run is recorded."),
    persistent: bool | None = typer.Option(
        None,
        "--persistent/--no-persistent",
        help="Run local_slurm jobs in a persistent allocation (default: job_spec's).",
    ),
    alloc_time: str | None = typer.Option(
        None, "--alloc-time", help="A new allocation's time (default: the partition's)."
    ),
    alloc_idle: str = typer.Option(
        "10m", "--alloc-idle", help="Release a new allocation after this without a step (0: never)."
    ),
    retries: int = typer.Option(
        0, "--retries", min=0, max=10, help="Submit a job a node failure ended again, N times."
    ),
    queue_timeout: str | None = typer.Option(
        None, "--queue-timeout", help="Cancel if still queued after this (90s, 5m, 2h)."
    ),
    run_timeout: str | None = typer.Option(
        None, "--run-timeout", help="Cancel if still running after this (default: time + 10m)."
    ),
    poll_max: float = POLL_MAX,
    ssh_host: str | None = SSH_HOST,
    ssh_config: str | None = SSH_CONFIG,
    keep_connection: bool = KEEP_CONNECTION,
    fetch: list[str] = FETCH,
    reference: str | None = REFERENCE,
    results: str | None = RESULTS,
    no_store: bool = NO_STORE,
    baseline: str | None = BASELINE,
    baseline_runs: int = BASELINE_RUNS,
    tolerance: str = TOLERANCE,
    array_task: str | None = typer.Option(
        None,
        "--array-task",
        help="Of the job arrays' tasks given (work dirs, or an array script emit wrote), run "
        "only these indices: 3, 0-4, 1,3,5-7 (one sbatch --array=INDICES an array).",
    ),
) -> None:
    """Submit jobs that emit wrote, follow their logs and judge each: one verdict a job."""
    for value, option in ((alloc_idle, "--alloc-idle"), (queue_timeout, "--queue-timeout"),
                          (run_timeout, "--run-timeout")):  # fmt: skip
        _duration(value, option)
    _baseline(baseline)
    _tolerance(tolerance)
    run_action.run_values(
        {
            "work_dirs": work_dirs, "json_output": json_output, "detach": detach,
            "dry_run": dry_run, "force": force, "again": again, "persistent": persistent,
            "alloc_time": alloc_time, "alloc_idle": alloc_idle, "retries": retries,
            "queue_timeout": queue_timeout, "run_timeout": run_timeout, "poll_max": poll_max,
            "ssh_host": ssh_host, "ssh_config": ssh_config, "keep_connection": keep_connection,
            "fetch": fetch, "reference": reference, "results": results, "no_store": no_store,
            "baseline": baseline, "baseline_runs": baseline_runs, "tolerance": tolerance,
            "array_task": array_task,
        }
    )  # fmt: skip


@app.command(epilog=cli_help.JUDGE)
def judge(
    logs: list[str] = typer.Argument(None, help="The job's logs (a CI console log, ...)."),
    junit: list[str] = typer.Option([], "--junit", help="A JUnit XML report pytest wrote."),
    report_json: str | None = typer.Option(
        None, "--report-json", help="trtllm-bench's --report_json file."
    ),
    workflow: str | None = typer.Option(
        None, "--workflow", help="bench, eval, pytest or perf_sanity (default: inferred)."
    ),
    model: str | None = typer.Option(
        None, "--model", help="The model its references are keyed by (default: inferred)."
    ),
    repo_root: str | None = typer.Option(
        None, "--repo-root", help="A TensorRT-LLM checkout: its accuracy references."
    ),
    reference: str | None = REFERENCE,
    job_spec: str | None = typer.Option(
        None, "--job-spec", help="The job's job_spec.json: everything as run would have it."
    ),
    json_output: bool = JSON_OUTPUT,
    store: bool = typer.Option(False, "--store", help="Add the verdict to the results store."),
    results: str | None = RESULTS,
) -> None:
    """Judge output a job already wrote, as run judges it: the same verdict and exit code."""

    def judged() -> int:
        from scriptast.executor.judge_written import JudgeRequest, judge_files, store_files_verdict
        from scriptast.executor.report import as_json, summary

        request = JudgeRequest(logs=tuple(logs or ()), junit=tuple(junit),
                               report_json=report_json, workflow=workflow, model=model,
                               repo_root=repo_root, reference=reference,
                               job_spec=job_spec)  # fmt: skip
        judged = judge_files(request)
        record = judged.record
        if store:
            from scriptast.errors import StoreError

            try:
                record.notes += (store_files_verdict(judged, request, results),)
            except StoreError as failed:
                record.notes += (f"not stored: {failed}",)
        for line in record.errors:
            sys.stderr.write(f"error: {line}\n")
        from scriptast.common.colour import wants_colour

        colour = wants_colour(sys.stdout)
        sys.stdout.write(
            as_json([record], False) if json_output else summary(record, colour=colour)
        )
        return record.verdict_exit_code or 0

    _executing(judged)


@app.command(epilog=cli_help.WATCH)
def watch(
    work_dirs: list[str] = WORK_DIRS,
    json_output: bool = JSON_OUTPUT,
    poll_max: float = POLL_MAX,
    ssh_host: str | None = SSH_HOST,
    ssh_config: str | None = SSH_CONFIG,
    keep_connection: bool = KEEP_CONNECTION,
    fetch: list[str] = FETCH,
    reference: str | None = REFERENCE,
    results: str | None = RESULTS,
    baseline: str | None = BASELINE,
    baseline_runs: int = BASELINE_RUNS,
    tolerance: str = TOLERANCE,
) -> None:
    """Re-attach to recorded runs (run.json): follow them to their verdicts."""
    from scriptast.executor.options import RunOptions
    from scriptast.executor.run import watch_work_dirs

    options = RunOptions(
        poll_max=poll_max,
        ssh_host=ssh_host,
        ssh_config=ssh_config,
        keep_connection=keep_connection,
        fetch=tuple(fetch),
        reference=reference,
        results=results,
        baseline=_baseline(baseline),
        baseline_runs=baseline_runs,
        tolerance=_tolerance(tolerance),
    )
    _executing(lambda: watch_work_dirs(work_dirs, options, json_output=json_output))


@app.command(epilog=cli_help.CANCEL)
def cancel(
    work_dirs: list[str] = WORK_DIRS,
    json_output: bool = JSON_OUTPUT,
    ssh_host: str | None = SSH_HOST,
    ssh_config: str | None = SSH_CONFIG,
    keep_connection: bool = KEEP_CONNECTION,
) -> None:
    """Cancel recorded runs (their own jobs, steps or containers) and wait until they end."""
    from scriptast.executor.options import RunOptions
    from scriptast.executor.run import watch_work_dirs

    options = RunOptions(poll_max=2.0, ssh_host=ssh_host, ssh_config=ssh_config,
                         keep_connection=keep_connection)  # fmt: skip
    _executing(lambda: watch_work_dirs(work_dirs, options, json_output=json_output, cancel=True))


alloc_app = typer.Typer(
    help="Persistent allocations that run made (salloc --no-shell).",
    epilog=cli_help.ALLOC,
    pretty_exceptions_enable=False,
)
app.add_typer(alloc_app, name="alloc")
app.add_typer(results_app, name="results")


REMOTE = typer.Option(None, "--remote", help="The allocations of this ssh host's cluster.")


@alloc_app.command("list")
def alloc_list(
    json_output: bool = JSON_OUTPUT,
    remote: str | None = REMOTE,
    ssh_config: str | None = SSH_CONFIG,
) -> None:
    """List your persistent allocations: id, state, time left, nodes and parameters."""
    from scriptast.executor.allocations import held_allocations

    def show() -> int:
        import msgspec

        found = held_allocations(remote, ssh_config)
        if json_output:
            sys.stdout.write(msgspec.json.format(msgspec.json.encode(found), indent=2).decode())
            sys.stdout.write("\n")
            return 0
        if not found:
            sys.stdout.write("none: you hold no persistent allocation\n")
        for a in found:
            sys.stdout.write(f"{a.job_id}  {a.state}  {a.time_left} left  {a.nodes}  "
                             f"{a.described()}\n")  # fmt: skip
        return 0

    _executing(show)


@alloc_app.command("release")
def alloc_release(
    job_ids: list[str] = typer.Argument(None, help="Allocation ids (default: all of yours)."),
    remote: str | None = REMOTE,
    ssh_config: str | None = SSH_CONFIG,
) -> None:
    """Release persistent allocations (scancel)."""
    from scriptast.executor.allocations import release_allocations

    def done() -> int:
        for job_id in release_allocations(remote, ssh_config, list(job_ids or [])):
            sys.stdout.write(f"released {job_id}\n")
        return 0

    _executing(done)


def main() -> None:
    """Console-script entry point: usage errors as one `error:` line, exit 2."""
    from scriptast.cli.usage import run

    run(app)
