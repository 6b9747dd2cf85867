"""The `results` commands list, show and compare, without typer: the console entry's fast
path (scriptast/cli/results_fast.py) and the typer commands (results_command.py) both call them
with the options' values; each returns the exit code."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from scriptast.cli.say import fail

if TYPE_CHECKING:
    from scriptast.results.store.compare import Comparison
    from scriptast.results.store.database import Store
    from scriptast.results.store.queries import RunFilter, RunRow

REGRESSED_EXIT = 17
"""`results compare` exits as `run` does for a regressed figure."""
NOTHING_MATCHES = 11
"""compare's exit when no stored run matches what was asked (INCONCLUSIVE's code)."""

FILTERS: dict[str, tuple[str, type]] = {
    "--model": ("model", str), "--workflow": ("workflow", str), "--gpu-type": ("gpu_type", str),
    "--since": ("since", str), "--until": ("until", str), "--verdict": ("verdict", str),
    "--partition": ("partition", str), "--cluster": ("cluster", str), "--commit": ("commit", str),
    "--user": ("user", str), "--gpus": ("gpus", int), "--tp": ("tp", int),
    "--sweep": ("sweep", str), "--results": ("results", str),
}  # fmt: skip
OPTIONS: dict[str, dict[str, tuple[str, type]]] = {
    "list": {**FILTERS, "--limit": ("limit", int)},
    "show": {"--json": ("json_output", bool), "--results": ("results", str)},
    "compare": {**FILTERS, "--base": ("base", str), "--target": ("target", str),
                "--base-commit": ("base_commit", str), "--target-commit": ("target_commit", str),
                "--aggregate": ("aggregate", str), "--group-by": ("group_by", list),
                "--tolerance": ("tolerance", str), "--depth": ("depth", int),
                "--figure": ("figure", str), "--json": ("json_output", bool)},
}  # fmt: skip
"""Each command's options: flag -> (parameter, type; list: repeatable). The typer commands
declare the same (a test holds them equal)."""
DEFAULTS: dict[str, dict[str, Any]] = {
    "list": {"limit": 50},
    "show": {"json_output": False},
    "compare": {"sides": [], "aggregate": "median", "group_by": [], "tolerance": "5%",
                "depth": 5, "json_output": False},
}  # fmt: skip
"""The values an option not given takes (None for the others)."""


def guarded(action: Callable[[], int]) -> int:
    """The action's exit code; a ScriptastError is its one error line, exit 1."""
    from scriptast.errors import ScriptastError

    try:
        return action()
    except ScriptastError as error:
        fail(str(error))


def _given(command: str, values: dict[str, Any]) -> dict[str, Any]:
    chosen = {dest: None for dest, _ in OPTIONS[command].values()}
    return {**chosen, **DEFAULTS[command], **{k: v for k, v in values.items() if v is not None}}


def list_action(values: dict[str, Any]) -> int:
    """`results list`."""
    from scriptast.results.store.queries import list_runs

    v = _given("list", values)
    chosen = run_filter(v["model"], v["workflow"], v["gpu_type"], v["since"], v["verdict"], None,
                     v["commit"], _keys(v))  # fmt: skip
    with open_store(v["results"]) as store:
        runs = list_runs(store, chosen, v["limit"])
    rows = [("ID", "FINISHED", "VERDICT", "WORKFLOW", "MODEL", "GPUS", "HEADLINE", "WORK_DIR")]
    rows += [(str(r.id), r.finished_at, r.verdict, cell(r.workflow), cell(r.model),
              _gpus(r), _headline(r), cell(r.work_dir)) for r in runs]  # fmt: skip
    sys.stdout.write(table(rows) if runs else "no stored run matches\n")
    return 0


def _keys(v: dict[str, Any]) -> dict[str, object]:
    return {"until": v["until"], "partition": v["partition"], "cluster": v["cluster"],
            "user_name": v["user"], "gpu_count": v["gpus"], "tp": v["tp"],
            "sweep": v["sweep"]}  # fmt: skip


def show_action(values: dict[str, Any]) -> int:
    """`results show RUN_ID`."""
    import msgspec

    from scriptast.contract.run_record import RunRecord
    from scriptast.executor.report import summary
    from scriptast.results.store.queries import SUMMARY, one_run

    v = _given("show", values)
    with open_store(v["results"]) as store:
        row, text = one_run(store, v["run_id"])
    if v["json_output"]:
        sys.stdout.write(text)
        return 0
    keys = {field: getattr(row, field) for field in SUMMARY}
    width = max(len(k) for k in keys)
    sys.stdout.write("".join(f"{k:<{width}}  {cell(value)}\n" for k, value in keys.items()))
    from scriptast.common.colour import wants_colour

    record = msgspec.json.decode(text, type=RunRecord)
    sys.stdout.write("\n" + summary(record, True, colour=wants_colour(sys.stdout)))
    return 0


