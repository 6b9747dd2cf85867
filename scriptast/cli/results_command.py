"""`scriptast results`: the stored runs listed, one shown whole, two sets compared (or each
key's newest run against its history), exported for CI, plotted, and recorded runs imported."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple

import typer

from scriptast.cli.emit_command import fail

if TYPE_CHECKING:
    from scriptast.results.store.compare import Comparison
    from scriptast.results.store.database import Store
    from scriptast.results.store.queries import RunFilter, RunRow

REGRESSED_EXIT = 17
"""`results compare` exits as `run` does for a regressed figure."""

results_app = typer.Typer(
    help="The results store: every judged run with its figures (list, show, compare, export, "
    "plot, import).",
    pretty_exceptions_enable=False,
    no_args_is_help=True,
)

RESULTS = typer.Option(
    None,
    "--results",
    help="The store: a path, sqlite:///PATH or postgresql://... (default: $SCRIPTAST_RESULTS, "
    "else $XDG_DATA_HOME/scriptast/results.db).",
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
NOTHING_MATCHES = 11
"""compare's exit when no stored run matches what was asked (INCONCLUSIVE's code)."""


def _guarded(action: Callable[[], int]) -> None:
    from scriptast.errors import ScriptastError

    try:
        code = action()
    except ScriptastError as error:
        fail(str(error))
    raise typer.Exit(code)


def _open(results: str | None) -> Store:
    from scriptast.results.store.database import Store
    from scriptast.results.store.location import locate

    store = Store.open(locate(results), create=False)
    for line in store.migrated:
        sys.stderr.write(f"note: {line}\n")
    return store


def _filter(model: str | None, workflow: str | None, gpu_type: str | None, since: str | None,
            verdict: str | None, window: str | None = None, commit: str | None = None,
            keys: dict[str, object] | None = None) -> RunFilter:  # fmt: skip
    """The runs the options choose; `keys` are RunFilter's other fields (partition, cluster,
    user_name, gpu_count, tp) and `until`."""
    from scriptast.contract.run_record import Verdict
    from scriptast.errors import InputError
    from scriptast.results.store.queries import RunFilter
    from scriptast.results.store.windows import Window, parse_window

    if verdict is not None and verdict.upper() not in Verdict.__members__:
        raise InputError(f"--verdict {verdict}: give one of {', '.join(Verdict.__members__)}")
    chosen = parse_window(window) if window else Window()
    keys = dict(keys or {})
    until = keys.pop("until", None)
    if since is not None or until is not None:
        words = " ".join(f"{side} {value}" for side, value in (("since", since), ("until", until))
                         if value is not None)  # fmt: skip
        chosen = parse_window(words)
    given = {k: v for k, v in keys.items() if v is not None}
    return RunFilter(model=model, workflow=workflow, gpu_type=gpu_type, commit=commit,
                     verdict=verdict, window=chosen, **given)  # type: ignore[arg-type]  # fmt: skip


def _text(value: object) -> str:
    from scriptast.executor.shown import shown

    return "-" if value is None else shown(str(value))


def _headline(run: RunRow) -> str:
    if run.headline_name is None or run.headline_value is None:
        return "-"
    unit = f" {run.headline_unit}" if run.headline_unit else ""
    value = run.headline_value
    shown = f"{value:.0f}" if run.headline_name == "tests passed" else f"{value:.2f}"
    return _text(f"{run.headline_name} {shown}{unit}")


def _gpus(run: RunRow) -> str:
    count = "" if run.gpu_count is None else f"x{run.gpu_count}"
    return _text(f"{run.gpu_type or 'GPU'}{count}")


def _table(rows: Sequence[tuple[str, ...]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return "".join("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)) + "  "
                   + row[-1] + "\n" for row in rows)  # fmt: skip


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
    limit: int = typer.Option(50, "--limit", min=1, help="At most this many runs."),
    results: str | None = RESULTS,
) -> None:
    """The stored runs, newest first: one line a run, with its headline figure."""

    def listed() -> int:
        from scriptast.results.store.queries import list_runs

        chosen = _filter(model, workflow, gpu_type, since, verdict, None, commit,
                         {"until": until, "partition": partition, "cluster": cluster,
                          "user_name": user, "gpu_count": gpus, "tp": tp})  # fmt: skip
        with _open(results) as store:
            runs = list_runs(store, chosen, limit)
        rows = [("ID", "FINISHED", "VERDICT", "WORKFLOW", "MODEL", "GPUS", "HEADLINE", "WORK_DIR")]
        rows += [(str(r.id), r.finished_at, r.verdict, _text(r.workflow), _text(r.model),
                  _gpus(r), _headline(r), _text(r.work_dir)) for r in runs]  # fmt: skip
        sys.stdout.write(_table(rows) if runs else "no stored run matches\n")
        return 0

    _guarded(listed)


@results_app.command("show")
def show_command(
    run_id: int = typer.Argument(..., help="The run's id (results list shows it)."),
    json_output: bool = typer.Option(False, "--json", help="Print the stored record as JSON."),
    results: str | None = RESULTS,
) -> None:
    """One stored run, whole: its keys, then its verdict as run printed it, with every figure
    and its reference and margin, the failed tests and the notes."""

    def shown() -> int:
        import msgspec

        from scriptast.contract.run_record import RunRecord
        from scriptast.executor.report import summary
        from scriptast.results.store.queries import SUMMARY, one_run

        with _open(results) as store:
            row, text = one_run(store, run_id)
        if json_output:
            sys.stdout.write(text)
            return 0
        keys = {field: getattr(row, field) for field in SUMMARY}
        width = max(len(k) for k in keys)
        sys.stdout.write("".join(f"{k:<{width}}  {_text(v)}\n" for k, v in keys.items()))
        sys.stdout.write("\n" + summary(msgspec.json.decode(text, type=RunRecord), True))
        return 0

    _guarded(shown)


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

    def compared() -> int:
        import msgspec

        keys: dict[str, object] = {"until": until, "partition": partition, "cluster": cluster,
                                   "user_name": user, "gpu_count": gpus, "tp": tp}  # fmt: skip
        ask = _CompareAsk(sides=list(sides or ()), windows=(base, target, base_commit,
                          target_commit), aggregate=aggregate, group_by=tuple(group_by),
                          tolerance=tolerance, depth=depth, figure=figure, model=model,
                          workflow=workflow, gpu_type=gpu_type, commit=commit, verdict=verdict,
                          since=since, keys=keys)  # fmt: skip
        with _open(results) as store:
            found = _compare(store, ask)
        if json_output:
            sys.stdout.write(msgspec.json.format(msgspec.json.encode(found), indent=2).decode()
                             + "\n")  # fmt: skip
        elif found:
            sys.stdout.write(_comparisons(found))
        else:
            sys.stdout.write("nothing to compare: no stored run matches\n")
        if not found:
            return NOTHING_MATCHES
        return REGRESSED_EXIT if any(c.verdict == "REGRESSED" for c in found) else 0

    _guarded(compared)


class _CompareAsk(NamedTuple):
    """What `results compare` was asked."""

    sides: list[str]
    windows: tuple[str | None, str | None, str | None, str | None]
    aggregate: str
    group_by: tuple[str, ...]
    tolerance: str
    depth: int
    figure: str | None
    model: str | None
    workflow: str | None
    gpu_type: str | None
    commit: str | None
    verdict: str | None
    since: str | None
    keys: dict[str, object]


def _compare(store: Store, ask: _CompareAsk) -> list[Comparison]:
    """The comparisons `ask` names: A B, two windows or commits, or each setup's history."""
    from scriptast.errors import InputError
    from scriptast.results.store.compare import AGGREGATES, compare_history, compare_sides
    from scriptast.results.store.rows import SETUP

    if ask.aggregate not in AGGREGATES:
        raise InputError(f"--aggregate {ask.aggregate}: give one of {', '.join(AGGREGATES)}")
    unknown = [key for key in ask.group_by if key not in SETUP]
    if unknown:
        raise InputError(f"--group-by {unknown[0]}: give one of {', '.join(SETUP)}")
    allowed = tolerance_percent(ask.tolerance)
    base, target, base_commit, target_commit = ask.windows
    if ask.sides and any(ask.windows):
        raise InputError("give A B, or --base/--target, or --base-commit/--target-commit")
    if ask.figure is not None:
        _known_figure(store, ask.figure)
    group_by = ask.group_by or SETUP
    if ask.sides:
        return _compare_named(store, ask.sides, allowed, ask.aggregate, ask.depth, ask.figure,
                              group_by)  # fmt: skip
    common = (ask.model, ask.workflow, ask.gpu_type)
    if not any(ask.windows):
        chosen = _filter(*common, ask.since, ask.verdict, None, ask.commit, ask.keys)
        return compare_history(store, chosen, tolerance=allowed, depth=ask.depth,
                               figure=ask.figure)  # fmt: skip
    if (base is None) != (target is None) or (base_commit is None) != (target_commit is None):
        raise InputError("give both --base and --target (windows), or both --base-commit and "
                         "--target-commit")  # fmt: skip
    keys = dict(ask.keys, until=None)
    before = _filter(*common, None, ask.verdict, base, base_commit, keys)
    after = _filter(*common, None, ask.verdict, target, target_commit, keys)
    return compare_sides(
        store,
        before,
        after,
        aggregate=ask.aggregate,
        tolerance=allowed,
        figure=ask.figure,
        group_by=group_by,
    )


