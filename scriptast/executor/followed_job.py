"""A submitted job while it is followed: its logs (read from offsets), the flags that decide its
verdict, and its record; its state, cancel and end come from the tracker its backend's launcher
gave (a job in the scheduler's queue, a process here or on a cluster, a step of an allocation).
Complete when it is made."""

from __future__ import annotations

import calendar
import errno
import glob
import os
import stat
import time
from collections.abc import Callable

import msgspec

from scriptast.common.text_files import regular_file_bytes
from scriptast.contract.measured import Figure
from scriptast.contract.run_record import (
    VERDICT_EXIT,
    PatternHit,
    RunRecord,
    encode_record,
)
from scriptast.contract.work_dir_names import RUN_FILE
from scriptast.executor.job_files import LoadedJob
from scriptast.executor.log_tail import LineSink, LogTail, Tail
from scriptast.executor.log_verdict import HANG_PATTERN, MOST_KEPT_LINE, LogScanner, judge
from scriptast.executor.options import Writer
from scriptast.results.judging import ListFiles, Measured, ReadFile, line_reader, measure
from scriptast.schedulers.launching import Ending, Tracker
from scriptast.schedulers.queue_client import Final, QueueRow
from scriptast.schedulers.registry import scheduler
from scriptast.workdir.files import replace_file

"""Where the wrapper of a process job writes its exit code, so another `scriptast watch` can
read it after the process that ran it has gone."""
Clock = Callable[[], float]
TailOpener = Callable[[str, LogScanner, LineSink], Tail]


class Setup(msgspec.Struct, frozen=True, kw_only=True):
    """How a followed job reads: its logs' opener (a cluster's log is tailed over ssh), what
    runs once they are read to their end (a remote job's are brought back then), how a result
    file the job wrote is read (a cluster's is brought back), its clock."""

    open_tail: TailOpener | None = None
    after_logs: Callable[[], None] | None = None
    read_result: ReadFile | None = None
    list_results: ListFiles | None = None
    clock: Clock = time.monotonic


def read_local_result(path: str, not_before: float | None = None) -> bytes:
    """A result file the job wrote on this machine: a regular file, never through a link, and
    (`not_before`, seconds since the epoch) not one an earlier run left there."""
    data, status = regular_file_bytes(path, follow_links=False)
    if not_before is not None and status.st_mtime < not_before:
        raise OSError(errno.ESTALE, "it was written before this run (an earlier run's)")
    return data


def submitted_epoch(record: RunRecord) -> float | None:
    """When the run was submitted, in seconds since the epoch, less a second for the clock's
    rounding (None: a record without a readable time)."""
    try:
        return calendar.timegm(time.strptime(record.submitted_at, "%Y-%m-%dT%H:%M:%SZ")) - 1.0
    except ValueError:
        return None


def list_local_results(pattern: str) -> list[str]:
    """The regular files a glob matches on this machine (links left out), sorted."""
    return sorted(p for p in glob.glob(pattern) if stat.S_ISREG(os.lstat(p).st_mode))