def compare_action(values: dict[str, Any]) -> int:
    """`results compare`."""
    import msgspec

    v = _given("compare", values)
    ask = _CompareAsk(sides=list(v["sides"] or ()), windows=(v["base"], v["target"],
                      v["base_commit"], v["target_commit"]), aggregate=v["aggregate"],
                      group_by=tuple(v["group_by"]), tolerance=v["tolerance"], depth=v["depth"],
                      figure=v["figure"], model=v["model"], workflow=v["workflow"],
                      gpu_type=v["gpu_type"], commit=v["commit"], verdict=v["verdict"],
                      since=v["since"], keys=_keys(v))  # fmt: skip
    with open_store(v["results"]) as store:
        found = _compare(store, ask)
    if v["json_output"]:
        sys.stdout.write(msgspec.json.format(msgspec.json.encode(found), indent=2).decode()
                         + "\n")  # fmt: skip
    elif found:
        from scriptast.common.colour import wants_colour

        sys.stdout.write(_comparisons(found, colour=wants_colour(sys.stdout)))
    else:
        sys.stdout.write("nothing to compare: no stored run matches\n")
    if not found:
        return NOTHING_MATCHES
    return REGRESSED_EXIT if any(c.verdict == "REGRESSED" for c in found) else 0


def open_store(results: str | None) -> Store:
    from scriptast.results.store.database import Store
    from scriptast.results.store.location import locate

    store = Store.open(locate(results), create=False)
    for line in store.migrated:
        sys.stderr.write(f"note: {line}\n")
    return store


def run_filter(model: str | None, workflow: str | None, gpu_type: str | None, since: str | None,
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


def cell(value: object) -> str:
    from scriptast.executor.shown import shown

    return "-" if value is None else shown(str(value))


def _headline(run: RunRow) -> str:
    if run.headline_name is None or run.headline_value is None:
        return "-"
    unit = f" {run.headline_unit}" if run.headline_unit else ""
    value = run.headline_value
    shown = f"{value:.0f}" if run.headline_name == "tests passed" else f"{value:.2f}"
    return cell(f"{run.headline_name} {shown}{unit}")


def _gpus(run: RunRow) -> str:
    count = "" if run.gpu_count is None else f"x{run.gpu_count}"
    return cell(f"{run.gpu_type or 'GPU'}{count}")


def table(rows: Sequence[tuple[str, ...]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return "".join("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)) + "  "
                   + row[-1] + "\n" for row in rows)  # fmt: skip


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
        chosen = run_filter(*common, ask.since, ask.verdict, None, ask.commit, ask.keys)
        return compare_history(store, chosen, tolerance=allowed, depth=ask.depth,
                               figure=ask.figure)  # fmt: skip
    if (base is None) != (target is None) or (base_commit is None) != (target_commit is None):
        raise InputError("give both --base and --target (windows), or both --base-commit and "
                         "--target-commit")  # fmt: skip
    keys = dict(ask.keys, until=None)
    before = run_filter(*common, None, ask.verdict, base, base_commit, keys)
    after = run_filter(*common, None, ask.verdict, target, target_commit, keys)
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


def _comparisons(found: list[Comparison], colour: bool = False) -> str:
    rows = [("MODEL", "SETUP", "FIGURE", "BASE", "TARGET", "DIFF", "VERDICT")]
    for c in found:
        rows.append((cell(c.model), cell(c.setup or "-"), cell(c.figure),
                     f"{c.base.value:.2f} (n={c.base.runs})" if c.base else "-",
                     f"{c.target.value:.2f} (n={c.target.runs})" if c.target else "-",
                     f"{c.difference:+.2f}%" if c.difference is not None else "-",
                     c.verdict))  # fmt: skip
    regressed = sum(1 for c in found if c.verdict == "REGRESSED")
    text = table(rows)
    if colour:
        text = _painted_verdicts(text)
    return text + f"{len(found)} figure(s) compared, {regressed} REGRESSED\n"


COMPARED_COLOUR = {"REGRESSED": "31", "improved": "32", "ok": "32", "changed": "33"}


def _painted_verdicts(text: str) -> str:
    """Each row's verdict (the last column, scriptast's own word) coloured."""
    from scriptast.common.colour import paint

    out = []
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\n")
        word = body.rsplit(" ", 1)[-1]
        if word in COMPARED_COLOUR and body.endswith("  " + word):
            body = body[: -len(word)] + paint(word, COMPARED_COLOUR[word])
        out.append(body + line[len(line.rstrip("\n")) :])
    return "".join(out)
