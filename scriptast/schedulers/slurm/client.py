"""Slurm as `run` uses it: submit with `sbatch --parsable`, one `squeue` for all followed jobs,
the final state from `sacct`, else `scontrol show job`, and `scancel`."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from scriptast.contract.transport import Completed, Transport
from scriptast.errors import RunError
from scriptast.schedulers.backend import Final, QueueRow
from scriptast.schedulers.slurm.states import is_final

QUEUE_FORMAT = "%i|%T|%r|%M|%L|%N"
_FIELDS = re.compile(r"(\w+)=(\S*)")


def parse_exit_code(text: str) -> int | None:
    """Slurm's `code:signal` as a shell would report it: the code, or 128 + the signal."""
    code, _, signal = text.partition(":")
    if not code.isdigit():
        return None
    if signal.isdigit() and int(signal) and not int(code):
        return 128 + int(signal)
    return int(code)


class SlurmClient:
    """Slurm's commands, run through a transport (this machine, or a cluster over ssh)."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport

    def run(
        self, argv: Sequence[str], *, timeout: float = 60.0, cwd: str | None = None
    ) -> Completed:
        """Run one Slurm command through the transport."""
        return self.transport.run(argv, timeout=timeout, cwd=cwd)

    def submit_argv(self, script: str) -> list[str]:
        """The command that submits `script`."""
        return ["sbatch", "--parsable", script]

    def submit(self, script: str, cwd: str) -> str:
        """`sbatch --parsable SCRIPT` from `cwd`: the job id, or RunError with sbatch's words."""
        done = self.run(self.submit_argv(script), cwd=cwd)
        answer = done.out.strip().splitlines()[-1:] if done.code == 0 else []
        job_id = answer[0].split(";")[0].strip() if answer else ""
        if not job_id.isdigit():
            raise RunError(f"sbatch refused {script}: {done.last_line()}")
        return job_id

    def queue(self, job_ids: Iterable[str]) -> dict[str, QueueRow] | None:
        """One `squeue` for all `job_ids` (every state): the rows it shows, keyed by id; a job
        it no longer shows is not a key. None when squeue itself failed (unknown this time)."""
        ids = sorted(set(job_ids), key=_id_order)
        if not ids:
            return {}
        done = self.run(
            ["squeue", "--noheader", "--states=all", "--jobs", ",".join(ids),
             "--format", QUEUE_FORMAT]
        )  # fmt: skip
        if done.code != 0:
            # one unknown id makes squeue fail: the controller no longer knows the job
            return {} if "Invalid job id" in done.err else None
        rows = {}
        for line in done.out.splitlines():
            parts = line.strip().split("|")
            if len(parts) == 6 and parts[0]:
                rows[parts[0]] = QueueRow(
                    state=parts[1].split()[0] if parts[1] else "UNKNOWN",
                    reason=parts[2],
                    elapsed=parts[3],
                    time_left=parts[4],
                    nodes=parts[5],
                )
        return rows

    def finals(self, job_ids: Sequence[str]) -> dict[str, Final]:
        """The final state and exit code of finished jobs: `sacct` where accounting works, else
        `scontrol show job` while the controller still holds them (one call for all)."""
        wanted = sorted(set(job_ids), key=_id_order)
        if not wanted:
            return {}
        found = self._from_sacct(wanted)
        missing = [job for job in wanted if job not in found]
        if missing:
            found.update(self._from_scontrol(missing))
        return found

    def _from_sacct(self, job_ids: list[str]) -> dict[str, Final]:
        done = self.run(
            ["sacct", "--noheader", "--parsable2", "--allocations", "--jobs", ",".join(job_ids),
             "--format", "JobID,State,ExitCode"]
        )  # fmt: skip
        if done.code != 0:
            return {}
        found = {}
        for line in done.out.splitlines():
            parts = line.strip().split("|")
            if len(parts) >= 3 and parts[0] in job_ids and parts[1]:
                state = parts[1].split()[0]
                if is_final(state):
                    found[parts[0]] = Final(
                        state=state, exit_code=parse_exit_code(parts[2]), source="sacct"
                    )
        return found

    def _from_scontrol(self, job_ids: list[str]) -> dict[str, Final]:
        argv = ["scontrol", "show", "job", "--oneliner"]
        if len(job_ids) == 1:
            argv.append(job_ids[0])
        done = self.run(argv)
        found = {}
        for line in done.out.splitlines():
            fields = dict(_FIELDS.findall(line))
            job = fields.get("JobId", "")
            state = fields.get("JobState", "")
            if job in job_ids and is_final(state):
                found[job] = Final(
                    state=state,
                    exit_code=parse_exit_code(fields.get("ExitCode", "")),
                    source="scontrol",
                )
        return found

    def cancel(self, targets: Sequence[str]) -> Completed:
        """`scancel` jobs or steps (`JOB.STEP`)."""
        return self.run(["scancel", *targets])

    def steps(self, job_id: str) -> list[str]:
        """The running steps of a job (`JOB.STEP`), without its batch and extern steps."""
        done = self.run(["squeue", "--noheader", "--steps", "--jobs", job_id, "--format", "%i"])
        return [
            line.strip()
            for line in done.out.splitlines()
            if "." in line and line.strip().split(".")[1].isdigit()
        ]


def _id_order(job_id: str) -> tuple[int, str]:
    head = job_id.split(".")[0].split("_")[0]
    return (int(head) if head.isdigit() else 0, job_id)
