"""A sweep's docker jobs (job_spec.json's `processes`) run here at most their limit at once:
the first ones start with the rest of the run, the others are held and started as one ends."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from scriptast.executor.followed_job import Followed
from scriptast.executor.job_files import LoadedJob

Group = tuple[str, str]
"""A sweep's processes: the sweep file's sha256 and the group's name."""


def group_of(job: LoadedJob) -> Group | None:
    """The sweep's processes the job is one of (None: it runs as soon as it is submitted)."""
    processes = job.spec.processes
    return None if processes is None else (processes.sweep, processes.name)


class HeldBack:
    """The jobs given, split into those that start now and those held until fewer than their
    group's limit run (a group's limit: the least its jobs record)."""

    def __init__(self, jobs: Sequence[LoadedJob]) -> None:
        self.limits: dict[Group, int] = {}
        for job in jobs:
            group = group_of(job)
            if group is not None and job.spec.processes is not None:
                limit = max(1, job.spec.processes.limit)
                self.limits[group] = min(self.limits.get(group, limit), limit)
        self.now: list[LoadedJob] = []
        self.held: dict[Group, deque[LoadedJob]] = {}
        counted: dict[Group, int] = {}
        for job in jobs:
            group = group_of(job)
            if group is None or counted.get(group, 0) < self.limits[group]:
                self.now.append(job)
                if group is not None:
                    counted[group] = counted.get(group, 0) + 1
            else:
                self.held.setdefault(group, deque()).append(job)

    @property
    def waiting(self) -> list[LoadedJob]:
        """The jobs held and not yet started, in the order given."""
        return [job for queue in self.held.values() for job in queue]

    def due(self, followed: Sequence[Followed]) -> list[LoadedJob]:
        """The held jobs to start now, taken off the queue: of each group, as many as its
        limit leaves room for beside the jobs of it `followed` that have not finished."""
        running: dict[Group, int] = {}
        for each in followed:
            group = group_of(each.job)
            if group is not None and not each.finished:
                running[group] = running.get(group, 0) + 1
        started: list[LoadedJob] = []
        for group, queue in self.held.items():
            room = self.limits[group] - running.get(group, 0)
            while room > 0 and queue:
                started.append(queue.popleft())
                room -= 1
        return started

    def wait_for(self) -> str | None:
        """What a run that returns once submitted (--detach) cannot do here, or None."""
        waiting = self.waiting
        if not waiting:
            return None
        limit = self.limits[group_of(waiting[0]) or ("", "")]
        return (
            f"{len(waiting)} of the docker jobs given wait for their turn (their sweep runs at "
            f"most {limit} at once), and only a run that stays starts them: run without "
            "--detach, or give at most that many work dirs"
        )
