"""Slurm as `run` uses it: submit with `sbatch --parsable`, one `squeue` for all followed jobs,
the final state from `sacct`, else `squeue`; every answer read as delimited fields about exactly
the job ids asked for, never as `key=value` text a job's name or comment could imitate. A job
the queue no longer shows is confirmed gone by a second source before it is taken as ended."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence

import msgspec

from scriptast.common.clock_time import clock_seconds
from scriptast.contract.transport import Completed, Transport
from scriptast.errors import RunError
from scriptast.schedulers.queue_client import Final, QueueRow
from scriptast.schedulers.slurm.states import is_final

QUEUE_FIELDS = ("JobArrayID", "State", "Reason", "TimeUsed", "TimeLeft", "NodeList", "RestartCnt",
                "exit_code")  # fmt: skip
"""What one poll asks squeue, each field ended by `|` (no padding); none of them is text a
user chooses (a job's name, comment and folder are left out), so `|` never occurs in a value.
A job is named as it was asked for: its id, or an array task's `ARRAY_INDEX` (squeue's
`--array` shows each task on a line of its own, a pending one too)."""
QUEUE_FORMAT = ",".join(f"{field}:|" for field in QUEUE_FIELDS)
SACCT_FIELDS = "JobID,State,ExitCode,Elapsed"
OWNER_FORMAT = "JobArrayID:|,UserName:|,Name:|,Command:|"
"""Whose a job is: the controller's fields first, then the text its user chose."""
_NO_ACCOUNTING = "accounting storage is disabled"
PLAIN_ID = re.compile(r"\d+")
TASK_ID = re.compile(r"\d+_\d+")
"""A job's id, and a job array's task's (`ARRAY_INDEX`)."""


def parse_code_signal(text: str) -> tuple[int | None, int | None]:
    """Slurm's `code:signal` (sacct, scontrol) as (code, signal); signal None when it is 0."""
    code, _, signal = text.partition(":")
    if not code.isdigit():
        return None, None
    return int(code), (int(signal) or None) if signal.isdigit() else None


def split_wait_status(text: str) -> tuple[int | None, int | None]:
    """squeue's `exit_code`, the raw wait status, as (code, signal): the same pair sacct and
    scontrol print as `code:signal`."""
    if not text.isdigit():
        return None, None
    status = int(text)
    return (status >> 8) & 0xFF, (status & 0x7F) or None


