"""The trackers any backend may use: a job in its scheduler's queue, read from the shared poll;
and a process started at a place through the exit-code wrapper (here, or on a cluster)."""

from __future__ import annotations

from scriptast.common.clock_time import clock_seconds
from scriptast.contract.run_record import JobState, RunRecord
from scriptast.schedulers.backend import SchedulerBackend
from scriptast.schedulers.launching import Ending, Place, Seen
from scriptast.schedulers.queue_client import Final, QueueRow, SchedulerClient


class QueueTracker:
    """A job in the scheduler's queue (submitted here or on a cluster): followed in the shared
    poll, ended by the scheduler, its end read from the scheduler's accounts."""

    def __init__(self, backend: SchedulerBackend, client: SchedulerClient,
                 record: RunRecord) -> None:  # fmt: skip
        self.backend = backend
        self.client = client
        self.record = record
        self.decided: str | None = None
        """The state the scheduler decided the job ends in while it winds down."""
        self.rerun_seen = False
        """The scheduler requeued the job; its logs are read anew once it runs again."""

    def queue_ids(self) -> list[str]:
        return [self.record.job_id] if self.record.job_id else []

    def observe(self, rows: dict[str, QueueRow] | None) -> Seen | None:
        job_id = self.record.job_id
        if rows is None or job_id is None:
            return None
        row = rows.get(job_id)
        if row is None:
            return Seen(over=True)  # the controller no longer holds it
        mapped = self.backend.state(row.state)
        running = mapped is JobState.RUNNING
        self.record.state, self.record.reason = row.state, row.reason
        if row.restarts > self.record.restarts:
            self.rerun_seen = True
        rerun = self.rerun_seen and (running or mapped.final)
        if rerun:  # running again (or over): its batch step opened (and truncated) the log anew
            self.rerun_seen = False
        self.record.restarts = max(self.record.restarts, row.restarts)
        over = mapped.final
        decided = self.backend.decided(row.state, row.reason)
        if decided is not None:  # ended by the scheduler; its processes are given time to go
            self.decided, over = decided, True
        left = clock_seconds(row.time_left) if running else None
        return Seen(over=over, running=running, time_left=left, rerun=rerun)

    def ended(self) -> bool:
        return False

    def cancel(self) -> None:
        assert self.record.job_id
        self.client.cancel([self.record.job_id])

    def end(self, final: Final | None, exit_line: int | None) -> Ending:
        if final is not None:
            return final.state, final.exit_code, final.source
        if self.decided is not None:
            shown = f"{self.record.state}, reason {self.record.reason}"
            return self.decided, exit_line, f"squeue ({shown})"
        if exit_line is not None:
            return self.record.state, exit_line, "the script's exit line"
        return self.record.state, None, None


class ProcessTracker:
    """A job's process started at a place through the exit-code wrapper: over when it has
    ended (seen here at every turn; on a cluster at each poll, through the transport), its
    exit code the one the wrapper wrote."""

    def __init__(self, place: Place, record: RunRecord) -> None:
        self.place = place
        self.record = record

    def queue_ids(self) -> list[str]:
        return []

    def observe(self, rows: dict[str, QueueRow] | None) -> Seen | None:
        if self.place.where is None:
            return None  # a process here is checked at every turn instead
        return Seen(over=not self._running(), running=True)

    def ended(self) -> bool:
        return self.place.where is None and not self._running()

    def _running(self) -> bool:
        return self.record.pid is not None and self.place.running(self.record.pid)

    def cancel(self) -> None:
        if self.record.pid is not None:
            self.place.stop(self.record.pid)

    def end(self, final: Final | None, exit_line: int | None) -> Ending:
        code = self.place.exit_code(self.record.pid) if self.record.pid is not None else None
        source = "the process's exit code" if code is not None else None
        if code is None and exit_line is not None:
            code, source = exit_line, "the script's exit line"
        state = None if code is None else ("COMPLETED" if code == 0 else "FAILED")
        return state, code, source
