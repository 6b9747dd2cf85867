"""Ctrl-C, SIGTERM and SIGHUP while run has jobs out: the first asks for their cancel, a second
while they are being cancelled changes nothing (the cancel is finished and recorded), a third
leaves at once, after naming the jobs that may still be running and how to cancel each."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Iterator, Sequence

HELD = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
LEAVING_AT = 3
"""The signal that leaves without waiting for the cancels to be confirmed."""
ONCE_MORE = (
    "still cancelling what was submitted: each job is recorded CANCELLED once it has left the "
    "queue; interrupt once more to leave at once"
)


class Abandoned(KeyboardInterrupt):
    """A third interrupt: run leaves before the cancels were confirmed; the message names each
    job that may still be running and the command that cancels it. An interrupt, not an error,
    so that no `except Exception` on the way (a cancel that failed is tolerated) swallows it."""

    def __init__(self, left: Sequence[str]) -> None:
        if left:
            said = "; ".join(left)
            message = (
                "interrupted a third time: left without waiting for the cancels to be "
                f"confirmed; these may still be running: {said}"
            )
        else:
            message = "interrupted a third time: left at once; every job had already ended"
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


def still_out(work_dir: str, job_id: str | None, pid: int | None) -> str:
    """One job that may still be running, with the commands that cancel it."""
    if job_id:
        cancel = f"scriptast cancel {work_dir}, or scancel {job_id}"
        return f"job {job_id} of {work_dir} (cancel it: {cancel})"
    if pid is not None:
        return f"process {pid} of {work_dir} (cancel it: scriptast cancel {work_dir})"
    return f"the job of {work_dir} (find it: scriptast watch {work_dir})"


@contextlib.contextmanager
def cancelling(left: Callable[[], Sequence[str]]) -> Iterator[None]:
    """Hold the signals while what was submitted is being cancelled, the first interrupt
    already taken: one more is noted, the next raises Abandoned naming `left()`."""
    seen = 1

    def on_signal(signum: int, frame: object) -> None:
        nonlocal seen
        seen += 1
        if seen >= LEAVING_AT:
            raise Abandoned(left())

    try:
        previous = {each: signal.signal(each, on_signal) for each in HELD}
    except ValueError:  # not the main thread: nothing can be held
        yield
        return
    try:
        yield
    finally:
        for each, handler in previous.items():
            signal.signal(each, handler)
