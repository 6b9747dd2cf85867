"""`scriptast results`: the stored runs listed, one shown whole, two sets compared (or each
key's newest run against its history), exported for CI, plotted, and recorded runs imported."""

from __future__ import annotations

import sys
from collections.abc import Callable

import typer

from scriptast.cli.results_actions import cell, open_store, run_filter

results_app = typer.Typer(
    help="The results store: every judged run with its figures (list, show, compare, export, "
    "plot, import).",
    pretty_exceptions_enable=False,
    no_args_is_help=True,
)

RESULTS = typer.Option(
    None,
    "--results",
    help="The store: a path, sqlite:///PATH or postgresql://... (default: the SCRIPTAST_RESULTS "
    "variable, else results.db in XDG_DATA_HOME's scriptast folder).",
)
MODEL = typer.Option(None, "--model", help="Only runs of this model.")
WORKFLOW = typer.Option(None, "--workflow", help="Only runs of this workflow (eval, bench, ...).")
GPU_TYPE = typer.Option(None, "--gpu-type", help="Only runs on this GPU type.")
SINCE = typer.Option(None, "--since", help="Only runs finished since: 7d, 12h, 2026-11-01.")
VERDICT = typer.Option(None, "--verdict", help="Only runs with this verdict (PASSED, ...).")
UNTIL = typer.Option(None, "--until", help="Only runs finished before: 1d, 2026-12-01.")
PARTITION = typer.Option(None, "--partition", help="Only runs on this partition.")
CLUSTER = typer.Option(None, "--cluster", help="Only runs on this cluster.")
COMMIT = typer.Option(None, "--commit", help="Only runs of this TRT-LLM commit (a prefix).")
USER = typer.Option(None, "--user", help="Only runs of this user.")
GPUS = typer.Option(None, "--gpus", min=1, help="Only runs that asked for this many GPUs.")
TP = typer.Option(None, "--tp", min=1, help="Only runs at this tensor parallelism.")
SWEEP = typer.Option(
    None,
    "--sweep",
    help="Only the tasks of this job array, or of the sweep whose sha256 starts so.",
)


def _guarded(action: Callable[[], int]) -> None:
    from scriptast.cli.results_actions import guarded

    raise typer.Exit(guarded(action))


@results_app.command("list")
def list_command(
    model: str | None = MODEL,
    workflow: str | None = WORKFLOW,
    gpu_type: str | None = GPU_TYPE,
    since: str | None = SINCE,
    until: str | None = UNTIL,
    verdict: str | None = VERDICT,
    partition: str | None = PARTITION,
    cluster: str | None = CLUSTER,
    commit: str | None = COMMIT,
    user: str | None = USER,
    gpus: int | None = GPUS,
    tp: int | None = TP,
    sweep: str | None = SWEEP,
    limit: int = typer.Option(50, "--limit", min=1, help="At most this many runs."),
    results: str | None = RESULTS,
) -> None:
    """The stored runs, newest first: one line a run, with its headline figure."""
    given = dict(locals())
    from scriptast.cli.results_actions import list_action

    _guarded(lambda: list_action(given))


@results_app.command("show")
def show_command(
    run_id: int = typer.Argument(..., help="The run's id (results list shows it)."),
    json_output: bool = typer.Option(False, "--json", help="Print the stored record as JSON."),
    results: str | None = RESULTS,
) -> None:
    """One stored run, whole: its keys, then its verdict as run printed it, with every figure
    and its reference and margin, the failed tests and the notes."""
    given = dict(locals())
    from scriptast.cli.results_actions import show_action

    _guarded(lambda: show_action(given))


