"""Follow submitted jobs to their verdicts: logs streamed from offsets several times a second,
one `squeue` for every job per poll (fast at first, slower later, at once when the scripts left
have printed their exit lines), hang patterns and timeouts acted on, Ctrl-C and SIGTERM turned
into a cancel that a second one does not abandon."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, TextIO

from scriptast.contract.run_record import RunRecord
from scriptast.executor.followed_job import Followed
from scriptast.executor.interrupts import LEAVING_AT, ONCE_MORE, Abandoned, still_out
from scriptast.schedulers.queue_client import QueueRow, SchedulerClient

TICK = 0.2
"""Seconds between two reads of the logs: a line reaches the terminal within about this."""
FIRST_POLL = 0.5
OVERDUE_POLL = 1.0
"""Seconds between two polls once a job is past its time limit: Slurm ends it within its
enforcement interval (about 30 s), and TIMEOUT is reported within a poll of that."""
CANCEL_GRACE = 60.0
"""After a cancel, how long the jobs may take to leave the queue before they are judged."""


def poll_delays(most: float) -> Iterator[float]:
    """0.5, 1, 2, 4, ... seconds between two squeue calls, at most `most`."""
    delay = FIRST_POLL
    while True:
        yield min(delay, most)
        delay *= 2


class Waiting(Protocol):
    """What the choice of an early poll reads of a job followed."""

    @property
    def ending(self) -> bool: ...

    @property
    def due(self) -> float | None: ...


def poll_soon(waiting: Sequence[Waiting], now: float, since_last: float) -> bool:
    """Whether to poll before the next poll due: every job left says it is ending (their
    verdicts are then a poll away; one job ending among others waits for the poll due), or a
    job is past its time limit (Slurm ends it within its enforcement interval)."""
    ending = bool(waiting) and all(job.ending for job in waiting)
    overdue = any(job.due is not None and now >= job.due for job in waiting)
    return (ending and since_last >= FIRST_POLL) or (overdue and since_last >= OVERDUE_POLL)


class Follower:
    """Follows jobs until each has a verdict; `status` gets a line at each change of state."""

    def __init__(
        self,
        jobs: Sequence[Followed],
        client: SchedulerClient | None,
        *,
        poll_max: float,
        timeouts: dict[str, tuple[float | None, float | None]],
        status: Callable[[str], None],
        progress: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        refill: Callable[[Sequence[Followed]], list[Followed]] | None = None,
    ) -> None:
        """`refill`: given the jobs followed, those it started now (jobs held until others
        end), followed from then on; never asked once a stop was asked for."""
        self.jobs = list(jobs)
        self.refill = refill
        self.client = client
        self.poll_max = poll_max
        self.timeouts = timeouts
        self.status = status
        self.progress = progress
        self.clock = clock
        self.stop: int | None = None
        self.interrupts = 0
        self._said_once_more = False
        self.concluding = False
        self.cancel_deadline: float | None = None
        self.polls = 0
        self._shown: dict[str, str] = {}
        self._saved = {job.name: _state_shown(job.record) for job in jobs}
        """The state each run.json holds (a poll that finds it so saves nothing)."""
        self._stopped: dict[str, float] = {}

    def _on_signal(self, signum: int, frame: object) -> None:
        if self.concluding:
            return  # every job is over: its verdict is finished and recorded first
        self.interrupts += 1
        if self.stop is None:
            self.stop = signum
        elif self.interrupts >= LEAVING_AT:
            raise Abandoned(self._left())
        # a second one changes nothing: the cancels are sent (or about to be) and followed

    def _left(self) -> list[str]:
        """Each job not known to be over, with the commands that cancel it."""
        return [
            still_out(j.job.work_dir, j.record.job_id, j.record.pid)
            for j in self.jobs
            if not j.finished
        ]

    @contextlib.contextmanager
    def _signals(self) -> Iterator[None]:
        held = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
        previous = {s: signal.getsignal(s) for s in held}
        for each in previous:
            signal.signal(each, self._on_signal)
        try:
            yield
        finally:
            for each, handler in previous.items():
                signal.signal(each, handler)

    def run(self) -> list[RunRecord]:
        """Follow every job to its end; the records with their verdicts, in the jobs' order."""
        with self._signals():
            self._loop()
            self.concluding = True
            return self._conclude()

    def _loop(self) -> None:
        delays = poll_delays(self.poll_max)
        next_poll = self.clock()
        last_poll = -1.0
        asked: _Asked | None = None
        while True:
            now = self.clock()
            if self.refill is not None and self.stop is None:
                started = self.refill(self.jobs)
                self.jobs += started
                if any(each.cancelled for each in started):
                    self.stop = signal.SIGINT  # a signal arrived while one was started
            waiting = [j for j in self.jobs if not j.finished]
            if not waiting:
                return
            if self.stop is not None and self.cancel_deadline is None:
                self._cancel_all(waiting, f"interrupted by {signal.Signals(self.stop).name}")
            if self.interrupts > 1 and not self._said_once_more:
                self._said_once_more = True
                self.status(ONCE_MORE)
            if self.cancel_deadline is not None and now > self.cancel_deadline:
                return
            for job in waiting:
                job.stream()
                job.check()
                self._act(job, now)
            if asked is None and (now >= next_poll or poll_soon(waiting, now, now - last_poll)):
                asked = self._ask(waiting)
                last_poll = now
                next_poll = now + next(delays)
            if asked is not None and asked.done.is_set():
                self._take(asked)
                asked = None
                continue  # what the poll found is acted on at once
            self._show_progress(waiting, now)
            time.sleep(TICK)

    def _ask(self, waiting: list[Followed]) -> _Asked:
        """One queue poll for every waiting job, asked in a thread of its own: a slow or
        frozen controller never holds back the logs, which keep streaming meanwhile."""
        ids = [i for job in waiting for i in job.queue_ids()]
        self.polls += 1
        return _Asked(waiting, self.client if ids else None, ids)

    def _take(self, asked: _Asked) -> None:
        if asked.error is not None:
            raise asked.error
        for job in asked.jobs:
            if job.finished:
                continue
            job.observe(asked.rows)
            shown = _state_shown(job.record)
            if self._shown.get(job.name) != shown:
                self._shown[job.name] = shown
                if self._saved.get(job.name) != shown:
                    self._saved[job.name] = shown
                    job.save(durable=False)  # the queue shows it again: a crash costs nothing
                ident = f"job {job.record.job_id}" if job.record.job_id else "process"
                self.status(f"{job.name}: {ident} {shown}")

    def _act(self, job: Followed, now: float) -> None:
        if job.hang_hit is not None and not job.hung and not job.cancelled:
            job.hung = True
            hit = job.hang_hit
            self.status(f"{job.name}: hang pattern {hit.pattern!r} at line {hit.line_number}: "
                        "cancelling")  # fmt: skip
            self._stop(job, now)
        queue_limit, run_limit = self.timeouts.get(job.name, (None, None))
        if job.timed_out or job.hung or job.cancelled:
            stopped = self._stopped.get(job.name)
            if stopped is not None and now - stopped > CANCEL_GRACE:
                job.record.notes += (f"still not over {CANCEL_GRACE:g} s after its cancel",)
                job.finished = True
            return
        if job.running_since is None:
            if queue_limit is not None and now - job.started > queue_limit:
                self._time_out(job, f"still queued after {queue_limit:g} s")
        elif run_limit is not None and now - job.running_since > run_limit:
            self._time_out(job, f"still running after {run_limit:g} s")

    def _time_out(self, job: Followed, why: str) -> None:
        job.timed_out = True
        job.record.notes += (f"{why}: cancelled by scriptast run",)
        self.status(f"{job.name}: {why}: cancelling")
        self._stop(job, self.clock())

    def _stop(self, job: Followed, now: float) -> None:
        """Cancel one job; it is judged when it has left, or CANCEL_GRACE later at most."""
        self._stopped[job.name] = now
        job.cancel()

    def _cancel_all(self, waiting: list[Followed], why: str) -> None:
        self.cancel_deadline = self.clock() + CANCEL_GRACE
        for job in waiting:
            if not (job.cancelled or job.hung or job.timed_out):
                self.status(f"{job.name}: {why}: cancelling")
                # recorded first: a second Ctrl-C may end this run before the verdict, and
                # the watch that follows then judges the job CANCELLED from run.json
                job.cancelled = True
                with contextlib.suppress(Exception):
                    job.request_cancel(f"{why}: cancelled")

    def _show_progress(self, waiting: list[Followed], now: float) -> None:
        if self.progress is None:
            return
        parts = []
        for job in waiting:
            since = job.running_since if job.running_since is not None else job.started
            word = "running" if job.running_since is not None else "queued"
            parts.append(f"{job.name} {word} {_clock(now - since)}")
        self.progress(" | ".join(parts))

    def _conclude(self) -> list[RunRecord]:
        if self.progress is not None:
            self.progress("")
        finals = {}
        ids = [j.record.job_id for j in self.jobs if j.record.job_id and not j.record.pid]
        if self.client is not None and ids:
            finals = self.client.finals([i for i in ids if i])
        return [j.conclude(finals.get(j.record.job_id or "")) for j in self.jobs]


