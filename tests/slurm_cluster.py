"""The real-Slurm test cluster: found (started by .ci/run) or started for the session."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

CLUSTER_SH = Path(__file__).resolve().parent / "slurm" / "cluster.sh"
FINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED"}


@dataclass(frozen=True)
class Cluster:
    """A running cluster: its slurm.conf and the pyxis stand-in's log."""

    conf: Path

    @property
    def root(self) -> Path:
        return self.conf.parent.parent

    @property
    def pyxis_log(self) -> Path:
        return self.root / "pyxis.jsonl"

    def env(self, **extra: str) -> dict[str, str]:
        return {**os.environ, "SLURM_CONF": str(self.conf), **extra}

    def run(
        self, *argv: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(argv), capture_output=True, text=True, env=env or self.env(), timeout=120
        )

    def wait(self, job_id: str, timeout: float = 120) -> dict[str, str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            shown = self.run("scontrol", "show", "job", job_id, "-o")
            fields = dict(re.findall(r"(\w+)=(\S*)", shown.stdout))
            if fields.get("JobState") in FINAL:
                return fields
            time.sleep(0.3)
        raise AssertionError(f"job {job_id} did not finish within {timeout} s")


def _start(folder: Path, *options: str) -> Cluster:
    # The daemons outlive cluster.sh; a pipe they inherit would never reach EOF, so use a file.
    transcript = folder / "cluster-up.log"
    with transcript.open("w") as out:
        code = subprocess.run(
            ["bash", str(CLUSTER_SH), "up", str(folder), *options],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            timeout=180,
        ).returncode
    text = transcript.read_text()
    if code != 0:
        raise AssertionError(f"cluster.sh up failed:\n{text}")
    return Cluster(Path(text.strip().splitlines()[-1]))


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    given = os.environ.get("SCRIPTAST_SLURM_CONF")
    if given and Path(given).is_file():
        yield Cluster(Path(given))
        return
    have_slurm = all(
        shutil.which(tool) for tool in ("slurmctld", "slurmd", "sbatch", "munged", "gcc")
    )
    if not have_slurm or os.geteuid() != 0:
        message = (
            "Slurm (slurmctld, slurmd, munge, gcc) and root are needed for the real-Slurm tests"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message}; .ci/run installs and starts them")
        pytest.skip(message)
    folder = _shared_folder("slurm")
    started = _start(folder)
    try:
        yield started
    finally:
        _stop(folder)


@pytest.fixture(scope="session")
def accounting_cluster(
    tmp_path_factory: pytest.TempPathFactory, cluster: Cluster
) -> Iterator[Cluster]:
    """A second cluster with accounting on (MariaDB and slurmdbd), for the sacct path."""
    have = all(shutil.which(tool) for tool in ("slurmdbd", "mariadbd", "sacctmgr"))
    if not have:
        message = "slurmdbd and MariaDB are needed for the accounting tests"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message}; .ci/run installs them")
        pytest.skip(message)
    folder = _shared_folder("slurm-accounting")
    started = _start(folder, "accounting")
    try:
        yield started
    finally:
        _stop(folder)


def _shared_folder(kind: str) -> Path:
    """A cluster's folder of its own under /tmp, open to every user (as .ci/run's is): a job
    that runs as another user (`--uid=nobody`) reads its script from slurmd's spool there,
    which pytest's own folder (0700) would keep from it."""
    folder = Path(tempfile.mkdtemp(prefix=f"scriptast-test-{kind}-"))
    folder.chmod(0o755)
    return folder


def _stop(folder: Path) -> None:
    subprocess.run(["bash", str(CLUSTER_SH), "down", str(folder)], capture_output=True,
                   timeout=60)  # fmt: skip
    shutil.rmtree(folder, ignore_errors=True)
