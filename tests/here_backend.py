"""A plain process backend, `here` (scenario local_here): a job's steps in one script run on this
machine. `python -m tests.here_backend ARGS` is the scriptast command line with it registered, as
a site's plugin would register its scheduler."""

from __future__ import annotations

from scriptast.contract import axes
from scriptast.contract.job_spec import JobLogs
from scriptast.model.script import Script
from scriptast.model.statements import Comment, ShellStatement
from scriptast.plan.launch import LaunchPlan
from scriptast.plan.steps import JobSteps, ShowGpus
from scriptast.schedulers import registry
from scriptast.schedulers.backend import Lowered, SchedulerBackend
from scriptast.schedulers.shell import install_commands, statements


def _lower(job: LaunchPlan, planned: JobSteps) -> Lowered:
    """Each step's actions in the script itself, one after another (no GPU here to show)."""
    body: list[ShellStatement] = list(install_commands(job)) if job.install else []
    for step in planned.steps:
        for action in step.actions:
            if not isinstance(action, ShowGpus):
                body.extend(statements(job, action, 1))
    script = Script(header=(Comment(text=f"{planned.title}, run here."),), body=tuple(body))
    logs = JobLogs(output=f"{job.work_dir}/{job.job_name}.log")
    return Lowered(main_name="run_here.sh", main=script, logs=logs)


HERE = SchedulerBackend(name="here", lower=_lower, states={})
"""No launcher named: its jobs run as processes here, the default."""


def register() -> None:
    """The backend and its scenario, in this process's registries."""
    registry.register(HERE)
    axes.PLACEMENTS["local_here"] = axes.Placement("here", axes.LOCAL)


if __name__ == "__main__":
    register()
    from scriptast.cli.entry import main

    main()