def _compare_named(store: Store, sides: list[str], tolerance: float, aggregate: str, depth: int,
                   figure: str | None, group_by: tuple[str, ...]) -> list[Comparison]:  # fmt: skip
    """`compare A B`: B a run id; A a run id, a commit, a window, or `history`."""
    from scriptast.errors import InputError
    from scriptast.results.store.compare import compare_history, compare_sides
    from scriptast.results.store.queries import RunFilter, one_run
    from scriptast.results.store.windows import Window, parse_window

    if len(sides) != 2 or not sides[1].isdigit():
        raise InputError("compare A B: B is a run id ('results list' shows them), A a run id, "
                         "a commit, a window ('since 7d') or 'history'")  # fmt: skip
    run, _ = one_run(store, int(sides[1]))
    target = RunFilter(run_ids=(run.id,))
    first = sides[0]
    if first == "history":
        chosen = RunFilter(window=Window(until=_just_after(run.finished_at)))
        found = compare_history(store, chosen, tolerance=tolerance, depth=depth, figure=figure)
        return [c for c in found if c.target_run == run.id]
    if first.isdigit():
        one_run(store, int(first))  # an id that is none is said
        base = RunFilter(run_ids=(int(first),))
    elif len(first) >= 7 and all(c in "0123456789abcdef" for c in first.lower()):
        base = RunFilter(commit=first)
    else:
        base = RunFilter(window=parse_window(first))
    return compare_sides(
        store,
        base,
        target,
        aggregate=aggregate,
        tolerance=tolerance,
        figure=figure,
        group_by=group_by,
    )


