"""What run reads from a scheduler that queues jobs, through a transport: a job's row in one
poll, its final state, and the client that submits, polls, reads the end and cancels."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

import msgspec

if TYPE_CHECKING:  # a type only: emit, which runs no command, does not load the transport seam
    from scriptast.contract.transport import Completed


class QueueRow(msgspec.Struct, frozen=True, kw_only=True):
    """A job as the scheduler's queue shows it: its state (in the scheduler's words), pending
    reason, elapsed, time left and nodes; how often the scheduler restarted it (requeued)."""

    state: str
    reason: str
    elapsed: str
    time_left: str
    nodes: str
    restarts: int = 0


class Final(msgspec.Struct, frozen=True, kw_only=True):
    """A job's last state (in the scheduler's words), its exit code (None: unknown) and the
    signal that ended it (None: none, or unknown), where they were read, how often it was
    restarted and how long it ran (the scheduler's count, None: unknown)."""

    state: str
    exit_code: int | None
    source: str
    signal: int | None = None
    restarts: int = 0
    elapsed_seconds: float | None = None


class SchedulerClient(Protocol):
    """Run's side of a scheduler that queues jobs, through a transport: run one of its
    commands, submit a script, one poll for every followed job, their final states, the
    running steps of a job, and cancel."""

    def run(
        self, argv: Sequence[str], *, timeout: float = 60.0, cwd: str | None = None
    ) -> Completed: ...

    def submit_argv(self, script: str, options: Sequence[str] = ()) -> list[str]: ...

    def submit(self, script: str, cwd: str, options: Sequence[str] = ()) -> str: ...

    def queue(self, job_ids: Iterable[str]) -> dict[str, QueueRow] | None: ...

    def finals(self, job_ids: Sequence[str]) -> dict[str, Final]: ...

    def steps(self, job_id: str) -> list[str]: ...

    def cancel(self, targets: Sequence[str]) -> Completed: ...

    def find(self, name: str, script: str, tasks: bool = False) -> list[str]:
        """This user's jobs named `name` that run `script` (a submission whose id was never
        recorded, found again); `tasks`: the tasks of job arrays, each `ARRAY_INDEX`."""
        ...

    def not_ours(self, job_id: str, *, name: str, script: str | None = None,
                 script_sha256: str | None = None) -> str | None:  # fmt: skip
        """Why the scheduler's job `job_id` is not the one this user submitted under `name`
        (from `script`, whose batch script has `script_sha256`); None when it is, or when the
        scheduler no longer knows the job (nothing of it is left to act on)."""
        ...