@results_app.command("compare")
def compare_command(
    sides: list[str] = typer.Argument(
        None,
        help="A B: run B against A (a run id, a commit, a window such as 'since 7d', or "
        "'history': B's earlier PASSED runs of its setup).",
    ),
    base: str | None = typer.Option(None, "--base", help="The base window: 'since 14d until 7d'."),
    target: str | None = typer.Option(None, "--target", help="The target window: 'since 7d'."),
    base_commit: str | None = typer.Option(None, "--base-commit", help="Base: this commit."),
    target_commit: str | None = typer.Option(None, "--target-commit", help="Target: this commit."),
    aggregate: str = typer.Option("median", "--aggregate", help="mean, median, min or max."),
    group_by: list[str] = typer.Option(
        [], "--group-by", help="Compare per these keys only (model, tp, gpu_count, ...)."
    ),
    tolerance: str = typer.Option("5%", "--tolerance", help="A difference beyond this regresses."),
    depth: int = typer.Option(5, "--depth", min=1, help="History: the last N PASSED runs."),
    figure: str | None = typer.Option(None, "--figure", help="Only this figure."),
    model: str | None = MODEL,
    workflow: str | None = WORKFLOW,
    gpu_type: str | None = GPU_TYPE,
    partition: str | None = PARTITION,
    cluster: str | None = CLUSTER,
    commit: str | None = COMMIT,
    user: str | None = USER,
    gpus: int | None = GPUS,
    tp: int | None = TP,
    sweep: str | None = SWEEP,
    verdict: str | None = VERDICT,
    since: str | None = SINCE,
    until: str | None = UNTIL,
    json_output: bool = typer.Option(False, "--json", help="Print the comparisons as JSON."),
    results: str | None = RESULTS,
) -> None:
    """Each figure per setup (model, workflow, partition, GPU type, the GPUs the job asked
    for, nodes, tp/pp/ep, concurrency, max batch size, quantization): A against B (two runs,
    or a set and a run), base against target (windows or commits), or with neither each
    setup's newest run against the median of its earlier PASSED runs; the difference in % and
    a verdict against the tolerance. Exits 17 when one regressed, 11 when nothing matched."""
    given = dict(locals())
    from scriptast.cli.results_actions import compare_action

    _guarded(lambda: compare_action(given))


@results_app.command("export")
def export_command(
    format_name: str = typer.Option("csv", "--format", help="csv, json or junit."),
    output: str | None = typer.Option(None, "-o", "--output", help="Write here (default: stdout)."),
    model: str | None = MODEL,
    workflow: str | None = WORKFLOW,
    gpu_type: str | None = GPU_TYPE,
    since: str | None = SINCE,
    verdict: str | None = VERDICT,
    figures: str | None = typer.Option(
        None, "--figures", help="CSV: only these figures' columns (comma-separated names)."
    ),
    results: str | None = RESULTS,
) -> None:
    """The chosen runs as CSV (a row a run: its keys, verdict and a column a figure), JSON or
    JUnit XML (a test case a run; a run not PASSED is a failed case with its verdict and
    reason)."""

    def exported() -> int:
        from scriptast.errors import InputError
        from scriptast.results.store.export import (
            FORMATS,
            as_csv,
            as_json,
            as_junit,
            figure_columns,
            pages,
        )

        if format_name not in FORMATS:
            raise InputError(f"--format {format_name}: give one of {', '.join(FORMATS)}")
        chosen = run_filter(model, workflow, gpu_type, since, verdict)
        with open_store(results) as store:
            runs = pages(store, chosen)
            if format_name == "csv":
                wanted = [n.strip() for n in (figures or "").split(",") if n.strip()]
                chunks = as_csv(store, runs, figure_columns(store, chosen, wanted))
            elif format_name == "json":
                chunks = as_json(store, runs)
            else:
                chunks = as_junit(store, list(runs))
            if output is None:
                for chunk in chunks:
                    sys.stdout.write(chunk)
            else:
                from scriptast.workdir.files import replace_file_streamed

                replace_file_streamed(output, (chunk.encode() for chunk in chunks))
        return 0

    _guarded(exported)


AGAINST_HELP = (
    "The front weighs throughput per GPU against per-user throughput (per-user) or against "
    "request latency (latency)."
)


@results_app.command("sweep")
def sweep_command(
    sweep: str | None = typer.Argument(
        None, help="A job array's id or the start of a sweep's sha256 (default: the latest)."
    ),
    against: str = typer.Option("per-user", "--against", help=AGAINST_HELP),
    output_format: str = typer.Option("table", "--format", help="table, csv or json."),
    results: str | None = RESULTS,
) -> None:
    """A bench sweep's tasks: their setup (tp, pp, ep, concurrency, max batch size, GPUs) and
    figures (throughput per GPU and per user, TTFT, TPOT, request latency percentiles), the
    Pareto-optimal setups marked."""

    def tabled() -> int:
        from scriptast.errors import InputError
        from scriptast.results.store import sweep_curve

        if against not in sweep_curve.AGAINST:
            raise InputError(f"--against {against}: give {' or '.join(sweep_curve.AGAINST)}")
        if output_format not in ("table", "csv", "json"):
            raise InputError(f"--format {output_format}: give table, csv or json")
        with open_store(results) as store:
            wanted, points = sweep_curve.sweep_points(store, sweep)
        if output_format == "csv":
            sys.stdout.write(sweep_curve.as_csv(points, against))
        elif output_format == "json":
            sys.stdout.write(sweep_curve.as_json(points, against, wanted))
        else:
            table = sweep_curve.as_table(points, against, wanted)
            sys.stdout.write("".join(cell(line) + "\n" for line in table.splitlines()))
        return 0

    _guarded(tabled)


