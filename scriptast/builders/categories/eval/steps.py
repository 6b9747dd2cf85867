"""eval's step: trtllm-eval in a task a rank, always one MPI world (trtllm-eval imports mpi4py,
which initializes MPI at load: without a PMI runtime a single task aborts too)."""

from __future__ import annotations

from scriptast.builders.categories.eval.work import EvalWork
from scriptast.builders.resolution.job import ResolvedJob
from scriptast.plan.steps import ExportModelsRoot, JobSteps, RunCommand, Step


def steps(job: ResolvedJob) -> JobSteps:
    """With world_size 2 the step is two tasks each running `trtllm-llmapi-launch trtllm-eval
    --model /models/x --tp_size 2 gsm8k`."""
    command = job.work_as(EvalWork).command
    actions = (ExportModelsRoot(), RunCommand(command=command, launcher=True))
    step = Step(tasks=job.world_size, mpi=True, actions=actions)
    return JobSteps(title="TRT-LLM trtllm-eval job", steps=(step,), label="Eval")
