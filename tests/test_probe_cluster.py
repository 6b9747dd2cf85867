"""probe-slurm against real clusters: the loopback Slurm through the loopback sshd (the same
master `run` uses), a controller that does not answer, and a slurm_env.json probed as root
that emit then takes for a remote job."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from scriptast.builders.read_request import build_request
from scriptast.pipeline.emit_job import generate
from tests.cases import CASES
from tests.site import Site
from tests.slurm_cluster import Cluster
from tests.ssh_server import SshServer, sshd
from tests.test_categories import site_fields
from tests.test_cli import console_script

__all__ = ["sshd"]
pytestmark = pytest.mark.slurm


def _probe(*argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [console_script(), "probe-slurm", *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1", **env},
        timeout=300,
    )


def test_a_remote_cluster_is_probed_over_ssh(sshd: SshServer, tmp_path: Path) -> None:
    config = sshd.config(tmp_path / "ssh_config")
    out = tmp_path / "slurm_env.json"
    done = _probe("--ssh-host", "cluster", "--ssh-config", str(config), "-o", str(out))
    assert done.returncode == 0, done.stderr
    env = json.loads(out.read_text(encoding="utf-8"))
    names = [p["name"] for p in env["partitions"]]
    assert names == ["batch", "short"], env
    assert env["user"] == "root" and env["home"] == "/root" and env["remote_cwd"] == "/root"
    assert env["probe"]["slurm_version"].startswith("22.05")
    assert env["pmix"]["available"], env
    assert done.stderr.startswith(f"{out}: 2 partitions (batch, short)")
    assert sshd.accepted() >= 1


def test_a_controller_that_does_not_answer_is_one_line_and_exit_1(
    cluster: Cluster, tmp_path: Path
) -> None:
    dead = tmp_path / "slurm.conf"
    text = cluster.conf.read_text(encoding="utf-8")
    lines = [
        "SlurmctldPort=1" if line.startswith("SlurmctldPort=") else line
        for line in text.splitlines()
    ]
    dead.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "slurm_env.json"
    done = _probe("-o", str(out), SLURM_CONF=str(dead))
    assert done.returncode == 1 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith(
        "error: no Slurm partition could be read (scontrol show partition failed: "
    )
    assert "Unable to contact slurm controller" in done.stderr
    env = json.loads(out.read_text(encoding="utf-8"))
    assert env["partitions"] == [] and env["errors"][0].startswith("scontrol show partition")
    assert env["home"] and env["user"]


def test_a_slurm_env_probed_as_root_serves_a_remote_job(
    sshd: SshServer, site: Site, tmp_path: Path
) -> None:
    """The probe records home /root (and remote_cwd /root, where ssh logs in): emit mounts it,
    where it used to refuse the job for lacking a home."""
    config = sshd.config(tmp_path / "ssh_config")
    done = _probe("--ssh-host", "cluster", "--ssh-config", str(config), "-o", str(site.slurm_env))
    assert done.returncode == 0, done.stderr
    fields = {**CASES["bench_remote_slurm_aarch64"], "partition": "batch", "account": "root"}
    request = build_request(site_fields(site, fields), {})
    output = generate(request, home=str(site.home))
    trail = {e.field: (e.value, e.source) for e in output.job.trail}
    assert trail["home"] == ("/root", "slurm_env.home (recorded by probe-slurm)")
    assert any(m.source == m.target == "/root" for m in output.job.mounts)
