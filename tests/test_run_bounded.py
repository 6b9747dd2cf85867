"""`scriptast run` is never stalled by the controller: with slurmctld frozen (SIGSTOP) the job's
log lines still reach the terminal as they are written, since the queue is polled apart from the
stream. On the real loopback Slurm."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from tests.run_site import RunSite, wait_for

pytestmark = pytest.mark.slurm


def _slurmctld(runs: RunSite) -> int:
    assert runs.cluster is not None
    for line in (runs.cluster.root / "pids").read_text().split():
        if Path(f"/proc/{line}/comm").read_text().strip() == "slurmctld":
            return int(line)
    raise AssertionError("no slurmctld among the cluster's processes")


def test_log_lines_flow_while_the_controller_is_frozen(runs: RunSite) -> None:
    ticks = "for i in $(seq 1 40); do echo tick $i; sleep 0.5; done"
    work = runs.emit("frozen", workflow_type="custom", custom_cmd=ticks, persistent_mode=False)
    process = runs.start("run", str(work), "--poll-max", "1")
    arrived: list[tuple[float, str]] = []

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            arrived.append((time.monotonic(), line))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    wait_for(work, "RUNNING", text="tick 3")
    controller = _slurmctld(runs)
    os.kill(controller, signal.SIGSTOP)
    frozen_at = time.monotonic()
    try:
        time.sleep(8)
    finally:
        os.kill(controller, signal.SIGCONT)
    during = [line for at, line in arrived if frozen_at + 1 <= at <= frozen_at + 8]
    process.communicate(timeout=120)
    reader.join(timeout=10)
    assert process.returncode == 0
    assert sum("tick" in line for line in during) >= 8, during
