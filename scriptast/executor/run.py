"""`scriptast run`, `watch` and `cancel` over work_dirs: load, check, submit, follow, judge and
report; the command line only parses flags and prints what these return."""

from __future__ import annotations

import os
import posixpath
import socket
import sys
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from scriptast.common.colour import wants_colour
from scriptast.contract.axes import LOCAL
from scriptast.contract.run_record import Attempt, RunRecord, Verdict, encode_record
from scriptast.contract.transport import Transport
from scriptast.contract.work_dir_names import RUN_FILE
from scriptast.errors import RunError
from scriptast.executor.array_tasks import parse_indices, select_tasks, work_dirs_of
from scriptast.executor.follow_loop import Follower, terminal_progress
from scriptast.executor.followed_job import Followed
from scriptast.executor.interrupts import cancelling, still_out
from scriptast.executor.job_files import LoadedJob, load_job, read_regular
from scriptast.executor.launch.submit import (
    array_dry_run,
    array_script_of,
    dry_run_commands,
    launcher_of,
    place_of,
    setup_of,
    submit,
    submit_array,
)
from scriptast.executor.options import RunOptions, Writer, timeouts
from scriptast.executor.ownership import check_ours
from scriptast.executor.process_sweeps import HeldBack
from scriptast.executor.report import as_json, exit_code, summary, table
from scriptast.executor.session import Session, open_session
from scriptast.executor.shown import shown as escaped
from scriptast.executor.stored import store_judged
from scriptast.executor.submitting import SUBMITTING, found_again
from scriptast.results.store.history import HistoryBaseline
from scriptast.results.store.location import Location, locate
from scriptast.workdir.files import replace_file


class Console(msgspec.Struct, frozen=True):
    """Where `run` writes: the logs (bytes), status lines, and the result."""

    log: Callable[[bytes], None]
    status: Callable[[str], None]
    result: Callable[[str], None]
    progress: Callable[[str], None] | None

    @classmethod
    def standard(cls, json_output: bool) -> Console:
        """Logs and the human result on stdout; with --json, logs on stderr and only the
        JSON on stdout. Status lines on stderr; a progress line only on a terminal."""
        log_stream = _Guarded(sys.stderr.buffer if json_output else sys.stdout.buffer)
        errors, output = _Guarded(sys.stderr), _Guarded(sys.stdout)
        shown = terminal_progress()
        progress_line = [""]  # what the terminal's last line shows now

        def clear() -> None:  # a line printed over the status line would run into it
            if shown is not None and progress_line[0]:
                shown("")
                progress_line[0] = ""

        def progress(line: str) -> None:
            assert shown is not None
            line = escaped(line)
            if line != progress_line[0]:
                shown(line)
                progress_line[0] = line

        def log(data: bytes) -> None:
            clear()
            log_stream.write(data)

        def status(line: str) -> None:
            clear()
            errors.write(escaped(line) + "\n")

        def result(text: str) -> None:
            clear()
            output.write(text)

        return cls(log=log, status=status, result=result,
                   progress=progress if shown is not None else None)  # fmt: skip


