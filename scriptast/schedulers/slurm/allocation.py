"""Persistent allocations: `salloc --no-shell` with the job's own nodes, tasks per node, gres,
partition and account, named and described so that the next run finds it with one `squeue` and
reuses it only when those match and its time left covers the job's time limit."""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
from collections.abc import Sequence

import msgspec

from scriptast.common.clock_time import clock_seconds
from scriptast.contract.job_spec import SlurmParams
from scriptast.errors import RunError
from scriptast.schedulers.queue_client import SchedulerClient
from scriptast.schedulers.slurm.backend import ALLOCATION_NAME

COMMENT_PREFIX = "scriptast:"
_GRANTED = re.compile(r"Granted job allocation (\d+)")


class AllocationParams(msgspec.Struct, frozen=True, kw_only=True):
    """What a job needs of an allocation; an allocation is reused only when these are equal."""

    partition: str
    account: str
    nodes: int
    ntasks_per_node: int
    gres: str | None

    @classmethod
    def of(cls, params: SlurmParams) -> AllocationParams:
        """The allocation a job with these Slurm parameters runs in."""
        return cls(
            partition=params.partition,
            account=params.account,
            nodes=params.nodes,
            ntasks_per_node=params.ntasks_per_node,
            gres=params.gres,
        )

    def differences(self, other: AllocationParams) -> list[str]:
        """`field a != b` for each parameter that differs."""
        mine, theirs = msgspec.structs.asdict(self), msgspec.structs.asdict(other)
        return [f"{k} {theirs[k]} != {mine[k]}" for k in mine if mine[k] != theirs[k]]


class Allocation(msgspec.Struct, frozen=True, kw_only=True):
    """A persistent allocation as squeue shows it."""

    job_id: str
    state: str
    time_left: str
    nodes: str
    params: AllocationParams | None

    def holds(self) -> str:
        """`N node(s), gres G` when its comment says, else `nodes`."""
        if self.params is None:
            return "nodes"
        return f"{self.params.nodes} node(s), gres {self.params.gres or 'none'}"

    def described(self) -> str:
        """The parameters it was made for, as JSON, or `-` when its comment does not say."""
        return msgspec.json.encode(self.params).decode() if self.params else "-"

    @property
    def seconds_left(self) -> float | None:
        """Its time left in seconds; None for UNLIMITED (or what cannot be read)."""
        return clock_seconds(self.time_left)


def list_allocations(client: SchedulerClient) -> list[Allocation]:
    """This user's persistent allocations (one squeue), pending or running."""
    done = client.run(
        ["squeue", "--noheader", "--me", "--name", ALLOCATION_NAME,
         "--format", "%i|%T|%L|%N|%k"]
    )  # fmt: skip
    if done.code != 0:
        raise RunError(f"squeue could not list the allocations: {done.last_line()}")
    found = []
    for line in done.out.splitlines():
        parts = line.strip().split("|", 4)
        if len(parts) == 5 and parts[0]:
            found.append(
                Allocation(
                    job_id=parts[0],
                    state=parts[1],
                    time_left=parts[2],
                    nodes=parts[3],
                    params=_params(parts[4]),
                )
            )
    return found


def _params(comment: str) -> AllocationParams | None:
    if not comment.startswith(COMMENT_PREFIX):
        return None
    try:
        return msgspec.json.decode(comment[len(COMMENT_PREFIX) :], type=AllocationParams)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None


def choose(
    allocations: list[Allocation], wanted: AllocationParams, needed_seconds: float
) -> tuple[Allocation | None, list[str]]:
    """The running allocation to reuse, or None; and why each other one was not taken."""
    why = []
    for allocation in allocations:
        if allocation.params is None:
            why.append(f"allocation {allocation.job_id}: not described by scriptast")
            continue
        differences = wanted.differences(allocation.params)
        left = allocation.seconds_left
        if differences:
            why.append(f"allocation {allocation.job_id}: {', '.join(differences)}")
        elif allocation.state != "RUNNING":
            why.append(f"allocation {allocation.job_id}: {allocation.state}, not running")
        elif left is not None and left < needed_seconds:
            why.append(
                f"allocation {allocation.job_id}: {allocation.time_left} left, the job needs "
                f"{needed_seconds / 60:g} min"
            )
        else:
            return allocation, why
    return None, why


IDLE_WATCH = r"""alloc=$1 idle=$2 every=$3 last=$(date +%s)
while [ -n "$(squeue --noheader -j "$alloc" -o %T 2>/dev/null)" ]; do
    if squeue --noheader --steps -j "$alloc" -o %i 2>/dev/null | grep -Eq '^[0-9]+\.[0-9]+$'; then
        last=$(date +%s)
    elif [ $(( $(date +%s) - last )) -ge "$idle" ]; then
        exec scancel "$alloc"
    fi
    sleep "$every"
done"""
"""Where the allocation is made (this machine, or the cluster's login node), in the background:
releases allocation $1 once it has run no step for $2 seconds, checking every $3 seconds, and
ends with it. A shell loop, since the cluster need not have scriptast."""