class _Asked:
    """A queue poll under way in a daemon thread (a process that exits does not wait for a
    frozen controller's answer): `done` is set once `rows` (None: nothing known this time) or
    `error` is there."""

    def __init__(
        self, jobs: list[Followed], client: SchedulerClient | None, ids: list[str]
    ) -> None:
        self.jobs = jobs
        self.rows: dict[str, QueueRow] | None = {}
        self.error: Exception | None = None
        self.done = threading.Event()
        if client is None:
            self.done.set()
            return
        threading.Thread(target=self._run, args=(client, ids), daemon=True).start()

    def _run(self, client: SchedulerClient, ids: list[str]) -> None:
        try:
            self.rows = client.queue(ids)
        except Exception as error:  # raised again in the following thread
            self.error = error
        finally:
            self.done.set()


def _state_shown(record: RunRecord) -> str:
    """A job's state as its status line shows it: PENDING (Resources)."""
    reason = f" ({record.reason})" if record.reason not in (None, "None", "") else ""
    return f"{record.state}{reason}"


def _clock(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


def terminal_progress(target: TextIO | None = None) -> Callable[[str], None] | None:
    """A one-line progress display rewritten in place, only when stderr is a terminal."""
    stream = sys.stderr if target is None else target
    if not stream.isatty():
        return None

    def show(line: str) -> None:
        stream.write("\r\x1b[K" + line)
        stream.flush()

    return show
