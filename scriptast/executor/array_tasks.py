"""`run --array-task INDICES`: of a sweep's job arrays, only the tasks asked for, found among
the work dirs given or the work dirs of an array script emit wrote (its arrays.json)."""

from __future__ import annotations

import json
import os
import posixpath
import re
from collections.abc import Sequence

from scriptast.common.index_ranges import index_ranges
from scriptast.contract.work_dir_names import ARRAYS_MANIFEST
from scriptast.errors import RunError
from scriptast.executor.job_files import LoadedJob, read_regular

INDICES = re.compile(r"\d{1,9}(-\d{1,9})?(,\d{1,9}(-\d{1,9})?)*")
"""`--array-task`'s value: indices and ranges as sbatch's --array takes them (3, 0-4, 1,3,5-7)."""


def parse_indices(text: str) -> tuple[tuple[int, int], ...]:
    """The ranges (first, last) `--array-task` names, or RunError saying how to write them."""
    compact = text.replace(" ", "")
    if not INDICES.fullmatch(compact):
        raise RunError(
            f"--array-task {text!r} is not a list of task indices and ranges: give them as "
            "sbatch's --array takes them (3, 0-4, 1,3,5-7)"
        )
    ranges: list[tuple[int, int]] = []
    for part in compact.split(","):
        first, _, last = part.partition("-")
        low, high = int(first), int(last or first)
        if high < low:
            raise RunError(f"--array-task {text!r}: the range {part} runs backwards; "
                           f"write it {high}-{low}")  # fmt: skip
        ranges.append((low, high))
    return tuple(ranges)


def work_dirs_of(paths: Sequence[str]) -> list[str]:
    """`paths` with each array script emit wrote (a regular file its folder's arrays.json
    lists) replaced by its tasks' work dirs, in index order; every other path as given."""
    expanded: list[str] = []
    for path in paths:
        if os.path.isfile(path) and not os.path.islink(path):
            expanded += _tasks_of_script(path)
        else:
            expanded.append(path)
    return expanded


def _tasks_of_script(path: str) -> list[str]:
    script = posixpath.abspath(path)
    manifest = posixpath.join(posixpath.dirname(script), ARRAYS_MANIFEST)
    if not os.path.lexists(manifest):
        raise RunError(
            f"{path} is a file, not a work dir: give the work dirs emit wrote, or an array "
            f"script of a sweep (emit --requests FILE --array writes them with {ARRAYS_MANIFEST})"
        )
    try:
        arrays = json.loads(read_regular(manifest, ARRAYS_MANIFEST, follow_links=False))["arrays"]
        listed = {str(a["script"]): [str(w) for w in a["work_dirs"]] for a in arrays}
    except (ValueError, KeyError, TypeError):
        raise RunError(f"{manifest} is not the manifest emit writes: emit the sweep again "
                       "with --array") from None  # fmt: skip
    if script not in listed:
        raise RunError(f"{path} is not an array script {manifest} lists: give the work dirs, "
                       "or an array script of that sweep")  # fmt: skip
    return listed[script]


def select_tasks(jobs: Sequence[LoadedJob], ranges: Sequence[tuple[int, int]]) -> list[LoadedJob]:
    """The jobs that are tasks of a job array with an index `ranges` holds, in the order
    given; RunError for a job that is no array's task, or an index no job given has."""
    indexed: list[tuple[LoadedJob, int]] = []
    for job in jobs:
        task = job.spec.array or job.spec.processes  # a docker job of a sweep has its index too
        if task is None:
            raise RunError(
                f"{job.work_dir} is not a task of a job array (emit --requests FILE --array "
                "writes them): run it without --array-task"
            )
        indexed.append((job, task.index))
    found = {index for _, index in indexed}
    for low, high in ranges:
        missing = next((i for i in range(low, high + 1) if i not in found), None)
        if missing is not None:
            raise RunError(
                f"--array-task: no task of index {missing} among the work dirs given (their "
                f"indices: {_listed(sorted(found))}): give the array's work dirs or its script"
            )
    return [job for job, index in indexed if _holds(ranges, index)]


def _holds(ranges: Sequence[tuple[int, int]], index: int) -> bool:
    return any(low <= index <= high for low, high in ranges)


def _listed(indices: Sequence[int]) -> str:
    return index_ranges(indices) if indices else "none"