def watch_idle(client: SchedulerClient, alloc_id: str, idle_seconds: float) -> None:
    """Start the watcher that releases `alloc_id` after `idle_seconds` without a step."""
    every = max(1, min(15, int(idle_seconds // 4)))
    loop = shlex.join(["sh", "-c", IDLE_WATCH, "scriptast-idle", alloc_id,
                       str(int(idle_seconds)), str(every)])  # fmt: skip
    client.run(["sh", "-c", f"setsid nohup {loop} </dev/null >/dev/null 2>&1 &"])


def salloc_argv(wanted: AllocationParams, time_limit: str) -> list[str]:
    """`salloc --no-shell` for `wanted`, named and described so that it can be found again."""
    comment = COMMENT_PREFIX + json.dumps(msgspec.structs.asdict(wanted), separators=(",", ":"))
    argv = [
        "salloc", "--no-shell", f"--job-name={ALLOCATION_NAME}", f"--comment={comment}",
        f"--partition={wanted.partition}", f"--account={wanted.account}",
        f"--nodes={wanted.nodes}", f"--ntasks-per-node={wanted.ntasks_per_node}",
        f"--time={time_limit}",
    ]  # fmt: skip
    if wanted.gres:
        argv.append(f"--gres={wanted.gres}")
    return argv


def allocate(
    client: SchedulerClient, wanted: AllocationParams, time_limit: str, wait: float
) -> str:
    """A new allocation's id (salloc returns once it is granted, within `wait` seconds)."""
    done = client.run(salloc_argv(wanted, time_limit), timeout=wait)
    granted = _GRANTED.search(done.err + done.out)
    if done.code != 0 or granted is None:
        pending = re.search(r"Pending job allocation (\d+)", done.err)
        if pending:
            client.cancel([pending.group(1)])
        raise RunError(f"salloc did not grant an allocation: {done.last_line()}")
    return granted.group(1)


def release(client: SchedulerClient, job_ids: Sequence[str]) -> list[str]:
    """Cancel these persistent allocations (all of this user's when none is named); the ids
    released. An id that is not a scriptast allocation is refused."""
    known = {a.job_id for a in list_allocations(client)}
    chosen = job_ids or sorted(known)
    unknown = [i for i in chosen if i not in known]
    if unknown:
        raise RunError(
            f"not a persistent allocation of scriptast: {', '.join(unknown)} (see "
            "'scriptast alloc list')"
        )
    if chosen:
        done = client.cancel(chosen)
        if done.code != 0:
            raise RunError(f"scancel did not release {', '.join(chosen)}: {done.last_line()}")
    return list(chosen)


CLEARED_PREFIXES = ("SLURM_", "SBATCH_", "SALLOC_", "SRUN_")
KEPT_SLURM = ("SLURM_CONF",)


def acquire(client: SchedulerClient, params: SlurmParams, time_limit: str, needed: float,
            wait: float, idle: float) -> tuple[str, str, list[str]]:  # fmt: skip
    """A running allocation for `params` whose time left covers `needed` seconds, else a new
    one of `time_limit` (waiting at most `wait` s; released after `idle` s without a step when
    above 0): its id, its nodes, and notes on how it was chosen."""
    wanted = AllocationParams.of(params)
    found, why = choose(list_allocations(client), wanted, needed)
    if found is not None:
        return found.job_id, found.nodes, [f"reused persistent allocation {found.job_id}"]
    alloc_id = allocate(client, wanted, time_limit, wait)
    if idle > 0:
        watch_idle(client, alloc_id, idle)
    nodes = next((a.nodes for a in list_allocations(client) if a.job_id == alloc_id), "")
    return alloc_id, nodes, [f"new persistent allocation {alloc_id}", *why]


def step_env(params: SlurmParams, alloc_id: str, nodes: str, work_dir: str) -> dict[str, str]:
    """This environment without Slurm's job variables, plus those of the allocation, so that
    every srun of a script run with it is a step of the allocation."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(CLEARED_PREFIXES) or k in KEPT_SLURM
    }
    env.update(
        SLURM_JOB_ID=alloc_id,
        SLURM_JOBID=alloc_id,
        SLURM_NNODES=str(params.nodes),
        SLURM_JOB_NUM_NODES=str(params.nodes),
        SLURM_NTASKS=str(params.ntasks),
        SLURM_NPROCS=str(params.ntasks),
        SLURM_NTASKS_PER_NODE=str(params.ntasks_per_node),
        SLURM_SUBMIT_DIR=work_dir,
        SLURM_SUBMIT_HOST=socket.gethostname(),
    )
    if nodes:
        env.update(SLURM_NODELIST=nodes, SLURM_JOB_NODELIST=nodes)
    return env


def dry_run(params: SlurmParams, time_limit: str, script: str) -> list[list[str]]:
    """What run does for a job in an allocation: find one, else make one, then run the script
    with its variables (what `run --dry-run` prints)."""
    return [
        ["squeue", "--noheader", "--me", "--name", ALLOCATION_NAME],
        salloc_argv(AllocationParams.of(params), time_limit),
        ["env", "SLURM_JOB_ID=<allocation>", "bash", script],
    ]
