"""The srun launcher: one of a category's steps as an srun step in the job's pyxis container,
its tasks on one node, `--mpi` when they form one MPI world, and its actions as the payload (or
its runner file as the command)."""

from __future__ import annotations

import functools

from scriptast.model.slurm import Mount, PyxisContainer, SrunStep
from scriptast.model.statements import Payload
from scriptast.model.words import Lit
from scriptast.plan.launch import LaunchPlan
from scriptast.plan.steps import Step
from scriptast.schedulers.shell import payload, statements


def srun_step(job: LaunchPlan, step: Step) -> SrunStep:
    """`srun -l --ntasks=N --ntasks-per-node=N [--mpi=<plugin>] --kill-on-bad-exit=1
    --container-... bash -c '...'` (or `bash <runner>` for a step run from its runner file)."""
    assert job.slurm is not None
    command: tuple[Lit, ...] = ()
    run: Payload | None = None
    if step.runner is not None:
        command = (Lit(value="bash"), Lit(value=step.runner.path))
    else:
        run = payload(*(each for a in step.actions for each in statements(job, a, step.tasks)))
    return SrunStep(
        ntasks=step.tasks,
        ntasks_per_node=step.tasks,
        mpi=job.slurm.mpi_plugin if step.mpi else None,
        kill_on_bad_exit=True,
        container=container(job),
        payload=run,
        command=command,
    )


def container(job: LaunchPlan) -> PyxisContainer:
    """The pyxis container every step of the job runs in."""
    return _container(job.image_enroot, job.job_name, job.mounts, job.project_path)


@functools.lru_cache(maxsize=256)
def _container(
    image: str, name: str, mounts: tuple[Mount, ...], workdir: str | None
) -> PyxisContainer:
    return PyxisContainer(image=image, name=name, mounts=mounts, workdir=workdir)
