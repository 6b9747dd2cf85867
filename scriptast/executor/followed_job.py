"""A submitted job while it is followed: its logs (read from offsets), its state, how to cancel it
and how its end is read. One kind a way a job runs: a batch job in the scheduler's queue; a
process on this machine (docker_cmd.sh, or the script as a step of a persistent allocation); the
script as a step of an allocation on a cluster. Each is complete when it is made."""

from __future__ import annotations

import calendar
import contextlib
import errno
import glob
import os
import shlex
import signal
import stat
import subprocess
import time
from collections.abc import Callable

import msgspec

from scriptast.common.clock_time import clock_seconds
from scriptast.common.processes import alive
from scriptast.common.text_files import regular_file_bytes
from scriptast.contract.files import EXIT_FILE, RUN_FILE
from scriptast.contract.measured import Figure
from scriptast.contract.run_record import (
    VERDICT_EXIT,
    JobState,
    PatternHit,
    RunRecord,
    encode_record,
)
from scriptast.contract.transport import Transport
from scriptast.executor.job_files import LoadedJob, container_name
from scriptast.executor.log_tail import LineSink, LogTail, Tail
from scriptast.executor.log_verdict import HANG_PATTERN, MOST_KEPT_LINE, LogScanner, judge
from scriptast.executor.options import Writer
from scriptast.results.judging import ListFiles, Measured, ReadFile, line_reader, measure
from scriptast.results.reference_file import Where
from scriptast.schedulers.backend import Final, QueueRow, SchedulerClient
from scriptast.schedulers.registry import scheduler
from scriptast.workdir.files import replace_file

"""Where the wrapper of a process job writes its exit code, so another `scriptast watch` can
read it after the process that ran it has gone."""
Clock = Callable[[], float]
TailOpener = Callable[[str, LogScanner, LineSink], Tail]
Ending = tuple[str | None, int | None, str | None]
"""(state in the scheduler's words, exit code, where they were read)."""


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
        self, job: LoadedJob, record: RunRecord, writer: Writer, setup: Setup = Setup()
    ) -> None:
        self.job = job
        self.record = record
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

    def save(self) -> None:
        """Write run.json (whole or not at all), keeping a cancel another process recorded."""
        self._take_outside_cancel()
        replace_file(os.path.join(self.job.work_dir, RUN_FILE), encode_record(self.record))

    def queue_ids(self) -> list[str]:
        """The jobs this one is watched by in the scheduler's shared queue poll."""
        return []

    def observe(self, rows: dict[str, QueueRow] | None) -> None:
        """Take this poll's queue rows (None: the poll failed, nothing is known this time)."""

    def check(self) -> None:
        """Notice, without the scheduler, that the job ended (a process job's process)."""

    def cancel(self) -> None:
        """Stop the job (and only it)."""
        raise NotImplementedError

    def end(self, final: Final | None) -> Ending:
        """(state, exit code, where they were read) once the job is over."""
        raise NotImplementedError

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

    def request_cancel(self, why: str) -> None:
        """Record that this job is being cancelled (so the `run` that follows it from another
        process judges it CANCELLED, not by the exit code the cancel caused), then cancel."""
        self.record.cancel_requested_at = utc_now()
        self.record.notes += (why,)
        self.save()
        self.cancelled = True
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


