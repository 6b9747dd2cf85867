"""Sweeps: many requests (one JSON object a line) emitted in one process pool, each into its
own work_dir, so start-up is paid once and every core is used. Every line gets a result; a bad
line (bad bytes, bad JSON, a bad request, a work_dir another line already has) fails alone."""

from __future__ import annotations

import json
import os
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import TYPE_CHECKING, Any

from scriptast.errors import ScriptastError
from scriptast.pipeline.worker_pool import SERIAL_BELOW, worker_pool

if TYPE_CHECKING:
    from scriptast.builders.request.fields import Request
    from scriptast.pipeline.sweep_arrays import Emitted

Line = tuple[int, str | None, str | None]
"""A non-blank line's number, and its text or why it has none (see read_lines)."""


def read_lines(data: bytes) -> list[Line]:
    """(line number, text or None, error or None) for each non-blank line of a JSON-lines file;
    each line is decoded on its own, so one bad byte costs one line."""
    found: list[Line] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            found.append((number, raw.decode("utf-8"), None))
        except UnicodeDecodeError as error:
            found.append(
                (
                    number,
                    None,
                    f"not UTF-8: byte 0x{raw[error.start]:02x} at column {error.start + 1}",
                )
            )
    return found


def parse_line(line: str, flags: dict[str, Any], origin: str) -> Request:
    """The request of one line (flags apply to every line)."""
    from scriptast.builders.read_request import build_request

    try:
        fields = json.loads(line)
    except ValueError as error:
        raise ScriptastError(f"not JSON: {error}") from None
    except RecursionError:
        raise ScriptastError("nests too deeply to be a request") from None
    if not isinstance(fields, dict):
        raise ScriptastError("each line must be one JSON object of request fields")
    return build_request(fields, flags, origin=origin)


Planned = tuple[int, "Request | None", "str | None"]
"""A line's number and its request, or the error that stops it."""
Numbered = tuple[int, "Request"]
"""A line's number and its request, as the workers get them."""


def plan_sweep(path: str, lines: list[Line], flags: dict[str, Any]) -> Iterator[Planned]:
    """Each line's request or error, in order, each found before anything of that line is
    written: a work_dir that an earlier line of the sweep already has is an error for the
    later line."""
    owners: dict[str, int] = {}
    for number, text, problem in lines:
        if text is None:
            yield number, None, problem
            continue
        try:
            request = parse_line(text, flags, f"{path} line {number}")
        except ScriptastError as error:
            yield number, None, str(error)
            continue
        work_dir = os.path.realpath(request.work_dir)  # //x, x/. and a symlink are one folder
        if work_dir in owners:
            yield (
                number,
                None,
                (
                    f"work_dir {work_dir} is also the work_dir of line {owners[work_dir]}; "
                    "give each request of a sweep its own work_dir"
                ),
            )
            continue
        owners[work_dir] = number
        yield number, request, None


def emit_request(request: Request, as_task: bool = False, line: int = 0) -> str | Emitted | None:
    """Generate and write one request; the error message, or None on success. `as_task`: the
    job is to be a task of a job array (or, on docker, one of the sweep's processes), so one
    that cannot be is refused before anything is written, and what the arrays need of it is
    returned; a docker job's container is then named for its `line` too, as the sweep's
    processes run side by side."""
    from scriptast.pipeline.emit_job import generate, write_outputs

    try:
        output = generate(request, container_suffix=str(line) if as_task else None)
        if as_task:
            from scriptast.pipeline.sweep_arrays import emitted_task, refusal

            problem = refusal(output.job_spec, request.persistent_mode)
            if problem is not None:
                return problem
            write_outputs(output)
            return emitted_task(output.job_spec, output.job.work_dir, output.job.mounts)
        write_outputs(output)
    except ScriptastError as error:
        return str(error)
    except Exception as error:  # one line's bug must not cost the others their result
        return f"unexpected {type(error).__name__}: {error}"
    return None


