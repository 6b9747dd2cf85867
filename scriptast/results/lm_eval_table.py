"""lm_eval's results table, as a perf-sanity test's accuracy run logs it: upstream's
test_perf_sanity.py runs `lm_eval ... --output_path <out>/accuracy_eval_<task>.<server>` against
the live server and saves its output to `<out>/accuracy_eval_<task>.<server>.log`, whose
markdown table (`|Tasks|Version|Filter|n-shot|Metric| |Value| |Stderr|`) holds each task's
score under each filter (a fraction, as lm_eval prints it, and which way is better by its
arrow). A row with no task name continues the task above it; a subtask (its
name indented with ` - `) is left out, its group's row is the score."""

from __future__ import annotations

from scriptast.common.numbers import read_number
from scriptast.contract.measured import Figure, Source

HEADERS = ("Tasks", "Groups")


def lm_eval_figures(data: bytes, source: str, prefix: str = "") -> list[Figure]:
    """Every top-level task's score of each table in `data`, named `<prefix> <task> <metric>
    (<filter>)`, in the table's order."""
    figures: list[Figure] = []
    columns: dict[str, int] | None = None
    task = ""
    for number, raw in enumerate(data.decode("utf-8", "replace").splitlines(), start=1):
        line = raw.strip()
        if not line.startswith("|"):
            columns = None
            continue
        cells = [cell.strip() for cell in line.split("|")]
        if len(cells) > 1 and cells[1] in HEADERS:
            columns = {name: index for index, name in enumerate(cells) if name}
            task = ""
            continue
        if columns is None or set(line) <= set("|-: "):
            continue
        row = _Row(cells, columns)
        if row.name.startswith("-"):
            task = ""  # ` - subtask`: its rows are left out, up to the next named row
            continue
        task = row.name or task
        score = row.score()
        if not task or score is None:
            continue
        words = [w for w in (prefix, task, row.cell("Metric")) if w]
        filtered = row.cell("Filter")
        name = " ".join(words) + (f" ({filtered})" if filtered and filtered != "none" else "")
        figures.append(Figure(name=name, value=score, unit="", higher_is_better=row.higher(),
                              source=Source(file=source, line=number)))  # fmt: skip
    return figures


class _Row:
    """A row of the table, its cells read by the header's column names."""

    def __init__(self, cells: list[str], columns: dict[str, int]) -> None:
        self.cells = cells
        self.columns = columns
        self.name = next((self.cell(h) for h in HEADERS if h in columns), "")

    def cell(self, name: str) -> str:
        index = self.columns.get(name)
        return self.cells[index] if index is not None and index < len(self.cells) else ""

    def higher(self) -> bool | None:
        """The arrow lm_eval prints after the metric (unnamed column): up, down or none."""
        index = self.columns.get("Metric")
        arrow = self.cells[index + 1] if index is not None and index + 1 < len(self.cells) else ""
        return True if arrow == "\u2191" else False if arrow == "\u2193" else None

    def score(self) -> float | None:
        return read_number(self.cell("Value"))