class BatchFollowed(Followed):
    """A job in the scheduler's queue (sbatch's, here or on a cluster): followed in the shared
    poll, ended by the scheduler, its end read from the scheduler's accounts."""

    def __init__(
        self,
        job: LoadedJob,
        record: RunRecord,
        writer: Writer,
        client: SchedulerClient,
        setup: Setup = Setup(),
    ) -> None:
        super().__init__(job, record, writer, setup)
        self.client = client
        self.decided: str | None = None
        self.rerun_seen = False
        """Slurm requeued the job; its logs are read anew once it runs again."""

    def queue_ids(self) -> list[str]:
        return [self.record.job_id] if self.record.job_id else []

    def observe(self, rows: dict[str, QueueRow] | None) -> None:
        job_id = self.record.job_id
        if rows is None or job_id is None:
            return
        row = rows.get(job_id)
        if row is None:
            self.finished = True  # the controller no longer holds it
            return
        mapped = self.backend.state(row.state)
        if mapped is JobState.RUNNING and self.running_since is None:
            self.running_since = self.clock()
        left = clock_seconds(row.time_left) if mapped is JobState.RUNNING else None
        if left is not None:
            self.due = self.clock() + left
        self.record.state, self.record.reason = row.state, row.reason
        if row.restarts > self.record.restarts:
            self.rerun_seen = True
        if self.rerun_seen and (mapped is JobState.RUNNING or mapped.final):
            # running again (or over): its batch step has opened (and truncated) the log anew
            self.rerun_seen = False
            self.restarted()
        self.record.restarts = max(self.record.restarts, row.restarts)
        self.finished = mapped.final
        decided = self.backend.decided(row.state, row.reason)
        if decided is not None:
            # the scheduler ended it (its processes are still given time to go)
            self.decided, self.finished = decided, True

    def cancel(self) -> None:
        assert self.record.job_id
        self.client.cancel([self.record.job_id])

    def end(self, final: Final | None) -> Ending:
        if final is not None:
            return final.state, final.exit_code, final.source
        if self.decided is not None:
            shown = f"{self.record.state}, reason {self.record.reason}"
            return self.decided, self.exit_line, f"squeue ({shown})"
        if self.exit_line is not None:
            return self.record.state, self.exit_line, "the script's exit line"
        return self.record.state, None, None


class ProcessFollowed(Followed):
    """A job this machine runs as a process in its own session. Its exit code is the process's
    own, written to run.exit so that `watch` from another process reads it too; `process` is
    set when this run started it."""

    def __init__(
        self,
        job: LoadedJob,
        record: RunRecord,
        writer: Writer,
        process: subprocess.Popen[bytes] | None = None,
        setup: Setup = Setup(),
    ) -> None:
        super().__init__(job, record, writer, setup)
        self.process = process

    def _exit_file(self) -> str:
        return os.path.join(self.job.work_dir, EXIT_FILE)

    def check(self) -> None:
        if self.running_since is None:
            self.running_since = self.started
        if self.process is not None:
            if self.process.poll() is not None:
                self.finished = True
            return
        pid = self.record.pid
        if pid is None or not alive(pid):
            self.finished = True

    def cancel(self) -> None:
        if self.record.pid is not None:
            with contextlib.suppress(OSError):
                os.killpg(self.record.pid, signal.SIGTERM)

    def end(self, final: Final | None) -> Ending:
        code: int | None = None
        source: str | None = None
        if self.process is not None:
            returned = self.process.wait()
            code = 128 - returned if returned < 0 else returned
            source = "the process's exit code"
        with contextlib.suppress(OSError, ValueError), open(self._exit_file()) as stream:
            code, source = int(stream.read().strip()), "the process's exit code"
        if code is None and self.exit_line is not None:
            code, source = self.exit_line, "the script's exit line"
        state = None if code is None else ("COMPLETED" if code == 0 else "FAILED")
        return state, code, source


class DockerFollowed(ProcessFollowed):
    """docker_cmd.sh as a process: a cancel kills its one container (by the name emit gave it),
    then the process."""

    def cancel(self) -> None:
        # the container this work dir's docker_cmd names, never another a run.json names
        if self.record.container_name and self.record.container_name == container_name(
            self.job.spec.docker_cmd or ""
        ):
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                subprocess.run(
                    ["docker", "kill", self.record.container_name],
                    capture_output=True,
                    timeout=60,
                    stdin=subprocess.DEVNULL,
                )
        super().cancel()


class StepFollowed(ProcessFollowed):
    """The batch script run here as a step of a persistent allocation: its srun steps are the
    allocation's, so a cancel cancels those steps, then the script's process."""

    def __init__(
        self,
        job: LoadedJob,
        record: RunRecord,
        writer: Writer,
        client: SchedulerClient,
        process: subprocess.Popen[bytes] | None = None,
        setup: Setup = Setup(),
    ) -> None:
        super().__init__(job, record, writer, process, setup)
        self.client = client

    def queue_ids(self) -> list[str]:
        return [self.record.allocation_id] if self.record.allocation_id else []

    def observe(self, rows: dict[str, QueueRow] | None) -> None:
        _note_ended_allocation(self.record, rows)

    def cancel(self) -> None:
        _cancel_steps(self.client, self.record)
        super().cancel()

    def end(self, final: Final | None) -> Ending:
        return allocation_ending(self.client, self, super().end(final))


