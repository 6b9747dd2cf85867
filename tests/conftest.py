"""Shared test set-up: hypothesis profiles and the fixture site."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import tests.profiles  # noqa: F401  (registers and loads the hypothesis profile)
from tests.postgres_server import postgres
from tests.run_site import RunSite, slurm_env_for
from tests.shim_recorder import Shims
from tests.site import Site, lay_out
from tests.slurm_cluster import Cluster, accounting_cluster, cluster

__all__ = ["accounting_cluster", "cluster", "postgres", "runs", "site"]

# scriptast runs the repository's submit.py with `python3` from PATH, as an engineer's shell
# would; in the tests that is the test interpreter (it has PyYAML, which submit.py imports),
# not whatever python3 a fresh machine happens to have first on PATH.
os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")


@pytest.fixture(autouse=True)
def results_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test's own results store (never the user's): what `run` stores goes there."""
    path = tmp_path / "results.db"
    monkeypatch.setenv("SCRIPTAST_RESULTS", str(path))
    return path


@pytest.fixture
def shims(tmp_path: Path) -> Shims:
    """Recorders for the programs a generated script runs (see tests.shim_recorder)."""
    return Shims(tmp_path / "shims")


@pytest.fixture
def site(tmp_path: Path) -> Site:
    """A fresh site under pytest's temporary directory."""
    return lay_out(tmp_path / "site")


@pytest.fixture
def runs(site: Site, cluster: Cluster, tmp_path: Path) -> Iterator[RunSite]:
    """Jobs for the loopback cluster, run with the real srun (and the pyxis stand-in), the
    TRT-LLM tools stood in for inside the steps."""
    slurm_env_for(cluster, site)
    shims = Shims(tmp_path / "shims")
    (shims.bin / "srun").unlink()  # the real srun, with the pyxis stand-in
    (shims.bin / "docker").unlink()
    made = RunSite(site=site, cluster=cluster, shims=shims)
    yield made
    made.stop()
    cluster.run("scancel", "--name", "scriptast.persistent")