class SlurmClient:
    """Slurm's commands, run through a transport (this machine, or a cluster over ssh)."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport

    def run(
        self, argv: Sequence[str], *, timeout: float = 60.0, cwd: str | None = None
    ) -> Completed:
        """Run one Slurm command through the transport."""
        return self.transport.run(argv, timeout=timeout, cwd=cwd)

    def submit_argv(self, script: str, options: Sequence[str] = ()) -> list[str]:
        """The command that submits `script` (with sbatch `options` before it)."""
        from scriptast.schedulers.slurm.backend import submit_command

        return submit_command(script, options)

    def submit(self, script: str, cwd: str, options: Sequence[str] = ()) -> str:
        """`sbatch --parsable [OPTIONS] SCRIPT` from `cwd`: the job id (an array's too), or
        RunError with sbatch's words (its `error:` lines, which say why, not only its last
        line)."""
        done = self.run(self.submit_argv(script, options), cwd=cwd)
        answer = done.out.strip().splitlines()[-1:] if done.code == 0 else []
        job_id = answer[0].split(";")[0].strip() if answer else ""
        if not job_id.isdigit():
            raise RunError(f"sbatch refused {script}: {refusal(done)}")
        return job_id

    def _squeue(self, ids: Sequence[str]) -> Completed:
        return self.run(
            ["squeue", "--noheader", "--array", "--states=all", "--jobs", ",".join(ids),
             "--Format", QUEUE_FORMAT]
        )  # fmt: skip

    def _queue_lines(self, done: Completed, ids: Sequence[str]) -> dict[str, list[str]]:
        found = {}
        for line in done.out.splitlines():
            parts = line.strip().split("|")
            if len(parts) >= len(QUEUE_FIELDS) and parts[0] in ids:
                found[parts[0]] = parts[: len(QUEUE_FIELDS)]
        return found

    def queue(self, job_ids: Iterable[str]) -> dict[str, QueueRow] | None:
        """One `squeue` for all `job_ids` (every state): the rows it shows, keyed by id; a job
        not a key is gone, which a second source confirmed. None when nothing is known this
        time (squeue failed, or the second source could not say)."""
        ids = sorted(set(job_ids), key=_id_order)
        if not ids:
            return {}
        done = self._squeue(ids)
        if done.code != 0 and "Invalid job id" not in done.err:
            return None
        rows = {}
        for job, parts in self._queue_lines(done, ids).items():
            rows[job] = QueueRow(
                state=parts[1].split()[0] if parts[1] else "UNKNOWN",
                reason=parts[2],
                elapsed=parts[3],
                time_left=parts[4],
                nodes=parts[5],
                restarts=int(parts[6]) if parts[6].isdigit() else 0,
            )
        absent = [job for job in ids if job not in rows]
        if absent:
            confirmed = self._second_source(absent)
            if confirmed is None:
                return None
            rows.update(confirmed)
        return rows

    def _second_source(self, job_ids: list[str]) -> dict[str, QueueRow] | None:
        """Jobs squeue did not show, asked again elsewhere: accounting where it is kept, else
        `scontrol show job` for each id. The rows of those still live; None when neither could
        answer."""
        accounted = self._sacct(job_ids)
        if accounted is not None:
            return {
                job: QueueRow(state=state, reason="", elapsed="", time_left="", nodes="")
                for job, (state, _) in accounted.items()
                if not is_final(state)
            }
        rows = {}
        for job in job_ids:
            done = self.run(["scontrol", "show", "job", job])
            if done.code != 0:
                if "Invalid job id" in done.err or done.out.strip() == f"Job {job} not found":
                    # the controller no longer holds it: gone (the second: an array's task
                    # cancelled while pending, which the controller drops whole)
                    continue
                return None
            state = _scontrol_state(done.out, job)
            if state is None:
                return None
            if not is_final(state):
                rows[job] = QueueRow(state=state, reason="", elapsed="", time_left="", nodes="")
        return rows

    def _sacct(self, job_ids: list[str]) -> dict[str, tuple[str, list[str]]] | None:
        """sacct's allocation line for each job it knows: (state, its fields); None when
        accounting is not kept here or sacct failed. The allocation line of a job Slurm ended
        by a signal (at its time limit, say) says `0:0`, its batch step what scontrol shows: the
        `0:15` of a script the signal ended, or the `143:0` of one that exited on it (its srun
        step ended first): then the batch step's is the job's ExitCode, so that one event is
        recorded the same from either source."""
        done = self.run(
            ["sacct", "--noheader", "--parsable2", "--jobs", ",".join(job_ids),
             "--format", SACCT_FIELDS]
        )  # fmt: skip
        if done.code != 0 or _NO_ACCOUNTING in (done.err + done.out).lower():
            return None
        found: dict[str, tuple[str, list[str]]] = {}
        batch_exit: dict[str, str] = {}
        for line in done.out.splitlines():
            parts = line.strip().split("|")
            if len(parts) < 3:
                continue
            if parts[0] in job_ids and parts[1]:
                found[parts[0]] = (parts[1].split()[0], parts)
            job, _, step = parts[0].partition(".")
            if step == "batch" and job in job_ids:
                batch_exit[job] = parts[2]
        for job, (_, parts) in found.items():
            if parts[2] == "0:0" and parse_code_signal(batch_exit.get(job, ""))[0] is not None:
                parts[2] = batch_exit[job]
        return found

    def finals(self, job_ids: Sequence[str]) -> dict[str, Final]:
        """The final state, exit code and signal of finished jobs: `sacct` where accounting is
        kept, else `squeue` while the controller still holds them (one call of each for all).
        sacct prints an exit code of 128 or more less 128 (its print routine's rule), so a
        script that exited 143 on a SIGTERM reads as 15: while the controller holds the job,
        its exit status is taken from squeue's raw wait status, which scontrol shows too."""
        wanted = sorted(set(job_ids), key=_id_order)
        if not wanted:
            return {}
        found: dict[str, Final] = {}
        for job, (state, parts) in (self._sacct(wanted) or {}).items():
            if is_final(state):
                code, signal = parse_code_signal(parts[2])
                found[job] = Final(state=state, exit_code=code, signal=signal, source="sacct",
                                   elapsed_seconds=clock_seconds(parts[3]) if len(parts) > 3
                                   else None)  # fmt: skip
        held = self._queue_lines(self._squeue(wanted), wanted)
        for job, parts in held.items():
            state = parts[1].split()[0] if parts[1] else ""
            if not is_final(state):
                continue
            code, signal = split_wait_status(parts[7])
            restarts = int(parts[6]) if parts[6].isdigit() else 0
            if job in found:
                exact = {"exit_code": code, "signal": signal} if code is not None else {}
                found[job] = msgspec.structs.replace(found[job], restarts=restarts, **exact)
                continue
            found[job] = Final(
                state=state,
                exit_code=code,
                signal=signal,
                source="squeue",
                restarts=restarts,
                elapsed_seconds=clock_seconds(parts[3]),
            )
        return found

    def cancel(self, targets: Sequence[str]) -> Completed:
        """`scancel` jobs or steps (`JOB.STEP`)."""
        return self.run(["scancel", *targets])

    def find(self, name: str, script: str, tasks: bool = False) -> list[str]:
        """This user's jobs named `name` whose batch script is `script`, as squeue shows them
        (the whole line compared: `JobID|script|`); `tasks`: the tasks of job arrays, one a
        line, named `ARRAY_INDEX`."""
        field, shape = ("JobArrayID", TASK_ID) if tasks else ("JobID", PLAIN_ID)
        done = self.run(["squeue", "--noheader", "--me", "--array", "--states=all", "--name",
                         name, "--Format", f"{field}:|,Command:|"])  # fmt: skip
        found = []
        for line in done.out.splitlines():
            job_id, _, rest = line.strip().partition("|")
            if shape.fullmatch(job_id) and rest == f"{script}|":
                found.append(job_id)
        return sorted(found, key=_id_order)

    def not_ours(self, job_id: str, *, name: str, script: str | None = None,
                 script_sha256: str | None = None) -> str | None:  # fmt: skip
        """Why job `job_id` is not this user's job `name` submitted from `script` (its batch
        script's digest checked too), as the controller's fields say; None when it is, or
        when neither squeue nor accounting knows it any more."""
        user = self.run(["id", "-un"]).out.strip()
        done = self.run(["squeue", "--noheader", "--array", "--states=all", "--jobs", job_id,
                         "--Format", OWNER_FORMAT])  # fmt: skip
        line = next((x.strip() for x in done.out.splitlines() if x.startswith(f"{job_id}|")), None)
        if line is None:
            return self._not_ours_accounted(job_id, user, name)
        # user-chosen text (the script's path, the name) comes last, after the controller's
        # own fields; the whole line must be exactly ours, so a `|` in it cannot imitate
        expected = f"{job_id}|{user}|{name}|{script or '(null)'}|"
        if script is None:
            expected = f"{job_id}|{user}|{name}|"
            line = "|".join(line.split("|")[:3]) + "|"
        if line != expected:
            shown = line.split("|")
            return (f"the controller shows job {job_id} as user {shown[1]!r}, name and script "
                    f"{'|'.join(shown[2:-1])!r}; this work dir's is {user!r}, {name!r}, "
                    f"{script or '(none)'!r}")  # fmt: skip
        if script_sha256 is not None:
            batch = self.run(["scontrol", "write", "batch_script", job_id, "-"])
            if batch.code == 0 and hashlib.sha256(batch.out.encode()).hexdigest() != script_sha256:
                return f"job {job_id}'s batch script is not this work dir's (its sha256 differs)"
        return None

    def _not_ours_accounted(self, job_id: str, user: str, name: str) -> str | None:
        done = self.run(["sacct", "--noheader", "--parsable2", "--allocations", "--jobs", job_id,
                         "--format", "JobID,User,JobName"])  # fmt: skip
        if done.code != 0 or _NO_ACCOUNTING in (done.err + done.out).lower():
            return None
        for line in done.out.splitlines():
            if line.startswith(f"{job_id}|") and line.strip() != f"{job_id}|{user}|{name}":
                return f"accounting shows job {job_id} as {line.strip()!r}, not {user}'s {name!r}"
        return None

    def steps(self, job_id: str) -> list[str]:
        """The running steps of a job (`JOB.STEP`), without its batch and extern steps."""
        done = self.run(["squeue", "--noheader", "--steps", "--jobs", job_id, "--format", "%i"])
        return [
            line.strip()
            for line in done.out.splitlines()
            if "." in line and line.strip().split(".")[1].isdigit()
        ]


def refusal(done: Completed) -> str:
    """Why a Slurm command refused, in its own words: each line it printed to stderr (sbatch
    says why first and sums up last: `invalid partition specified: ghost; Batch job submission
    failed: ...`), without the program's prefix and `--help` hints; else its last line."""
    reasons = []
    for line in done.err.splitlines():
        text = line.strip()
        for prefix in ("sbatch:", "salloc:", "srun:", "error:"):
            text = text.removeprefix(prefix).strip()
        if text and not text.startswith("Try ") and text not in reasons:
            reasons.append(text)
    return "; ".join(reasons) or done.last_line()


def _scontrol_state(text: str, job_id: str) -> str | None:
    """JobState in `scontrol show job ID`'s answer (one field group a line): the first word of
    the line that starts with it, once the first line names the job."""
    lines = text.splitlines()
    first = f"{lines[0].strip()} " if lines else ""
    array, _, task = job_id.partition("_")  # an array's task: `JobId=N ArrayJobId=A ArrayTaskId=I`
    named = rf"JobId=\d+ ArrayJobId={array} ArrayTaskId={task} " if task else rf"JobId={job_id} "
    if not re.match(named, first):  # the controller's fields, before any text a user chose
        return None
    for line in lines[1:]:
        if line.strip().startswith("JobState="):
            return line.strip()[len("JobState=") :].split()[0]
    return None


def _id_order(job_id: str) -> tuple[int, str]:
    head = job_id.split(".")[0].split("_")[0]
    return (int(head) if head.isdigit() else 0, job_id)
