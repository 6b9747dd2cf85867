"""The Slurm backend's record: batch scripts lowered from a category's steps, launch scripts
submit.py writes, and Slurm's state table."""

from __future__ import annotations

from scriptast.contract.axes import SLURM
from scriptast.schedulers.backend import SchedulerBackend
from scriptast.schedulers.slurm.script import lower
from scriptast.schedulers.slurm.states import SLURM_STATES

BACKEND = SchedulerBackend(name=SLURM, lower=lower, states=SLURM_STATES, runs_launch_scripts=True)
