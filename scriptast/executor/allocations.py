"""The `alloc` commands: persistent allocations listed and released through the scheduler
backend that has them, over the transport that reaches its cluster (this machine, or an ssh
host's)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from scriptast.contract.axes import LOCAL, SSH
from scriptast.errors import RunError
from scriptast.schedulers.backend import Allocations, HeldAllocation
from scriptast.schedulers.queue_client import SchedulerClient
from scriptast.schedulers.registry import every_scheduler
from scriptast.transports.registry import transport


def held_allocations(remote: str | None, ssh_config: str | None) -> list[HeldAllocation]:
    """This user's persistent allocations on the cluster (`remote`: an ssh host's)."""
    with _client(remote, ssh_config) as (client, allocations):
        return list(allocations.held(client))


def release_allocations(remote: str | None, ssh_config: str | None,
                        job_ids: Sequence[str]) -> list[str]:  # fmt: skip
    """Release these persistent allocations (all of this user's when none is named)."""
    with _client(remote, ssh_config) as (client, allocations):
        return allocations.release(client, job_ids)


@contextmanager
def _client(remote: str | None, ssh_config: str | None
            ) -> Iterator[tuple[SchedulerClient, Allocations]]:  # fmt: skip
    """The client of the one backend with persistent allocations, over the transport to the
    cluster, closed after."""
    having = [b for b in every_scheduler() if b.allocations is not None and b.client is not None]
    if len(having) != 1:
        names = ", ".join(b.name for b in having) or "none"
        raise RunError(f"persistent allocations need one scheduler that has them; found {names}")
    backend = having[0]
    assert backend.allocations is not None and backend.client is not None
    reach = transport(SSH if remote else LOCAL, remote, ssh_config)
    try:
        yield backend.client(reach), backend.allocations
    finally:
        reach.close()