@results_app.command("plot")
def plot_command(
    figure: str | None = typer.Argument(
        None, help="The figure (results show lists a run's); not with --sweep."
    ),
    output: str = typer.Option(..., "-o", "--output", help="The image: trend.png or trend.svg."),
    model: str | None = MODEL,
    workflow: str | None = WORKFLOW,
    since: str | None = SINCE,
    by: str | None = typer.Option(
        None, "--by", help="One line a value of this key (tp, gpu_count, ...), not a setup."
    ),
    sweep: str | None = typer.Option(
        None,
        "--sweep",
        help="Draw this sweep's curve instead (a job array's id, or a sha256 "
        "prefix; 'latest' for the latest).",
    ),
    against: str = typer.Option("per-user", "--against", help=AGAINST_HELP),
    results: str | None = RESULTS,
) -> None:
    """The figure over time, one line a setup (or a value of --by's key), its reference as a
    band; or with --sweep a sweep's throughput per GPU against per-user throughput (or
    latency), every setup labelled, the Pareto front a line (needs matplotlib: pip install
    'scriptast\\[plot]')."""

    def plotted() -> int:
        from scriptast.errors import InputError
        from scriptast.results.store.plot import FORMATS, draw, save, series
        from scriptast.results.store.rows import SETUP

        if not output.endswith(FORMATS):
            raise InputError(f"-o {output}: give a .png or .svg file")
        if sweep is not None:
            return _plot_sweep(None if sweep == "latest" else sweep, against, output, results,
                               figure)  # fmt: skip
        if figure is None:
            raise InputError("results plot: give the FIGURE to draw over time, or --sweep ID")
        if by is not None and by not in SETUP:
            raise InputError(f"--by {by}: give one of {', '.join(SETUP)}")
        chosen = run_filter(model, workflow, None, since, None)
        with open_store(results) as store:
            found = series(store, figure, chosen, by)
        save(draw(figure, found), output)
        lines = found.lines
        sys.stdout.write(f"{output}: {figure}, {sum(len(s.values) for s in lines)} run(s), "
                         f"{len(lines)} line(s)\n")  # fmt: skip
        return 0

    _guarded(plotted)


def _plot_sweep(sweep: str | None, against: str, output: str, results: str | None,
                figure: str | None) -> int:  # fmt: skip
    from scriptast.errors import InputError
    from scriptast.results.store import sweep_curve
    from scriptast.results.store.plot import save

    if figure is not None:
        raise InputError(f"results plot --sweep draws the sweep's curve: drop the figure {figure}")
    if against not in sweep_curve.AGAINST:
        raise InputError(f"--against {against}: give {' or '.join(sweep_curve.AGAINST)}")
    with open_store(results) as store:
        wanted, points = sweep_curve.sweep_points(store, sweep)
    save(sweep_curve.draw_curve(points, against, wanted), output)
    front = sweep_curve.pareto(points, against)
    sys.stdout.write(f"{output}: sweep {wanted}, {len(points)} setup(s), {len(front)} on the "
                     "Pareto front\n")  # fmt: skip
    return 0


@results_app.command("import")
def import_command(
    work_dirs: list[str] = typer.Argument(..., help="Work dirs whose run.json holds a verdict."),
    results: str | None = RESULTS,
) -> None:
    """Add recorded runs (run.json) to the store: a run the store could not take when it was
    judged, or one judged before there was a store. A run stored before is kept once."""

    def imported() -> int:
        from scriptast.executor.importing import import_work_dirs
        from scriptast.results.store.location import locate

        for line in import_work_dirs(work_dirs, locate(results)):
            sys.stdout.write(cell(line) + "\n")
        return 0

    _guarded(imported)