def _just_after(finished: str) -> str:
    """The second after `finished` (ISO 8601 in UTC), so that a window ends with it."""
    import calendar
    import time

    moment = calendar.timegm(time.strptime(finished, "%Y-%m-%dT%H:%M:%SZ")) + 1
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))


def tolerance_percent(text: str) -> float:
    from scriptast.errors import InputError

    try:
        value = float(text.strip().removesuffix("%"))
    except ValueError:
        raise InputError(f"--tolerance {text}: give a percentage such as 5%") from None
    if not 0 <= value < 1000:
        raise InputError(f"--tolerance {text}: give a percentage from 0 to 1000")
    return value


def _known_figure(store: Store, figure: str) -> None:
    from scriptast.errors import InputError
    from scriptast.results.store.queries import figure_names

    names = figure_names(store)
    if figure not in names:
        from scriptast.common.suggest import did_you_mean

        hint = did_you_mean(figure, sorted(names))
        raise InputError(f"no stored run has the figure {figure!r}{hint}: 'scriptast results "
                         "show RUN_ID' lists a run's figures")  # fmt: skip


def _comparisons(found: list[Comparison]) -> str:
    rows = [("MODEL", "SETUP", "FIGURE", "BASE", "TARGET", "DIFF", "VERDICT")]
    for c in found:
        rows.append((_text(c.model), _text(c.setup or "-"), _text(c.figure),
                     f"{c.base.value:.2f} (n={c.base.runs})" if c.base else "-",
                     f"{c.target.value:.2f} (n={c.target.runs})" if c.target else "-",
                     f"{c.difference:+.2f}%" if c.difference is not None else "-",
                     c.verdict))  # fmt: skip
    regressed = sum(1 for c in found if c.verdict == "REGRESSED")
    return _table(rows) + f"{len(found)} figure(s) compared, {regressed} REGRESSED\n"


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
        chosen = _filter(model, workflow, gpu_type, since, verdict)
        with _open(results) as store:
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
                from scriptast.workdir.write import replace_file_streamed

                replace_file_streamed(output, (chunk.encode() for chunk in chunks))
        return 0

    _guarded(exported)


@results_app.command("plot")
def plot_command(
    figure: str = typer.Argument(..., help="The figure (results show lists a run's)."),
    output: str = typer.Option(..., "-o", "--output", help="The image: trend.png or trend.svg."),
    model: str | None = MODEL,
    workflow: str | None = WORKFLOW,
    since: str | None = SINCE,
    by: str | None = typer.Option(
        None, "--by", help="One line a value of this key (tp, gpu_count, ...), not a setup."
    ),
    results: str | None = RESULTS,
) -> None:
    """The figure over time, one line a setup (or a value of --by's key), its reference as a
    band (needs matplotlib: pip install 'scriptast\\[plot]')."""

    def plotted() -> int:
        from scriptast.errors import InputError
        from scriptast.results.store.plot import FORMATS, draw, save, series
        from scriptast.results.store.rows import SETUP

        if not output.endswith(FORMATS):
            raise InputError(f"-o {output}: give a .png or .svg file")
        if by is not None and by not in SETUP:
            raise InputError(f"--by {by}: give one of {', '.join(SETUP)}")
        chosen = _filter(model, workflow, None, since, None)
        with _open(results) as store:
            found = series(store, figure, chosen, by)
        save(draw(figure, found), output)
        lines = found.lines
        sys.stdout.write(f"{output}: {figure}, {sum(len(s.values) for s in lines)} run(s), "
                         f"{len(lines)} line(s)\n")  # fmt: skip
        return 0

    _guarded(plotted)


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
            sys.stdout.write(_text(line) + "\n")
        return 0

    _guarded(imported)
