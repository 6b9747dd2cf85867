"""What one `scriptast run` (or `watch`, `cancel`) shares for its jobs, made once: the transport
that reaches their scheduler (this machine, or a cluster's ssh master) and the scheduler's client
over it."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from scriptast.contract.axes import LOCAL
from scriptast.contract.transport import Transport
from scriptast.errors import RunError
from scriptast.executor.job_files import LoadedJob
from scriptast.executor.options import RunOptions
from scriptast.schedulers.backend import SchedulerBackend
from scriptast.schedulers.queue_client import SchedulerClient
from scriptast.schedulers.registry import scheduler
from scriptast.transports.registry import transport as make_transport


class Session(msgspec.Struct, frozen=True):
    """The transport, the scheduler client and its backend of a run (None: its jobs are
    processes here)."""

    transport: Transport | None
    client: SchedulerClient | None
    backend: SchedulerBackend | None = None


def ssh_host(job: LoadedJob, options: RunOptions, recorded: str | None = None) -> str:
    """The cluster's ssh host: `--ssh-host`, else the one a run recorded, else slurm_env's
    `ssh_host`, else the host the probe ran on (`probe.host`)."""
    env = job.spec.slurm_env
    host = options.ssh_host or recorded or (env.front_door if env else None)
    if not host:
        raise RunError(
            f"{job.work_dir} is a remote_slurm job and no ssh host is known: give --ssh-host HOST"
        )
    return host


def open_session(
    jobs: Sequence[LoadedJob],
    options: RunOptions,
    transport: Transport | None = None,
    recorded: str | None = None,
) -> Session:
    """The session of `jobs` (`transport` given: a test's). Jobs of one run share their
    scheduler's client, so they share one transport: one host, one scheduler."""
    queued = [j for j in jobs if scheduler(j.spec.scheduler).client is not None]
    if not queued:
        return Session(None, None)
    backends = {j.spec.scheduler for j in queued}
    if len(backends) > 1:
        raise RunError(f"jobs of several schedulers ({', '.join(sorted(backends))}) run apart")
    backend = scheduler(backends.pop())
    assert backend.client is not None
    if transport is None:
        transport = _transport(queued, options, recorded)
    return Session(transport, backend.client(transport), backend)


def _transport(jobs: Sequence[LoadedJob], options: RunOptions, recorded: str | None) -> Transport:
    names = {j.spec.transport for j in jobs}
    if len(names) > 1:
        raise RunError("remote_slurm jobs and local jobs go in separate runs")
    name = names.pop()
    if name == LOCAL:
        return make_transport(name)
    hosts = {ssh_host(j, options, recorded) for j in jobs}
    if len(hosts) > 1:
        raise RunError(f"these jobs go to several hosts ({', '.join(sorted(hosts))}): one a run")
    return make_transport(name, hosts.pop(), options.ssh_config)