class _Guarded:
    """A stream written and flushed until it fails: a reader that went away (`| head`) must
    not stop the jobs from being followed and judged."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.closed = False

    def write(self, data: Any) -> None:
        if self.closed:
            return
        try:
            self.stream.write(data)
            self.stream.flush()
        except (OSError, ValueError):
            self.closed = True


def load_jobs(
    work_dirs: Sequence[str],
    reference: str | None = None,
    force: bool = False,
    options: RunOptions | None = None,
) -> list[LoadedJob]:
    """Each work_dir's job once (the same folder under two spellings is one), with the
    references file its figures are held against (`reference`, else the one emit recorded),
    read and checked now: a bad one is an error before anything is submitted; and with the
    history its other figures are held against (`--baseline history`, else the request's)."""
    from scriptast.results.reference_file import References, read_references

    jobs: dict[str, LoadedJob] = {}
    read: dict[str, References] = {}
    for work_dir in work_dirs:
        job = load_job(work_dir, force)
        measures = job.spec.measures
        path = reference or (measures.references if measures is not None else None)
        if path is not None:
            if path not in read:
                read[path] = read_references(path)
            job = msgspec.structs.replace(job, references=read[path])
        wanted = options.baseline if options is not None else None
        if measures is not None and (wanted or measures.baseline) == "history":
            chosen = options or RunOptions()
            history = HistoryBaseline(location=locate(chosen.results), depth=chosen.baseline_runs,
                                      tolerance=chosen.tolerance)  # fmt: skip
            job = msgspec.structs.replace(job, history=history)
        jobs.setdefault(os.path.realpath(job.work_dir), job)
    return list(jobs.values())


def read_record(work_dir: str) -> RunRecord | None:
    """work_dir's run.json, None when there is none; RunError when it cannot be read."""
    path = posixpath.join(work_dir, RUN_FILE)
    if not os.path.lexists(path):
        return None
    try:
        data = read_regular(path, RUN_FILE, follow_links=False)
        return msgspec.json.decode(data, type=RunRecord)
    except (msgspec.ValidationError, msgspec.DecodeError) as error:
        raise RunError(f"{path} is not a run record this scriptast reads: {error}") from None


def reattach(
    job: LoadedJob, record: RunRecord, session: Session, writer: Writer, options: RunOptions
) -> Followed:
    """A Followed for a job another `scriptast run` submitted (run.json says what and where),
    followed as its backend's launcher follows the launch kind the record names."""
    if record.state == SUBMITTING and record.job_id is None and record.pid is None:
        if record.host not in (None, socket.gethostname()):
            raise RunError(f"{job.work_dir}: it was being submitted from {record.host}; look there")
        record = found_again(job, record, session.client)
        replace_file(posixpath.join(job.work_dir, RUN_FILE), encode_record(record))
    if record.pid is not None and job.spec.transport == LOCAL:
        _here(job, record)
    check_ours(job, record, session.client, session.transport)
    place = place_of(job, session)
    tracker = launcher_of(job).follow(job, record, place, session.client)
    return Followed(job, record, writer, tracker, setup_of(place, record, options))


def _here(job: LoadedJob, record: RunRecord) -> None:
    if record.host not in (None, socket.gethostname()):
        raise RunError(
            f"{job.work_dir}: its process {record.pid} runs on {record.host}; watch it there"
        )


def live(followed: Followed, session: Session) -> bool:
    """The recorded job is still queued or running."""
    if followed.record.verdict is not None:
        return False
    if followed.record.pid is not None:
        followed.check()
        followed.observe(None)  # a cluster's process is checked there; no queue rows needed
        return not followed.finished
    if session.client is None or not followed.record.job_id:
        return False
    rows = session.client.queue([followed.record.job_id])
    row = (rows or {}).get(followed.record.job_id)
    return rows is None or (row is not None and not followed.backend.state(row.state).final)


def refuse_live(job: LoadedJob, session: Session, options: RunOptions, console: Console) -> None:
    """RunError when work_dir's run.json names a run that is still live (its job queued or
    running, or a submission whose job is found again)."""
    record = read_record(job.work_dir)
    if record is None or record.verdict is not None:
        return
    try:
        followed = reattach(job, record, session, Writer(write=console.log, prefix=None), options)
    except RunError:
        if record.state == SUBMITTING:
            return  # an interrupted submission that left no job behind
        raise
    if live(followed, session):
        record = followed.record
        ident = f"job {record.job_id}" if record.job_id else f"process {record.pid}"
        raise RunError(
            f"{job.work_dir} already has a live run ({ident}, {record.state}): follow it "
            f"with 'scriptast watch {job.work_dir}', cancel it with 'scriptast cancel "
            f"{job.work_dir}', or start another with --again"
        )


def _writer(console: Console, job: LoadedJob, many: bool) -> Writer:
    return Writer(write=console.log, prefix=f"[{job.name}] " if many else None)


def follow(
    followed: list[Followed],
    session: Session,
    options: RunOptions,
    console: Console,
    refill: Callable[[Sequence[Followed]], list[Followed]] | None = None,
    later: Sequence[LoadedJob] = (),
) -> list[RunRecord]:
    """Follow the jobs to their verdicts; their records, in the jobs' order. `refill` starts
    the jobs `later` (held until others end) as their turn comes; those it started are added
    to `followed`, and their records follow the others'."""
    if not followed:
        return []
    follower = Follower(
        followed,
        session.client,
        poll_max=options.poll_max,
        timeouts={f.name: timeouts(f.job, options) for f in followed}
        | {job.name: timeouts(job, options) for job in later},
        status=console.status,
        progress=console.progress,
        refill=refill,
    )
    records = follower.run()
    followed[len(followed) :] = follower.jobs[len(followed) :]
    _name_allocations(followed, session, options)
    if options.store:
        store_judged(followed, session, locate(options.results))
    return records


def report(records: Sequence[RunRecord], console: Console, json_output: bool) -> int:
    """Print the result: one job's summary, or for several the summaries of those not PASSED
    and the table of all (the same for run and watch); with --json the records. The exit
    code."""
    if not records:
        return 0
    many = len(records) > 1
    for record in records:
        for error in record.errors:
            console.status(f"error: {error}")
    if json_output:
        console.result(as_json(records, many))
    elif many:
        colour = wants_colour(sys.stdout)
        console.result("".join(summary(r, colour=colour) for r in records
                               if r.verdict != "PASSED"))  # fmt: skip
        console.result(table(records, colour=colour))
    else:
        console.result(summary(records[0], colour=wants_colour(sys.stdout)))
    return exit_code(records)


def _name_allocations(followed: list[Followed], session: Session, options: RunOptions) -> None:
    """A persistent allocation that stays after its job is named in the job's verdict: what it
    holds, for how long, when it goes by itself and the command that releases it now."""
    used = {f.record.allocation_id: f for f in followed if f.record.allocation_id}
    if not used or session.client is None or session.backend is None:
        return
    capability = session.backend.allocations
    if capability is None:
        return
    try:
        staying = {a.job_id: a for a in capability.held(session.client)}
    except RunError:
        return
    for alloc_id, each in used.items():
        allocation = staying.get(alloc_id or "")
        if allocation is None:
            continue
        holds = allocation.holds()
        idle = (f"released by itself after {options.alloc_idle:g} s without a step"
                if options.alloc_idle > 0 else "kept until its time limit")  # fmt: skip
        remote = f" --remote {each.record.remote_host}" if each.record.remote_host else ""
        each.record.notes += (
            f"persistent allocation {alloc_id} stays: it holds {holds} on {allocation.nodes} "
            f"for up to {allocation.time_left} more, {idle}; release it now with "
            f"'scriptast alloc release{remote} {alloc_id}'",
        )
        each.save()


def run_work_dirs(
    work_dirs: Sequence[str],
    options: RunOptions,
    *,
    json_output: bool = False,
    console: Console | None = None,
    transport: Transport | None = None,
) -> int:
    """`scriptast run`: submit every work_dir's job, follow them all, judge each."""
    console = console or Console.standard(json_output)
    location = locate(options.results)  # a URL that is not a store is refused before anything
    ranges = None if options.array_task is None else parse_indices(options.array_task)
    jobs = load_jobs(work_dirs_of(work_dirs), options.reference, options.force, options)
    if ranges is not None:
        jobs = select_tasks(jobs, ranges)
    if options.dry_run:
        import shlex

        arrays, alone = by_array(jobs, options)
        for tasks in arrays.values():
            console.result(shlex.join(array_dry_run(tasks)) + "\n")
        for job in alone:
            for argv in dry_run_commands(job, options):
                console.result(shlex.join(argv) + "\n")
        return 0
    if not options.detach and options.store:
        reachable(location)  # a store that cannot take the verdict is said before submitting
    session = open_session(jobs, options, transport)
    try:
        return _submit_and_follow(jobs, session, options, console, json_output)
    finally:
        _close(session, options)


def by_array(
    jobs: Sequence[LoadedJob], options: RunOptions
) -> tuple[dict[str, list[LoadedJob]], list[LoadedJob]]:
    """The jobs that are tasks of a job array, by array script (each array is submitted with
    one command), and the jobs that run alone, each in the order given."""
    arrays: dict[str, list[LoadedJob]] = {}
    alone: list[LoadedJob] = []
    for job in jobs:
        script = array_script_of(job, options)
        if script is None:
            alone.append(job)
        else:
            arrays.setdefault(script, []).append(job)
    return arrays, alone


def reachable(location: Location) -> None:
    """RunError, before anything is submitted, when the results store does not open (a
    PostgreSQL server that does not answer, a SQLite file in a folder that does not exist):
    give another with --results, or run with --no-store."""
    from scriptast.errors import StoreError
    from scriptast.results.store.database import Store

    try:
        Store.open(location, create=True, timeout=10.0).close()
    except StoreError as error:
        raise RunError(f"{error}: nothing was submitted; give a store that opens (--results) "
                       "or run with --no-store") from None  # fmt: skip


def _close(session: Session, options: RunOptions) -> None:
    """The connection this run opened is closed unless --keep-connection."""
    if session.transport is not None and not options.keep_connection:
        session.transport.close()


class _Submitting:
    """Submits one job of this run: its error noted in `failed` and said (one job given
    alone: raised)."""

    def __init__(self, session: Session, options: RunOptions, console: Console, many: bool,
                 checked: Callable[[LoadedJob], None] | None) -> None:  # fmt: skip
        self.session, self.options, self.console = session, options, console
        self.many, self.checked = many, checked
        self.failed: list[str] = []

    def one(self, job: LoadedJob) -> Followed | None:
        try:
            return submit(job, self.session, self.options, _writer(self.console, job, self.many),
                          self.checked)  # fmt: skip
        except RunError as error:
            if not self.many:
                raise
            self.failed.append(f"{job.work_dir}: {error}")
            self.console.status(f"error: {job.work_dir}: {error}")
            return None


def _submit_and_follow(
    jobs: list[LoadedJob],
    session: Session,
    options: RunOptions,
    console: Console,
    json_output: bool,
) -> int:
    def check_live(job: LoadedJob) -> None:
        refuse_live(job, session, options, console)

    checked = None if options.again else check_live
    if checked is not None:
        for job in jobs:  # before anything is submitted; again under each work dir's lock
            checked(job)
    many = len(jobs) > 1
    followed: list[Followed] = []
    submitting = _Submitting(session, options, console, many, checked)
    arrays, alone = by_array(jobs, options)
    held = HeldBack(alone)
    why = held.wait_for() if options.detach else None
    if why is not None:
        raise RunError(why)
    try:
        for tasks in arrays.values():
            try:
                writers = [_writer(console, job, many) for job in tasks]
                followed += submit_array(tasks, session, options, writers, checked)
            except RunError as error:
                if not many:
                    raise
                submitting.failed += [f"{job.work_dir}: {error}" for job in tasks]
                console.status(f"error: the job array of {tasks[0].work_dir}: {error}")
        for job in held.now:
            each = submitting.one(job)
            if each is None:
                continue
            followed.append(each)
            if each.cancelled:  # a signal arrived while it was submitted: submit no more
                raise KeyboardInterrupt
        order = {job.work_dir: n for n, job in enumerate(jobs)}
        followed.sort(key=lambda each: order[each.job.work_dir])
        for each in followed:
            _said_submitted(each, console)
        if held.held:
            console.status(f"{len(held.waiting)} docker jobs of a sweep wait for their turn")
    except KeyboardInterrupt:

        def left() -> list[str]:
            return [still_out(f.job.work_dir, f.record.job_id, f.record.pid) for f in followed]

        with cancelling(left):  # a second interrupt does not abandon what went out
            for each in followed:  # interrupted between two submissions: cancel what went out
                if not each.cancelled:
                    each.cancelled = True
                    each.record.notes += ("interrupted while submitting: cancelled",)
                    each.cancel()
                each.conclude(None)
        raise
    if options.detach:
        return 2 if submitting.failed else 0
    records = _follow_in_turns(jobs, followed, held, submitting)
    for attempt in range(options.retries):
        records = _retried(records, followed, session, options, console, attempt + 1)
    code = report(records, console, json_output)
    return 2 if submitting.failed and code == 0 else code


def _follow_in_turns(
    jobs: list[LoadedJob], followed: list[Followed], held: HeldBack, submitting: _Submitting
) -> list[RunRecord]:
    """Follow the jobs submitted, starting the held ones as their turn comes; the records in
    the order the jobs were given (`followed` too). A held job a stop left unstarted is said."""
    console = submitting.console

    def refill(current: Sequence[Followed]) -> list[Followed]:
        started: list[Followed] = []
        while due := held.due([*current, *started]):
            for job in due:
                each = submitting.one(job)
                if each is not None:
                    _said_submitted(each, console)
                    started.append(each)
        return started

    later = held.waiting
    records = follow(followed, submitting.session, submitting.options, console,
                     refill if later else None, later)  # fmt: skip
    if later:  # started in turn: the table keeps the order given
        order = {job.work_dir: n for n, job in enumerate(jobs)}
        pairs = sorted(zip(followed, records, strict=True), key=lambda p: order[p[0].job.work_dir])
        followed[:] = [each for each, _ in pairs]
        records = [record for _, record in pairs]
    for job in held.waiting:  # a stop was asked for before their turn
        submitting.failed.append(f"{job.work_dir}: not started: the run was stopped before "
                                 "its turn")  # fmt: skip
        console.status(f"{job.name}: not started: the run was stopped before its turn")
    return records


def _said_submitted(each: Followed, console: Console) -> None:
    ident = f"job {each.record.job_id}" if each.record.job_id else f"pid {each.record.pid}"
    console.status(f"{each.name}: submitted {ident}; log {each.record.out_log}")


def _retried(
    records: list[RunRecord],
    followed: list[Followed],
    session: Session,
    options: RunOptions,
    console: Console,
    attempt: int,
) -> list[RunRecord]:
    """The jobs a node failure ended, submitted again (`--retries`) and followed; every
    earlier submission kept in the new record's `attempts`. `followed` is updated."""
    again = [n for n, r in enumerate(records) if r.verdict is Verdict.NODE_FAIL]
    renewed: list[Followed] = []
    for index in again:
        before, job = records[index], followed[index].job
        console.status(f"{job.name}: NODE_FAIL on job {before.job_id}: submitting it again "
                       f"(retry {attempt} of {options.retries})")  # fmt: skip
        each = submit(job, session, options, _writer(console, job, len(records) > 1))
        each.record.attempts = (*before.attempts, _attempt(before))
        each.save()
        followed[index] = each
        renewed.append(each)
    concluded = iter(follow(renewed, session, options, console))
    return [next(concluded) if n in again else r for n, r in enumerate(records)]


def _attempt(record: RunRecord) -> Attempt:
    assert record.verdict is not None
    return Attempt(job_id=record.job_id, allocation_id=record.allocation_id, state=record.state,
                   verdict=record.verdict, exit_code=record.exit_code,
                   submitted_at=record.submitted_at, finished_at=record.finished_at)  # fmt: skip


def _recorded(work_dirs: Sequence[str], options: RunOptions) -> list[tuple[LoadedJob, RunRecord]]:
    found = []
    for job in load_jobs(work_dirs, options.reference, options=options):
        record = read_record(job.work_dir)
        if record is None:
            raise RunError(f"{job.work_dir} has no run.json: submit it with 'scriptast run'")
        found.append((job, record))
    return found


def watch_work_dirs(
    work_dirs: Sequence[str],
    options: RunOptions,
    *,
    json_output: bool = False,
    console: Console | None = None,
    transport: Transport | None = None,
    cancel: bool = False,
) -> int:
    """`scriptast watch` (re-attach to recorded runs) and `scriptast cancel` (cancel, then
    follow them to their verdicts). A judged run is reported as recorded."""
    console = console or Console.standard(json_output)
    locate(options.results)
    recorded = _recorded(work_dirs, options)
    hosts = [r.remote_host for _, r in recorded if r.remote_host]
    jobs = [job for job, _ in recorded]
    session = open_session(jobs, options, transport, hosts[0] if hosts else None)
    try:
        return _follow_recorded(recorded, session, options, console, json_output, cancel)
    finally:
        _close(session, options)


def _cancel_recorded(open_runs: list[Followed], session: Session) -> None:
    """Each open run recorded as cancelled, then cancelled: the tasks of one job array with
    one command (a sweep's array as a whole), every other job by its own tracker."""
    arrays: dict[str, list[str]] = {}
    for followed in open_runs:
        record = followed.record
        alone = record.launch != "array" or not record.job_id or session.client is None
        followed.request_cancel("cancelled by scriptast cancel", send=alone)
        if not alone and record.job_id:
            arrays.setdefault(record.job_id.split("_")[0], []).append(record.job_id)
    for task_ids in arrays.values():
        assert session.client is not None
        session.client.cancel(task_ids)


def _follow_recorded(
    recorded: list[tuple[LoadedJob, RunRecord]],
    session: Session,
    options: RunOptions,
    console: Console,
    json_output: bool,
    cancel: bool,
) -> int:
    many = len(recorded) > 1
    open_runs: list[Followed] = []
    judged: list[RunRecord | None] = []  # None: followed now, in open_runs' order
    for job, record in recorded:
        if record.verdict is not None:
            judged.append(record)
            continue
        followed = reattach(job, record, session, _writer(console, job, many), options)
        open_runs.append(followed)
        judged.append(None)
    if cancel:
        _cancel_recorded(open_runs, session)
    concluded = iter(follow(open_runs, session, options, console))
    records = [record or next(concluded) for record in judged]
    code = report(records, console, json_output)
    if cancel:
        # a cancel that ended every live run it was asked to succeeded, whatever came before
        return 0 if all(f.record.verdict is not None for f in open_runs) else code
    return code
