"""The scheduler backends by name: one line a backend. A new scheduler is one folder (its
lowering, its client, its states) and one line here; a backend's code loads when a job names it."""

from __future__ import annotations

import importlib

from scriptast.contract.axes import DOCKER, SLURM
from scriptast.errors import InputError
from scriptast.schedulers.backend import SchedulerBackend

KNOWN: dict[str, str] = {
    SLURM: "scriptast.schedulers.slurm.backend",
    DOCKER: "scriptast.schedulers.docker.backend",
}
"""Each shipped backend's name and the module whose BACKEND it is."""
SCHEDULERS: dict[str, SchedulerBackend] = {}
"""The backends loaded or registered so far, by name."""


def register(backend: SchedulerBackend) -> SchedulerBackend:
    """Add `backend` to the registry (its name must be new)."""
    if backend.name in SCHEDULERS or backend.name in KNOWN:
        raise ValueError(f"a scheduler backend named {backend.name!r} is registered already")
    SCHEDULERS[backend.name] = backend
    return backend


def scheduler(name: str) -> SchedulerBackend:
    """The backend `name` (a shipped one is loaded on first use)."""
    found = SCHEDULERS.get(name)
    if found is None and name in KNOWN:
        loaded: SchedulerBackend = importlib.import_module(KNOWN[name]).BACKEND
        found = SCHEDULERS[name] = loaded
    if found is None:
        known = ", ".join(dict.fromkeys([*KNOWN, *SCHEDULERS]))
        raise InputError(f"no scheduler backend {name!r}; known: {known}")
    return found


def every_scheduler() -> list[SchedulerBackend]:
    """Every backend: the shipped ones (loaded now) and those registered."""
    return [scheduler(name) for name in dict.fromkeys([*KNOWN, *SCHEDULERS])]
