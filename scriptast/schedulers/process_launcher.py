"""The launcher of a backend whose jobs are processes of this machine (its script run by bash
through the exit-code wrapper, its output straight into the logs job_spec.json names): the
default of a backend that queues nothing."""

from __future__ import annotations

import os

from scriptast.contract.run_record import Launch, RunRecord
from scriptast.schedulers.launching import JobFiles, LaunchChoice, Place, Tracker
from scriptast.schedulers.queue_client import SchedulerClient
from scriptast.schedulers.tracking import ProcessTracker


class ProcessLauncher:
    """Runs the job's script as a process at its place; follows it by its process id."""

    def kind(self, job: JobFiles, choice: LaunchChoice) -> Launch:
        return "process"

    def command(self, job: JobFiles) -> list[str]:
        """The job's argv."""
        return ["bash", job.script]

    def dry_run(self, job: JobFiles, choice: LaunchChoice) -> list[list[str]]:
        return [self.command(job)]

    def log_files(self, job: JobFiles, job_id: str) -> tuple[str, str | None]:
        logs = job.spec.logs
        return logs.output, logs.error

    def ready(self, job: JobFiles) -> None:
        """What must hold before the process starts (RunError with the reason, else nothing)."""

    def launch(
        self,
        job: JobFiles,
        place: Place,
        client: SchedulerClient | None,
        choice: LaunchChoice,
        record: RunRecord,
    ) -> Tracker:
        argv = self.command(job)
        out, err_or_none = self.log_files(job, "")
        err = err_or_none or out
        self.ready(job)
        place.stage()
        # this machine's environment, as a process started here has it; a cluster's own there
        environment = dict(os.environ) if place.where is None else {}
        pid = place.start(argv, environment, out, err)
        record.submit_command, record.pid, record.state = tuple(argv), pid, "RUNNING"
        record.out_log, record.err_log = out, err if err != out else None
        record.launch = "process"
        return self.follow(job, record, place, client)

    def follow(
        self, job: JobFiles, record: RunRecord, place: Place, client: SchedulerClient | None
    ) -> Tracker:
        return ProcessTracker(place, record)


def launcher() -> ProcessLauncher:
    """The default launcher: each job's script a process here."""
    return ProcessLauncher()
