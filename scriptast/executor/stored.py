"""Each run `run` or `watch` judged, added to the results store; a store that cannot take it
never costs the verdict: run.json keeps the record, and the verdict says so and how to add it
later (`scriptast results import`)."""

from __future__ import annotations

import os
from collections.abc import Sequence

from scriptast.common.text_files import regular_file_bytes
from scriptast.contract.run_record import RunRecord
from scriptast.contract.work_dir_names import JOB_SPEC
from scriptast.errors import StoreError
from scriptast.executor.followed_job import Followed, utc_now
from scriptast.executor.job_files import LoadedJob
from scriptast.executor.session import Session
from scriptast.results.store.location import Location
from scriptast.results.store.origin import Fetch, origin_of
from scriptast.results.store.rows import StoredRun, stored_run

APPEND_TIMEOUT = 10.0
"""Seconds a run waits for a locked or slow store before it says the run was not stored."""


def local_bytes(path: str) -> bytes | None:
    """A regular file's bytes on this machine, never through a link (None: not readable)."""
    try:
        return regular_file_bytes(path, 1 << 20, follow_links=False)[0]
    except OSError:
        return None


def row_of(job: LoadedJob, record: RunRecord, remote: Fetch | None) -> StoredRun:
    """The judged run as the store keeps it (`remote` reads the cluster's files)."""
    origin = origin_of(job.spec, local_bytes(os.path.join(job.work_dir, JOB_SPEC)), local_bytes,
                       remote, record.remote_host, utc_now())  # fmt: skip
    return stored_run(job.spec, record, origin)


def store_judged(followed: Sequence[Followed], session: Session | None, location: Location) -> None:
    """Append every judged run to the store, each with a note in its record of where it went
    (or why it did not)."""
    judged = [each for each in followed if each.record.verdict is not None]
    if not judged:
        return
    transport = session.transport if session is not None else None
    from scriptast.results.store.database import Store  # once there is a verdict to store

    rows = [row_of(each.job, each.record, transport.fetch if transport and each.record.remote_host
                   else None) for each in judged]  # fmt: skip
    try:
        with Store.open(location, create=True, timeout=APPEND_TIMEOUT) as store:
            ids = [store.append(row) for row in rows]
            migrated = store.migrated
    except (StoreError, KeyboardInterrupt) as error:
        # the jobs are over and judged: an interrupt here stops the storing, not the verdict
        why = str(error) if isinstance(error, StoreError) else "interrupted while storing"
        for each in judged:
            each.record.notes += (
                f"not stored: {why}; the record stays in run.json: add it later with "
                f"'scriptast results import {each.job.work_dir}'",
            )
            each.save()
        return
    for each, run_id in zip(judged, ids, strict=True):
        said = f"as run {run_id}" if run_id is not None else "before (the same run)"
        each.record.notes += (f"stored in the results store {location.shown} {said}",
                              *migrated)  # fmt: skip
        each.save()
