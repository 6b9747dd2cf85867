"""pytest's step: one task that runs test_cmd with MPI cleared; a test that needs N MPI ranks
(`skip_less_mpi_world_size(N)`) runs as TRT-LLM's CI runs it under Slurm: N tasks of one MPI
world, each `trtllm-llmapi-launch pytest ...`."""

from __future__ import annotations

from scriptast.builders.categories.pytest.work import PytestWork
from scriptast.builders.resolution.job import ResolvedJob
from scriptast.plan.steps import (
    KEEP_RANK,
    Action,
    ChangeDir,
    ClearMpiEnv,
    ExportModelsRoot,
    JobSteps,
    RunCommand,
    ShowGpus,
    Step,
)


def steps(job: ResolvedJob) -> JobSteps:
    """The GPUs shown, MPI cleared for one task, LLM_MODELS_ROOT, the test folder, the test."""
    work = job.work_as(PytestWork)
    ranks = job.world_size
    actions: list[Action] = [ShowGpus()]
    if ranks == 1:
        actions.append(ClearMpiEnv(KEEP_RANK))
    actions.append(ExportModelsRoot())
    if work.workdir:
        actions.append(ChangeDir(work.workdir))
    actions.append(RunCommand(command=work.test, launcher=True))
    step = Step(tasks=ranks, mpi=ranks > 1, actions=tuple(actions))
    return JobSteps(title="TRT-LLM pytest job", steps=(step,), label="Test")
