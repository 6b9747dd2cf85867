"""A site for `scriptast run` tests: jobs emitted for the loopback test cluster (slurm_env.json
probed from it), recording stand-ins for the TRT-LLM tools inside the steps, and the console
script run as a user would run it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scriptast.builders.read_request import build_request
from scriptast.pipeline.emit_job import generate, write_outputs
from tests.shim_recorder import Shims
from tests.site import Site
from tests.slurm_cluster import Cluster
from tests.test_categories import site_fields

RUN_TIMEOUT = 300
SCRIPTAST = str(Path(sys.executable).parent / "scriptast")
BENCH = "trtllm-bench --model meta-llama/Llama-3.1-8B-Instruct throughput --dataset /tmp/d.json"


@dataclass
class RunSite:
    """One test's jobs, stand-ins and environment."""

    site: Site
    cluster: Cluster | None
    shims: Shims
    env: dict[str, str] = field(default_factory=dict)
    started: list[subprocess.Popen[str]] = field(default_factory=list)

    def emit(self, name: str, **fields: Any) -> Path:
        """Write a job into work/<name>; `fields` override the request's."""
        chosen = {"account": "root", "partition": "batch", "work_dir": str(self.site.work(name))}
        chosen.update(fields)
        output = generate(
            build_request(site_fields(self.site, chosen), {}), home=str(self.site.home)
        )
        write_outputs(output)
        return Path(output.job.work_dir)

    def environment(self, **extra: str) -> dict[str, str]:
        base = {
            **os.environ,
            "PATH": f"{self.shims.bin}:{Path(sys.executable).parent}:/usr/bin:/bin:/usr/sbin:/sbin",
            "SHIM_LOG": str(self.shims.log),
            **self.env,
            **extra,
        }
        if self.cluster is not None:
            base["SLURM_CONF"] = str(self.cluster.conf)
        return base

    def run(self, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        """`scriptast ARGS`, to its end."""
        return subprocess.run(
            [SCRIPTAST, *args],
            capture_output=True,
            text=True,
            env=self.environment(**extra),
            timeout=RUN_TIMEOUT,
            stdin=subprocess.DEVNULL,
        )

    def start(self, *args: str, **extra: str) -> subprocess.Popen[str]:
        """`scriptast ARGS` in the background (interrupted at the test's end if still running)."""
        process = subprocess.Popen(
            [SCRIPTAST, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.environment(**extra),
            stdin=subprocess.DEVNULL,
        )
        self.started.append(process)
        return process

    def stop(self) -> None:
        """Interrupt what `start` started and is still running (it cancels its jobs)."""
        for process in self.started:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
                try:
                    process.communicate(timeout=60)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.communicate()


def record(work_dir: Path) -> dict[str, Any]:
    """work_dir's run.json."""
    loaded: dict[str, Any] = json.loads((work_dir / "run.json").read_text())
    return loaded


def wait_for(
    work_dir: Path, state: str, timeout: float = 60, text: str | None = None
) -> dict[str, Any]:
    """run.json once the job reached `state` (and, if given, its log holds `text`)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (work_dir / "run.json").exists():
            found = record(work_dir)
            log = Path(found["out_log"])
            if found.get("state") == state and (
                text is None or (log.exists() and text in log.read_text())
            ):
                return found
        time.sleep(0.2)
    raise AssertionError(f"{work_dir}: no {state} within {timeout} s")


def interrupt(
    process: subprocess.Popen[str], signum: int = signal.SIGINT, timeout: float = 120
) -> tuple[int, str, str]:
    """Ctrl-C (or another signal) to a running `scriptast run`; its exit code and output."""
    process.send_signal(signum)
    out, err = process.communicate(timeout=timeout)
    return process.returncode, out, err


def slurm_env_for(cluster: Cluster, site: Site) -> None:
    """The site's slurm_env.json, probed from the test cluster."""
    from scriptast.cluster.probe import probe

    previous = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = str(cluster.conf)
    try:
        probed = probe()
    finally:
        if previous is None:
            del os.environ["SLURM_CONF"]
        else:
            os.environ["SLURM_CONF"] = previous
    probed["remote_cwd"] = str(site.home / "scratch")
    site.slurm_env.write_text(json.dumps(probed, indent=2))