def run_sweep(
    path: str, lines: list[Line], flags: dict[str, Any], as_tasks: bool = False
) -> Iterator[tuple[int, str | Emitted | None]]:
    """(line number, outcome) for each line, in order; parallel for larger sweeps, where
    the workers start on the first requests while the later lines are still being read."""
    workers = min(os.cpu_count() or 1, 8)
    if len(lines) < SERIAL_BELOW or workers == 1:
        for number, request, problem in list(plan_sweep(path, lines, flags)):
            yield number, problem if request is None else emit_request(request, as_tasks, number)
        return
    planned: list[Planned] = []

    def requests() -> Iterator[Numbered]:
        for entry in plan_sweep(path, lines, flags):
            planned.append(entry)
            if entry[1] is not None:
                yield entry[0], entry[1]

    yield from _in_pool(planned, requests(), workers, len(lines), as_tasks)


def emit_chunk(requests: list[Numbered], as_tasks: bool) -> list[str | Emitted | None]:
    """A worker's task: several requests emitted one after another (a task a line costs a
    round trip to the pool each; a chunk pays it once)."""
    return [emit_request(request, as_tasks, number) for number, request in requests]


def _chunks(requests: Iterator[Numbered], size: int) -> Iterator[list[Numbered]]:
    chunk: list[Numbered] = []
    for request in requests:
        chunk.append(request)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _in_pool(
    planned: list[Planned], requests: Iterator[Numbered], workers: int, total: int, as_tasks: bool
) -> Iterator[tuple[int, str | Emitted | None]]:
    """The requests emitted by a pool of workers in chunks, results in line order. A worker
    that dies (killed, out of memory) breaks the pool: the lines of every chunk in flight
    then are emitted again, each alone in a pool of its own, and a line whose worker dies
    again is reported failed."""
    from concurrent.futures.process import BrokenProcessPool

    size = max(1, min(64, total // (workers * 8)))
    window = workers * 2
    pool = worker_pool(workers)
    futures: deque[tuple[list[Numbered], Future[list[str | Emitted | None]]]] = deque()
    pending = _chunks(iter(requests), size)
    index = 0

    def renewed() -> ProcessPoolExecutor:
        """A new pool after the old one broke: what was in flight is emitted again, alone."""
        pool.shutdown(wait=False, cancel_futures=True)
        for position, (queued, held) in enumerate(futures):
            if not (held.done() and held.exception() is None):
                futures[position] = (queued, _settled([_alone(r, as_tasks) for r in queued]))
        return worker_pool(workers)

    try:
        while True:
            while len(futures) < window and (chunk := next(pending, None)) is not None:
                try:  # a worker killed meanwhile breaks the pool for new work too
                    submitted = pool.submit(emit_chunk, chunk, as_tasks)
                except BrokenProcessPool:
                    pool = renewed()
                    submitted = pool.submit(emit_chunk, chunk, as_tasks)
                futures.append((chunk, submitted))
            while index < len(planned) and planned[index][1] is None:
                yield planned[index][0], planned[index][2]
                index += 1
            if not futures:
                return
            chunk, future = futures.popleft()
            try:
                outcomes = future.result()
            except BrokenProcessPool:
                outcomes = [_alone(numbered, as_tasks) for numbered in chunk]
                pool = renewed()
            for outcome in outcomes:
                while planned[index][1] is None:  # a bad line between two good ones
                    yield planned[index][0], planned[index][2]
                    index += 1
                yield planned[index][0], outcome
                index += 1
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _alone(numbered: Numbered, as_tasks: bool) -> str | Emitted | None:
    """One request emitted in a pool of its own worker; a death there is this line's."""
    from concurrent.futures.process import BrokenProcessPool

    number, request = numbered
    with worker_pool(1) as single:
        try:
            return single.submit(emit_request, request, as_tasks, number).result()
        except BrokenProcessPool:
            return (
                "the worker emitting this line died (killed, or out of memory), and again "
                "when it was emitted alone; emit it on its own to see why"
            )


def _settled(outcomes: list[str | Emitted | None]) -> Future[list[str | Emitted | None]]:
    done: Future[list[str | Emitted | None]] = Future()
    done.set_result(outcomes)
    return done
