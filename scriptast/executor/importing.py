"""Recorded runs added to the results store later (`scriptast results import WORK_DIR...`):
a run the store could not take when it was judged, or one judged before there was a store."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Sequence

from scriptast.contract.work_dir_names import RUN_FILE
from scriptast.errors import RunError
from scriptast.executor.job_files import load_job
from scriptast.executor.run import read_record
from scriptast.executor.stored import row_of
from scriptast.results.store.database import Store
from scriptast.results.store.location import Location


def _made_by_this_user(path: str) -> None:
    """A run.json another account wrote says what that account chose it to say: only one's own
    runs are imported."""
    try:
        owner = os.lstat(path).st_uid
    except FileNotFoundError:
        return  # read_record says there is no run
    if owner != os.geteuid():
        raise RunError(f"{path} belongs to another user (uid {owner}): import only the runs "
                       "you made")  # fmt: skip


def import_work_dirs(work_dirs: Sequence[str], location: Location) -> list[str]:
    """Each work dir's judged run appended (once: a run stored before is said so); a line a
    work dir. Every work dir is read before the store is touched, so a bad one adds none."""
    rows = []
    for work_dir in work_dirs:
        job = load_job(work_dir)
        _made_by_this_user(posixpath.join(job.work_dir, RUN_FILE))
        record = read_record(job.work_dir)
        if record is None:
            raise RunError(f"{job.work_dir} has no run.json: run it with 'scriptast run' first")
        if record.verdict is None:
            raise RunError(f"{job.work_dir}: its run is not judged yet: follow it with "
                           f"'scriptast watch {job.work_dir}' (that stores it)")  # fmt: skip
        if record.work_dir != job.work_dir:
            raise RunError(f"{job.work_dir}/run.json records the work dir {record.work_dir}: "
                           "a copy is not imported")  # fmt: skip
        rows.append((job.work_dir, row_of(job, record, None)))
    said = []
    with Store.open(location, create=True) as store:
        for work_dir, row in rows:
            run_id = store.append(row)
            said.append(f"{work_dir}: stored as run {run_id}" if run_id is not None
                        else f"{work_dir}: stored before (the same run)")  # fmt: skip
    return said
