"""bench's steps: the prepare step (one task, no MPI) when the command has one, then the run step
(a task a rank; one MPI world when there are several)."""

from __future__ import annotations

from scriptast.builders.categories.bench.work import BenchWork
from scriptast.builders.resolution.job import ResolvedJob
from scriptast.plan.steps import (
    KEEP_RANK_AND_LOCAL,
    ClearMpiEnv,
    ExportModelsRoot,
    JobSteps,
    RunCommand,
    Step,
)


def steps(job: ResolvedJob) -> JobSteps:
    """With tp 2 the run step is two tasks of one MPI world, each running
    `trtllm-llmapi-launch trtllm-bench --model m throughput --tp 2`."""
    work = job.work_as(BenchWork)
    found = []
    if work.prepare is not None:
        clear = ClearMpiEnv(KEEP_RANK_AND_LOCAL)
        prepare = (clear, ExportModelsRoot(), RunCommand(command=work.prepare))
        found.append(Step(tasks=1, actions=prepare))
    multi = job.world_size > 1
    single = () if multi else (ClearMpiEnv(KEEP_RANK_AND_LOCAL),)
    run = (*single, ExportModelsRoot(), RunCommand(command=work.run, launcher=True))
    found.append(Step(tasks=job.world_size, mpi=multi, actions=run))
    return JobSteps(title="TRT-LLM trtllm-bench job", steps=tuple(found), label="Bench")
