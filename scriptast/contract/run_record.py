"""The run record (`run.json` beside job_spec.json), the verdicts and the job states every
scheduler's are mapped onto, as types: what was submitted, where its logs are, the state it
reached and the verdict, with each verdict's exit code."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

import msgspec

from scriptast.contract.axes import check_scenario
from scriptast.contract.measured import Figure, PytestResults

RECORD_VERSION = 1


class Verdict(StrEnum):
    """How a job ended, in the order they are judged (the first that applies wins)."""

    HANG = "HANG"
    TIMEOUT = "TIMEOUT"
    OUT_OF_MEMORY = "OUT_OF_MEMORY"
    NODE_FAIL = "NODE_FAIL"
    CANCELLED = "CANCELLED"
    FAILED = "FAILED"
    REGRESSED = "REGRESSED"
    INCONCLUSIVE = "INCONCLUSIVE"
    PASSED = "PASSED"


VERDICT_EXIT = {
    Verdict.PASSED: 0,
    Verdict.FAILED: 10,
    Verdict.INCONCLUSIVE: 11,
    Verdict.CANCELLED: 12,
    Verdict.NODE_FAIL: 13,
    Verdict.OUT_OF_MEMORY: 14,
    Verdict.TIMEOUT: 15,
    Verdict.HANG: 16,
    Verdict.REGRESSED: 17,
}
"""`scriptast run`'s exit code for each verdict (several jobs: the first verdict in judging
order among theirs). Bad input is 2, a submitted `--detach` run 0."""


class JobState(StrEnum):
    """A job's state in the scheduler's words mapped onto one list (each backend has one table
    from its own state names to these). COMPLETED: the job ended and its exit code decides."""

    PENDING = "PENDING"
    RUNNING = "RUNNING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"
    TIMEOUT = "TIMEOUT"
    NODE_FAIL = "NODE_FAIL"
    OUT_OF_MEMORY = "OUT_OF_MEMORY"
    UNKNOWN = "UNKNOWN"

    @property
    def final(self) -> bool:
        """The job does not leave this state."""
        return self not in _LIVE


_LIVE = frozenset({JobState.PENDING, JobState.RUNNING, JobState.UNKNOWN})


class PatternHit(msgspec.Struct, frozen=True, kw_only=True):
    """A line of the log where a pattern was found: evidence, not the verdict."""

    pattern: str
    log: str
    line_number: int
    line: str


class Attempt(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """An earlier submission of the same run that ended NODE_FAIL and was submitted again
    (`run --retries N`): its job, state and verdict."""

    job_id: str | None = None
    allocation_id: str | None = None
    state: str
    verdict: Verdict
    exit_code: int | None = None
    submitted_at: str
    finished_at: str | None = None


Launch = Literal["batch", "step", "process", "array", "remote"]
"""How run launched a job: a batch job in the scheduler's queue, a step of a persistent
allocation, a process on this machine, or a task of a job array submitted whole (`job_id` is
then `ARRAY_INDEX`); each at this machine or on a cluster reached over a
transport (`remote_host` says which). "remote" is read in records of an older scriptast, which
wrote it for either kind on a cluster; it is never written now."""


class RunRecord(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One submission of a work_dir's job and what became of it. `job_id` is Slurm's job (the
    allocation's, for a job run inside a persistent allocation); `pid` is the local process
    that runs the job (docker, or the script inside an allocation) on `host`. `figures` and
    `tests` are what the job measured; `missing` the figures it should have printed and did
    not; `unread` the result files that could not be read, each with why. `exit_code` is the
    code the job's script returned (Slurm's `code` of `code:signal`) and `exit_signal` the
    signal that ended it, apart; `restarts` how often Slurm requeued it; `elapsed_seconds` how
    long the job itself ran (the scheduler's count where it gives one); `attempts` the earlier
    submissions of this run that a node failure ended (`--retries`)."""

    version: int
    work_dir: str
    execution_scenario: str | None = None
    """Where the job ran (None: judged from files, `scriptast judge`, not run)."""
    script: str
    submitted_at: str
    launch: Launch | None = None
    """How it was launched, recorded at submit (None: a record of an older scriptast)."""
    submit_command: tuple[str, ...]
    out_log: str
    err_log: str | None = None
    job_id: str | None = None
    allocation_id: str | None = None
    container_name: str | None = None
    host: str | None = None
    pid: int | None = None
    state: str = "SUBMITTED"
    reason: str | None = None
    exit_code: int | None = None
    exit_signal: int | None = None
    restarts: int = 0
    final_state_source: str | None = None
    verdict: Verdict | None = None
    verdict_exit_code: int | None = None
    finished_at: str | None = None
    elapsed_seconds: float | None = None
    success_hits: tuple[PatternHit, ...] = ()
    failure_hits: tuple[PatternHit, ...] = ()
    hang_hit: PatternHit | None = None
    last_lines: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    cancel_requested_at: str | None = None
    remote_host: str | None = None
    remote_out_log: str | None = None
    remote_err_log: str | None = None
    figures: tuple[Figure, ...] = ()
    tests: PytestResults | None = None
    missing: tuple[str, ...] = ()
    unread: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    """Inputs the job could not be judged by (a references entry with a bad number): each is an
    `error:` line at the end of the run, and the verdict is never PASSED with one."""
    attempts: tuple[Attempt, ...] = ()

    @property
    def live(self) -> bool:
        """Submitted and not yet judged."""
        return self.verdict is None

    def __post_init__(self) -> None:
        check_scenario(self.execution_scenario)


def encode_record(record: RunRecord) -> str:
    """run.json's text: indented, deterministic JSON with a final newline."""
    return msgspec.json.format(msgspec.json.encode(record), indent=2).decode() + "\n"
