"""The Slurm backend's record: batch scripts lowered from a category's steps, launch scripts
submit.py writes, Slurm's client and state table, and persistent allocations."""

from __future__ import annotations

from scriptast.contract.axes import SLURM
from scriptast.schedulers.backend import BATCH, SchedulerBackend
from scriptast.schedulers.slurm.client import SlurmClient
from scriptast.schedulers.slurm.script import lower
from scriptast.schedulers.slurm.states import SLURM_STATES

BACKEND = SchedulerBackend(
    name=SLURM,
    lower=lower,
    states=SLURM_STATES,
    launch=BATCH,
    client=SlurmClient,
    runs_launch_scripts=True,
    allocations=True,
)
