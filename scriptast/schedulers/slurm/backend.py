"""The Slurm backend's record: batch scripts lowered from a category's steps, launch scripts
submit.py writes, Slurm's client and state table, and persistent allocations."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from scriptast.contract.axes import SLURM
from scriptast.schedulers.backend import (
    BATCH,
    Allocations,
    HeldAllocation,
    SchedulerBackend,
    SchedulerClient,
)
from scriptast.schedulers.slurm.script import lower
from scriptast.schedulers.slurm.states import ENDED_BY, SLURM_STATES

if TYPE_CHECKING:
    from scriptast.contract.transport import Transport


def _client(transport: Transport) -> SchedulerClient:
    """Slurm's commands through `transport` (loaded by run only: emit never needs them)."""
    from scriptast.schedulers.slurm.client import SlurmClient

    return SlurmClient(transport)


def _held(client: SchedulerClient) -> list[HeldAllocation]:
    from scriptast.schedulers.slurm.allocation import list_allocations

    return list(list_allocations(client))


def _release(client: SchedulerClient, job_ids: Sequence[str]) -> list[str]:
    from scriptast.schedulers.slurm.allocation import release

    return release(client, list(job_ids))


BACKEND = SchedulerBackend(
    name=SLURM,
    lower=lower,
    states=SLURM_STATES,
    ended_by=ENDED_BY,
    launch=BATCH,
    client=_client,
    allocations=Allocations(held=_held, release=_release),
)