class RemoteStepFollowed(Followed):
    """The batch script run on a cluster as a step of an allocation there: its process is
    checked at each poll through the transport (the ssh master), its exit code read from the
    cluster's run.exit."""

    def __init__(
        self,
        job: LoadedJob,
        record: RunRecord,
        writer: Writer,
        client: SchedulerClient,
        transport: Transport,
        exit_file: str,
        setup: Setup = Setup(),
    ) -> None:
        super().__init__(job, record, writer, setup)
        self.client = client
        self.transport = transport
        self.exit_file = exit_file

    def queue_ids(self) -> list[str]:
        return [self.record.allocation_id] if self.record.allocation_id else []

    def check(self) -> None:
        if self.running_since is None:
            self.running_since = self.started

    def observe(self, rows: dict[str, QueueRow] | None) -> None:
        _note_ended_allocation(self.record, rows)
        assert self.record.pid is not None
        quoted = shlex.quote(self.exit_file)
        running = self.transport.run_shell(f"test ! -e {quoted} && kill -0 {self.record.pid}")
        self.finished = running.code != 0

    def cancel(self) -> None:
        _cancel_steps(self.client, self.record)
        if self.record.pid is not None:
            self.transport.run_shell(f"kill -TERM -- -{self.record.pid} 2>/dev/null; true")

    def end(self, final: Final | None) -> Ending:
        data = self.transport.fetch(self.exit_file)
        code: int | None = None
        source: str | None = None
        if data is not None and data.strip().isdigit():
            code, source = int(data.strip()), "the process's exit code"
        elif self.exit_line is not None:
            code, source = self.exit_line, "the script's exit line"
        state = None if code is None else ("COMPLETED" if code == 0 else "FAILED")
        return allocation_ending(self.client, self, (state, code, source))


ALLOCATION_SETTLE = 60.0
"""How long a step's allocation that is winding down (its KillWait) is waited for to show how
it ended."""
ALLOCATION_ENDS = frozenset({JobState.TIMEOUT, JobState.NODE_FAIL, JobState.CANCELLED,
                             JobState.OUT_OF_MEMORY})  # fmt: skip
"""An allocation that ended so ended the steps in it: the step is judged by it."""


def allocation_ending(client: SchedulerClient, followed: Followed, ending: Ending) -> Ending:
    """A step's end judged by its allocation too: when the allocation ran out of time, lost a
    node or was cancelled (which ended the step, whatever srun's exit code says), that is the
    step's state."""
    alloc = followed.record.allocation_id
    if not alloc:
        return ending
    rows = client.queue([alloc])
    deadline = time.monotonic() + ALLOCATION_SETTLE
    while rows and alloc in rows and followed.backend.winding_down(rows[alloc].state):
        if followed.backend.decided(rows[alloc].state, rows[alloc].reason) is not None:
            break
        if time.monotonic() > deadline:
            break
        time.sleep(0.5)  # ended (a cancel, say) and still winding down: its state follows
        rows = client.queue([alloc])
    row = (rows or {}).get(alloc)
    if rows is None:
        return ending
    state: str | None = None
    source = f"allocation {alloc}"
    decided = followed.backend.decided(row.state, row.reason) if row is not None else None
    if decided is not None:
        state = decided
    elif row is not None and followed.backend.state(row.state).final:
        state = row.state
    if row is None or (state is None and followed.backend.state(row.state).final):
        final = client.finals([alloc]).get(alloc)
        if final is not None:
            state, source = final.state, f"allocation {alloc} (from {final.source})"
    if state is None or followed.backend.state(state) not in ALLOCATION_ENDS:
        return ending
    followed.record.notes += (f"allocation {alloc} ended {state}: the step ended with it",)
    return state, ending[1], source


def _note_ended_allocation(record: RunRecord, rows: dict[str, QueueRow] | None) -> None:
    alloc = record.allocation_id
    ended = f"allocation {alloc} ended while the job ran"
    if rows is not None and alloc and alloc not in rows and ended not in record.notes:
        record.notes += (ended,)


def _cancel_steps(client: SchedulerClient, record: RunRecord) -> None:
    if record.allocation_id:
        steps = client.steps(record.allocation_id)
        if steps:
            client.cancel(steps)
