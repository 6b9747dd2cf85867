"""custom's step: every task runs the command through a generated slurm_run_custom.sh (strict, an
ERR trap, custom_env's exports, MPI cleared on one node, the project folder)."""

from __future__ import annotations

from scriptast.builders.categories.custom.work import RUN_SCRIPT, CustomWork
from scriptast.builders.resolution.job import ResolvedJob
from scriptast.plan.steps import (
    KEEP_RANK,
    Action,
    ChangeDir,
    ClearMpiEnv,
    ExportVar,
    JobSteps,
    RunCommand,
    Runner,
    Step,
)


def steps(job: ResolvedJob) -> JobSteps:
    """One step of required_devices tasks, each running the runner file."""
    work = job.work_as(CustomWork)
    assert job.slurm is None or job.slurm.nodes == 1  # custom commands run on one node
    actions: list[Action] = [ExportVar(name=key, value=value) for key, value in work.env]
    actions += [ClearMpiEnv(KEEP_RANK), ChangeDir(job.project_path)]
    actions.append(RunCommand(command=work.command))
    runner = Runner(name=RUN_SCRIPT, path=work.run_script, label="Custom command")
    step = Step(tasks=job.required_devices, actions=tuple(actions), runner=runner)
    return JobSteps(title="TRT-LLM custom job", steps=(step,), label="Custom job")
