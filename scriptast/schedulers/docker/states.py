"""A docker job's states onto the verdict's: its process runs, or it ended with an exit code."""

from __future__ import annotations

from scriptast.contract.run_record import JobState

DOCKER_STATES: dict[str, JobState] = {
    "RUNNING": JobState.RUNNING,
    "COMPLETED": JobState.COMPLETED,
    "FAILED": JobState.FAILED,
}
"""What run records for a docker job's process: running, or ended with exit code 0 or not."""
