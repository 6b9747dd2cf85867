"""What a finished job measured, checked: the figures its logs printed and its result files
hold (JUnit XML, trtllm-bench's --report_json), each held against the reference that applies
(a references file first, then the repository's accuracy references), the figures that were
expected and never printed, and the result files that could not be read."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Protocol

import msgspec

from scriptast.contract.measured import Figure, Measures, PytestResults
from scriptast.results import accuracy
from scriptast.results.acceptance import SUFFIX as ACCEPTANCE, AcceptanceLines, acceptance_check
from scriptast.results.bench_report import HEADLINE, BenchLines, report_figures
from scriptast.results.eval_lines import LM_EVAL_TASKS, EvalLines
from scriptast.results.junit import JunitError, read_junit
from scriptast.results.lm_eval_table import lm_eval_figures
from scriptast.results.reference_file import References, Where, check, choose
from scriptast.results.serving_lines import HEADLINE as SERVING_HEADLINE, serving_figures

ReadFile = Callable[[str], bytes]
"""Reads a result file by the path the job wrote it at; OSError when it cannot."""
ListFiles = Callable[[str], list[str]]
"""The regular files a glob matches where the job ran (no link followed), sorted."""


class LineReader(Protocol):
    """What reads a log's figures as it streams: complete lines in blocks, then the figures
    and the values that were no number."""

    def block(self, data: bytes, source: str, first_line: int) -> None: ...

    def figures(self) -> list[Figure]: ...

    def unreadable(self) -> list[str]: ...


SPECIAL_FIGURES = {"cnn_dailymail": "cnn_dailymail rouge1", "voxpopuli": "voxpopuli wer"}


class Measured(msgspec.Struct, kw_only=True):
    """The figures (checked), a pytest run's tests, the figures expected and not printed, the
    result files not read with why, and notes on how they were read."""

    figures: list[Figure]
    tests: PytestResults | None = None
    missing: list[str] = []
    unread: list[str] = []
    notes: list[str] = []
    """What the record should say of how the figures were read (a value replaced, ...)."""
    errors: list[str] = []
    """References that could not be judged by (a bad entry): never PASSED with one."""

    @property
    def regressed(self) -> list[Figure]:
        """The figures outside their reference."""
        return [f for f in self.figures if f.check is not None and not f.check.ok]


def line_reader(measures: Measures | None) -> LineReader | None:
    """The reader a log's lines go through for this kind of job, if any."""
    if measures is None:
        return None
    if measures.kind == "bench":
        return BenchLines()
    if measures.kind == "eval":
        return EvalLines(measures.tasks)
    if measures.kind == "pytest":
        return AcceptanceLines()
    return None


def expected_figures(measures: Measures) -> list[str]:
    """The figures the job must print: each eval task's score, trtllm-bench's output
    throughput."""
    if measures.kind == "bench":
        return [HEADLINE]
    if measures.kind == "eval":
        return [task_figure(task) for task in measures.tasks]
    return []


def task_figure(task: str) -> str:
    """The figure a trtllm-eval task's score is read as."""
    task = LM_EVAL_TASKS.get(task, task)
    if task.startswith("covost2_"):
        return f"{task} bleu"
    return SPECIAL_FIGURES.get(task, f"{task} accuracy")


def measure(
    measures: Measures,
    logged: list[Figure],
    read_file: ReadFile,
    *,
    list_files: ListFiles | None = None,
    repo_root: str | None,
    where: Where,
    references: References | None,
    unreadable: tuple[str, ...] = (),
) -> Measured:
    """Gather, check and mark the headline of what the job measured; `unreadable` the values
    the log printed that are no number (each an unread note: the verdict is never PASSED on a
    figure that could not be read)."""
    found = {figure.name: figure for figure in logged}
    result = Measured(figures=[])
    result.unread += unreadable
    if measures.report_json:
        try:
            figures, bad = report_figures(read_file(measures.report_json), measures.report_json)
        except (OSError, ValueError) as error:
            result.unread.append(f"{measures.report_json}: {_why(error)}")
        else:
            result.unread += bad
            for figure in figures:
                _take(found, figure, result)
    if measures.junit:
        try:
            result.tests = read_junit(read_file(measures.junit), measures.junit,
                                      measures.test_prefix)  # fmt: skip
        except (OSError, JunitError) as error:
            result.unread.append(f"{measures.junit}: {_why(error)}")
    expected = expected_figures(measures)
    if measures.result_glob and list_files is not None:
        expected += _client_logs(measures.result_glob, read_file, list_files, found, result)
    if measures.accuracy_glob and list_files is not None:
        expected += _accuracy_logs(measures.accuracy_glob, read_file, list_files, found, result)
    result.missing = [name for name in expected if name not in found]
    if not expected and not found and measures.kind != "pytest":
        result.missing = [f"any {measures.kind} figure (no score line was printed)"]
    headline = _headline(measures, list(found))
    for figure in found.values():
        figure = _checked(figure, measures, repo_root, where, references, result)
        if figure.name == headline:
            figure = msgspec.structs.replace(figure, headline=True)
        result.figures.append(figure)
    return result


