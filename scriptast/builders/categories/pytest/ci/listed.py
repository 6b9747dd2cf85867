"""Where a test id is listed in the test-db, and on how many GPUs CI runs it there: each block
whose tests name the id (a line's first word) with the block's `system_gpu_count`. A file is
parsed only when its bytes hold the id, so a pytest emit reads the whole test-db cheaply."""

from __future__ import annotations

import os
import posixpath

import msgspec

from scriptast.builders.categories.pytest.ci.testdb_match import TEST_DB, Block, read_test_db
from scriptast.errors import InputError


class Listing(msgspec.Struct, frozen=True, kw_only=True):
    """A block that lists the test: its file, first line and GPU count (None: it names none)."""

    path: str
    line: int
    gpus: int | None


def _gpus(block: Block) -> int | None:
    bounds = block.ranges.get("system_gpu_count", {})
    low, high = bounds.get("gte"), bounds.get("lte")
    if low is not None and (high is None or high == low):
        return int(low)
    return int(high) if high is not None and low is None else None


def listings(repo_root: str, test_ids: list[str]) -> dict[str, list[Listing]]:
    """Every block of the repository's test-db that lists each of `test_ids` (relative to
    tests/integration/defs, as the test-db writes ids), in file and block order; each file is
    read once, and parsed only when it holds one of the ids."""
    folder = posixpath.join(repo_root, TEST_DB)
    found: dict[str, list[Listing]] = {test_id: [] for test_id in test_ids}
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".yml")) if test_ids else []
    except OSError:
        return found
    for name in names:
        try:
            with open(posixpath.join(folder, name), "rb") as stream:
                data = stream.read()
            if not any(test_id.encode() in data for test_id in test_ids):
                continue
            blocks, path = read_test_db(repo_root, name[: -len(".yml")])
        except (OSError, InputError):
            continue  # a file this test id does not depend on being whole
        for block in blocks:
            named = {line.split(" ", 1)[0] for line in block.tests}
            for test_id in test_ids:
                if test_id in named:
                    found[test_id].append(Listing(path=path, line=block.line, gpus=_gpus(block)))
    return found


class Listed(msgspec.Struct, frozen=True, kw_only=True):
    """The GPUs the test-db runs a job's tests on (None: no block lists them with a count),
    what says so, and where the test-db and the marks disagree."""

    gpus: int | None
    source: str
    disagreements: tuple[str, ...]


def test_db_gpus(repo_root: str, test_ids: list[str], marks: int | None) -> Listed:
    """For each of `test_ids`, the smallest block that lists it on at least what `marks` (the
    count the tests' marks and ids give) asks: the smallest CI machine that runs it (none that
    large: its largest); over the ids, the most any one needs. Each id whose blocks disagree with
    `marks` is said."""
    best: tuple[int, str] | None = None
    said = []
    listed = listings(repo_root, test_ids)
    need = marks if marks is not None else 1
    for test_id in test_ids:
        counted = [item for item in listed[test_id] if item.gpus is not None]
        if not counted:
            continue
        where = ", ".join(f"{posixpath.basename(i.path)}:{i.line} ({i.gpus})" for i in counted)
        counts = {i.gpus for i in counted if i.gpus is not None}
        fitting = [i for i in counted if (i.gpus or 0) >= need]
        chosen = (min(fitting, key=lambda i: i.gpus or 0) if fitting
                  else max(counted, key=lambda i: i.gpus or 0))  # fmt: skip
        assert chosen.gpus is not None
        if best is None or chosen.gpus > best[0]:
            how = (f"the smallest of the {len(counted)} blocks that list it that holds what its "
                   "marks ask" if len(counted) > 1 else "system_gpu_count")  # fmt: skip
            best = (chosen.gpus, f"the test-db runs {test_id} on {chosen.gpus} GPU(s): "
                                 f"{chosen.path} block at line {chosen.line} ({how})")  # fmt: skip
        if counts != {need}:
            marked = (f"its marks and id say {marks}" if marks is not None
                      else "its marks say none (1 GPU)")  # fmt: skip
            said.append(f"{test_id}: {marked}, the test-db lists it on {where}")
    if best is None:
        return Listed(gpus=None, source="", disagreements=tuple(said))
    return Listed(gpus=best[0], source=best[1], disagreements=tuple(said))
