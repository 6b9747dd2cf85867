"""The scheduler backends by name: one line a backend. A new scheduler is one folder (its
lowering, its client, its states) and one `register(...)` line here."""

from __future__ import annotations

from scriptast.errors import InputError
from scriptast.schedulers.backend import SchedulerBackend
from scriptast.schedulers.docker.backend import BACKEND as DOCKER
from scriptast.schedulers.slurm.backend import BACKEND as SLURM

SCHEDULERS: dict[str, SchedulerBackend] = {}
"""Each backend by name."""


def register(backend: SchedulerBackend) -> SchedulerBackend:
    """Add `backend` to the registry (its name must be new)."""
    if backend.name in SCHEDULERS:
        raise ValueError(f"a scheduler backend named {backend.name!r} is registered already")
    SCHEDULERS[backend.name] = backend
    return backend


register(SLURM)
register(DOCKER)


def scheduler(name: str) -> SchedulerBackend:
    """The registered backend `name`."""
    found = SCHEDULERS.get(name)
    if found is None:
        raise InputError(f"no scheduler backend {name!r}; known: {', '.join(SCHEDULERS)}")
    return found