def _take(found: dict[str, Figure], figure: Figure, result: Measured) -> None:
    """The report file's figure where the log printed none; where it did and the two differ,
    the log's stands and the record says so."""
    logged = found.get(figure.name)
    if logged is None:
        found[figure.name] = figure
    elif not math.isclose(logged.value, figure.value, rel_tol=1e-6, abs_tol=5e-5):
        result.notes.append(
            f"{figure.name}: the log printed {logged.value:g}, {figure.source.file} holds "
            f"{figure.value:g}; the log's is judged"
        )


def _client_logs(
    pattern: str, read_file: ReadFile, list_files: ListFiles, found: dict[str, Figure],
    result: Measured,
) -> list[str]:  # fmt: skip
    """Read each perf-sanity client's log into `found`; the figures each must have."""
    try:
        paths = list_files(pattern)
    except OSError as error:
        result.unread.append(f"{pattern}: {_why(error)}")
        return []
    if not paths:
        return [f"a benchmark client's log ({pattern})"]
    expected = []
    for path in paths:
        try:
            figures, lacking, bad = serving_figures(read_file(path), path)
        except OSError as error:
            result.unread.append(f"{path}: {_why(error)}")
            continue
        result.unread += bad
        for figure in figures:
            found.setdefault(figure.name, figure)
        expected += [f.name for f in figures] + lacking
    return expected


def _accuracy_logs(
    pattern: str, read_file: ReadFile, list_files: ListFiles, found: dict[str, Figure],
    result: Measured,
) -> list[str]:  # fmt: skip
    """Read each perf-sanity accuracy run's lm_eval table into `found` (its scores named after
    the test's folder); a log without one is a missing figure. No log: no accuracy run."""
    try:
        paths = list_files(pattern)
    except OSError as error:
        result.unread.append(f"{pattern}: {_why(error)}")
        return []
    expected = []
    for path in paths:
        try:
            figures = lm_eval_figures(read_file(path), path, _test_folder(path))
        except OSError as error:
            result.unread.append(f"{path}: {_why(error)}")
            continue
        for figure in figures:
            found.setdefault(figure.name, figure)
        expected += [f.name for f in figures] or [f"lm_eval's results table in {path}"]
    return expected


def _test_folder(path: str) -> str:
    return path.rsplit("/", 2)[-2] if path.count("/") >= 1 else ""


def _why(error: Exception) -> str:
    if isinstance(error, OSError):
        return error.strerror or str(error)
    return str(error)


def _headline(measures: Measures, names: list[str]) -> str | None:
    wanted = expected_figures(measures)
    wanted += [n for n in names if n.endswith(" " + SERVING_HEADLINE)]
    return next((name for name in wanted if name in names), names[0] if names else None)


def _checked(
    figure: Figure,
    measures: Measures,
    repo_root: str | None,
    where: Where,
    references: References | None,
    result: Measured,
) -> Figure:
    reason = None
    if references is not None:
        chosen = choose(references, where, figure.name)
        if not isinstance(chosen, str):
            return check(figure, *chosen)
        reason = chosen
    if figure.name.endswith(ACCEPTANCE):
        found, error = acceptance_check(figure, repo_root)
        if error is not None:
            result.errors.append(error)
        return found
    if figure.name in accuracy.FIGURES:
        checked = accuracy.accuracy_check(figure, measures, repo_root)
        if checked.error is not None:
            result.errors.append(checked.error)
        if checked.note is not None:
            result.notes.append(checked.note)
        found = checked.figure
        if found.check is not None or reason is None:
            return found
        return msgspec.structs.replace(found, unchecked=f"{reason}; {found.unchecked}")
    if reason is None:
        reason = "no references file was given (--reference FILE)"
    return msgspec.structs.replace(figure, unchecked=reason)