def utc_now() -> str:
    """The time now, ISO 8601 in UTC to the second."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class Followed:
    """What every kind shares: the record, the two logs and their scanners, the flags that
    decide the verdict, and the record's writes."""

    def __init__(
        self,
        job: LoadedJob,
        record: RunRecord,
        writer: Writer,
        tracker: Tracker,
        setup: Setup = Setup(),
    ) -> None:
        self.job = job
        self.record = record
        self.tracker = tracker
        self.backend = scheduler(job.spec.scheduler)
        self.clock = setup.clock
        self.started = self.clock()
        self.running_since: float | None = None
        self.hung = self.timed_out = self.cancelled = False
        self._finished = False
        self.finished_since: float | None = None
        self.due: float | None = None
        """When (on `clock`) Slurm's time limit for the job is reached, once it runs."""
        self.sinks: list[LineSink] = []
        self.after_logs = setup.after_logs
        not_before = submitted_epoch(record)
        self.read_result = setup.read_result or (lambda path: read_local_result(path, not_before))
        self.list_results = setup.list_results or list_local_results
        opener = setup.open_tail or LogTail
        out = record.remote_out_log or record.out_log
        err = record.remote_err_log or record.err_log
        self.tails = [self._tail(out, writer, opener)]
        if err and err != out:
            self.tails.append(self._tail(err, writer, opener))

    def _tail(self, path: str, writer: Writer, opener: TailOpener) -> Tail:
        sink = LineSink(writer.write, writer.prefix)
        self.sinks.append(sink)
        return opener(path, self._scanner(path), sink)

    def _scanner(self, path: str) -> LogScanner:
        spec = self.job.spec
        return LogScanner(path, spec.success_patterns, spec.failure_patterns,
                          reader=line_reader(spec.measures),
                          hang=spec.hang_pattern or HANG_PATTERN)  # fmt: skip

    def restarted(self) -> None:
        """The scheduler runs the job again (a requeue): its logs are read again from their
        start into new scanners, so that only its last run is judged."""
        for tail, sink in zip(self.tails, self.sinks, strict=True):
            sink.flush()
            sink(b"--- the job runs again (requeued): its log from the start ---\n")
            tail.rewind(self._scanner(tail.path))

    @property
    def finished(self) -> bool:
        """The job is over (its logs may still gain their last bytes)."""
        return self._finished

    @finished.setter
    def finished(self, value: bool) -> None:
        if value and not self._finished:
            self.finished_since = self.clock()
        self._finished = value

    def own_elapsed(self, final: Final | None) -> float:
        """How long the job itself ran: the scheduler's count, else from when it was seen
        running (or submitted) to when it was seen over."""
        if final is not None and final.elapsed_seconds is not None:
            return final.elapsed_seconds
        begun = self.running_since if self.running_since is not None else self.started
        ended = self.finished_since if self.finished_since is not None else self.clock()
        return round(max(0.0, ended - begun), 1)

    @property
    def name(self) -> str:
        """The job's name in tables and line prefixes."""
        return self.job.name

    def stream(self) -> int:
        """Read what the logs gained; bytes read. A log that grows shows the job runs, before
        the next poll says so."""
        read = sum(tail.read() for tail in self.tails)
        if read and self.running_since is None and not self.finished:
            self.running_since = self.clock()
        return read

    @property
    def hang_hit(self) -> PatternHit | None:
        """The first hang pattern found in either log."""
        return next((t.scanner.hang_hit for t in self.tails if t.scanner.hang_hit), None)

    @property
    def ending(self) -> bool:
        """The log says the job is ending: the script's exit line, or Slurm's own end line
        about this job (`*** JOB 42 ON n1 CANCELLED AT ... ***`)."""
        job = f"JOB {self.record.job_id}"
        return self.exit_line is not None or any(job in t.scanner.slurm_ended for t in self.tails)

    @property
    def exit_line(self) -> int | None:
        """The exit code the script's own last line printed, if it has."""
        return self.tails[0].scanner.exit_code

    def save(self, durable: bool = True) -> None:
        """Write run.json (whole or not at all), keeping a cancel another process recorded;
        not `durable`: not synced to disk (a state the scheduler shows again, which a crash
        may lose)."""
        self._take_outside_cancel()
        replace_file(os.path.join(self.job.work_dir, RUN_FILE), encode_record(self.record),
                     durable=durable)  # fmt: skip

    def queue_ids(self) -> list[str]:
        """The jobs this one is watched by in the scheduler's shared queue poll."""
        return self.tracker.queue_ids()

    def observe(self, rows: dict[str, QueueRow] | None) -> None:
        """Take this poll's queue rows (None: the poll failed, nothing is known this time)."""
        seen = self.tracker.observe(rows)
        if seen is None:
            return
        if seen.running and self.running_since is None:
            self.running_since = self.clock()
        if seen.time_left is not None:
            self.due = self.clock() + seen.time_left
        if seen.rerun:
            self.restarted()
        self.finished = seen.over

    def check(self) -> None:
        """Notice, without the scheduler, that the job ended (a process of this machine); a
        process runs from its start."""
        if self.record.pid is not None and self.running_since is None:
            self.running_since = self.started
        if self.tracker.ended():
            self.finished = True

    def cancel(self) -> None:
        """Stop the job (and only it)."""
        self.tracker.cancel()

    def end(self, final: Final | None) -> Ending:
        """(state, exit code, where they were read) once the job is over."""
        return self.tracker.end(final, self.exit_line)

    def conclude(self, final: Final | None) -> RunRecord:
        """Drain the logs, judge, and record the verdict (of the job's last run: a restart
        only the final state shows has its logs read again from their start)."""
        if final is not None and final.restarts > self.record.restarts:
            self.restarted()
            self.record.restarts = final.restarts
        self.stream()
        for tail in self.tails:
            tail.close()
            tail.scanner.close()
        if self.after_logs is not None:
            self.after_logs()
        for sink in self.sinks:
            sink.flush()
        self._take_outside_cancel()
        for tail in self.tails:
            for number in tail.scanner.cut_lines:
                cut = (f"line {number} of {tail.path} is longer than {MOST_KEPT_LINE >> 20} MiB: "
                       "its head is kept, the patterns were searched in all of it")  # fmt: skip
                if cut not in self.record.notes:
                    self.record.notes += (cut,)
            refused = f"log {tail.path} is {tail.refused}"
            if tail.refused is not None and refused not in self.record.notes:
                self.record.notes += (refused,)
        state, code, source = self.end(final)
        scanners = [t.scanner for t in self.tails]
        success = tuple(h for s in scanners for h in s.success_hits)
        measured = self.measured()
        verdict = judge(
            state=None if state is None else self.backend.state(state),
            exit_code=code,
            hung=self.hung,
            timed_out=self.timed_out,
            cancelled=self.cancelled,
            success_patterns=self.job.spec.success_patterns,
            success_found=bool(success),
            measured=measured,
        )
        record = self.record
        if measured is not None:
            record.figures = tuple(measured.figures)
            record.tests = measured.tests
            said = measured.tests.notes if measured.tests is not None else ()
            record.notes += tuple(n for n in (*measured.notes, *said) if n not in record.notes)
            record.missing = tuple(measured.missing)
            record.unread = tuple(measured.unread)
            record.errors = tuple(measured.errors)
        record.state = state or record.state
        record.exit_code = code
        if final is not None:
            record.exit_signal = final.signal
            record.restarts = max(record.restarts, final.restarts)
        record.final_state_source = source
        record.verdict = verdict
        record.verdict_exit_code = VERDICT_EXIT[verdict]
        record.finished_at = utc_now()
        record.elapsed_seconds = self.own_elapsed(final)
        record.success_hits = success
        record.failure_hits = tuple(h for s in scanners for h in s.failure_hits)
        record.hang_hit = self.hang_hit
        record.last_lines = tuple(line for s in scanners for line in s.last_lines)[-30:]
        self.save()
        return record

    def request_cancel(self, why: str, send: bool = True) -> None:
        """Record that this job is being cancelled (so the `run` that follows it from another
        process judges it CANCELLED, not by the exit code the cancel caused), then cancel
        (unless `send` is False: the caller cancels it with others in one command)."""
        self.record.cancel_requested_at = utc_now()
        self.record.notes += (why,)
        self.save()
        self.cancelled = True
        if send:
            self.cancel()

    def _take_outside_cancel(self) -> None:
        """`scriptast cancel` from another terminal recorded a cancel of this very job in
        run.json: it ended because it was cancelled."""
        if self.cancelled:
            return
        path = os.path.join(self.job.work_dir, RUN_FILE)
        try:
            data, _ = regular_file_bytes(path, 1 << 24, follow_links=False)
            theirs = msgspec.json.decode(data, type=RunRecord)
        except (OSError, msgspec.DecodeError, msgspec.ValidationError):
            return
        mine = self.record
        same = (theirs.job_id, theirs.pid, theirs.submitted_at) == (
            mine.job_id, mine.pid, mine.submitted_at)  # fmt: skip
        if same and theirs.cancel_requested_at is not None:
            self.cancelled = True
            mine.cancel_requested_at = theirs.cancel_requested_at
            mine.notes += tuple(n for n in theirs.notes if n not in mine.notes)

    def measured(self) -> Measured | None:
        """What the job measured, checked against its references (None: it says it measures
        nothing, and its success patterns decide)."""
        spec = self.job.spec
        if spec.measures is None:
            return None
        logged: dict[str, Figure] = {}
        unreadable: list[str] = []
        for tail in self.tails:
            if tail.scanner.reader is not None:
                for figure in tail.scanner.reader.figures():
                    logged.setdefault(figure.name, figure)
                unreadable += tail.scanner.reader.unreadable()
        partition = spec.slurm_params.partition if spec.slurm_params is not None else None
        from scriptast.results.reference_file import Where

        where = Where(
            model=spec.measures.model, partition=partition, gpu_type=spec.measures.gpu_type
        )
        measured = measure(spec.measures, list(logged.values()), self.read_result,
                           list_files=self.list_results, repo_root=spec.repo_root, where=where,
                           references=self.job.references,
                           unreadable=tuple(unreadable))  # fmt: skip
        if self.job.history is not None:
            from scriptast.results.store.history import with_history
            from scriptast.results.store.rows import comparable

            measured.figures = with_history(measured.figures, comparable(spec), self.job.history)
        return measured
