"""verify's verdict on an `#SBATCH` line is the real sbatch's, and on an srun line the real
srun's: each is given to Slurm 22.05's `sbatch --test-only` (`srun --test-only`) on the loopback
cluster (with its pyxis stand-in) and to `verify --slurm-env-file` with the slurm_env.json
`probe-slurm` writes for that cluster, plugin options included; the two must agree, on lines
Slurm takes and on lines it refuses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scriptast.cluster.probe import probe
from tests.slurm_cluster import Cluster

pytestmark = pytest.mark.slurm

SCRIPTAST = str(Path(sys.executable).parent / "scriptast")
TAKEN = [
    "#SBATCH --tasks-per-node=1",
    "#SBATCH --mail-typ=END",
    "#SBATCH -t 0:60:0",
    "#SBATCH --time=0-1",
    "#SBATCH --mem 100M",
    "#SBATCH --array=[1-2]%1",
    "#SBATCH --array=0-15:4,20",
    "#SBATCH --begin=now+1hour",
    "#SBATCH --container-image=alpine",
    "#SBATCH --exclusive=user",
    "#SBATCH --nodes=1-2",
    "#SBATCH --gres=gpu:2",
    "#SBATCH -c4 -J 'my job'",
    "#SBATCH --job-name=<name>",
    "#SBATCH --cpus-per-task 2 # two cores",
    "#SBATCH --out=%x-%j.log",
    "#SBATCH --ntasks=+2",
    "#SBATCH --begin=now+10seconds",
    "#SBATCH --begin=now-1hour",
    "#SBATCH --begin=4:00pm",
    "#SBATCH --begin=fika",
    "#SBATCH --begin=2026-12-24T",
    "#SBATCH --begin=12/24/26",
    "#SBATCH --nodes=0",
    "#SBATCH --array=1,,2",
    "#SBATCH --array=0-9%",
    "#SBATCH --mem=1GB",
    "#SBATCH --gres=gpu:0",
    "#SBATCH --gres=gpu",
    "#SBATCH --gres=gpu:2,gpu:1",
]
REFUSED = [
    "#SBATCH --mail=ALL",
    "#SBATCH --mem 1 GB",
    "#SBATCH --time=2:00:00:00",
    "#SBATCH --array=9-0",
    "#SBATCH --nodes=NODES",
    "#SBATCH -N {nodes}",
    "#SBATCH --requeue=1",
    "#SBATCH --workdir=/tmp",
    "#SBATCH --image=docker:ubuntu",
    "#SBATCH --ntasks=two",
    "#SBATCH --begin=now+XXXhour",
    "#SBATCH --partition=NOPE",
    "#SBATCH --gres=gpu:16",
    "#SBATCH --gres=gpus:4",
    "#SBATCH --gres=gpu=4",
    "#SBATCH --gres=gpu:four",
    "#SBATCH --gres=GPU:2",
    "#SBATCH --gres=gpu:4x",
    "#SBATCH --gres=gpu:tesla:",
    "#SBATCH --gres=gpu::2",
    "#SBATCH --gres=gpu:2,",
    "#SBATCH --gres=gres/gpu:2",
    "#SBATCH --gres=gpu:tesla:2",
    "#SBATCH --gres=gpu:4:2",
    "#SBATCH --gres=gpu:2,nic:1",
    "#SBATCH --tres-per-task=gres/gpu:1",
    "#SBATCH -partition=batch",
    "#SBATCH --mem=4.5G",
    "#SBATCH --time=1-0",
    "#SBATCH --time=5-",
    "#SBATCH --ntasks=0",
    "#SBATCH --cpus-per-task=0",
    "#SBATCH --begin=now+1h",
    "#SBATCH --begin=4pm",
    "#SBATCH --begin=elevenses",
    "#SBATCH --begin=2026-12-24T10",
    "#SBATCH --begin=12/24/2026",
    "#SBATCH --begin=25:00",
    "#SBATCH --nodes=2-1",
    "#SBATCH --array=3-1",
    "#SBATCH --array=1-3:0",
]


@pytest.fixture(scope="module")
def probed(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Path:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SLURM_CONF", str(cluster.conf))
        env = probe()
    assert {"name": "container-image", "arg": "required"} in env["plugin_options"]
    path = tmp_path_factory.mktemp("probed") / "slurm_env.json"
    path.write_text(json.dumps(env))
    return path


def _verify(script: Path, slurm_env: Path) -> subprocess.CompletedProcess[str]:
    argv = [SCRIPTAST, "verify", str(script), "--slurm-env-file", str(slurm_env)]
    return subprocess.run(argv, capture_output=True, text=True, check=False)


@pytest.mark.parametrize(
    ("line", "taken"), [(line, True) for line in TAKEN] + [(line, False) for line in REFUSED]
)
def test_verify_and_sbatch_agree(
    cluster: Cluster, probed: Path, tmp_path: Path, line: str, taken: bool
) -> None:
    script = tmp_path / "job.sh"
    script.write_text(f"#!/bin/bash\n{line}\nhostname\n")
    sbatch = cluster.run("sbatch", "--test-only", str(script))
    assert (sbatch.returncode == 0) == taken, sbatch.stderr
    verified = _verify(script, probed)
    assert (verified.returncode == 0) == taken, (verified.stderr, sbatch.stderr)
    assert "note:" not in verified.stderr  # the cluster's plugins are known: no maybe


SRUN_TAKEN = [
    "--wait=30", "--whole", "--cpu_bind=cores", "--tasks-per-node 4", "--overlap", "--pty",
    "-K", "--kill-on-bad-exit=1", "-l -u", "--container-image=alpine --container-mounts=./d:/d",
    "-N1 -n2", "--exclusive", "--mpi=pmi2", "--gres=gpu:2",
]  # fmt: skip
SRUN_REFUSED = ["--tim=5", "--nodes=a-b", "-pmix", "--ntasks=0", "--whole=1", "--image=x",
                "--gres=gpus:4", "--gres=gpu=4", "--gres=gpu:four"]  # fmt: skip


@pytest.mark.parametrize(
    ("options", "taken"),
    [(o, True) for o in SRUN_TAKEN] + [(o, False) for o in SRUN_REFUSED],
)
def test_verify_and_srun_agree(
    cluster: Cluster, probed: Path, tmp_path: Path, options: str, taken: bool
) -> None:
    """The same for an srun line, against `srun --test-only` (options read, no step run)."""
    done = cluster.run("srun", "--test-only", *options.split(), "hostname")
    assert (done.returncode == 0) == taken, done.stderr
    script = tmp_path / "job.sh"
    script.write_text(f"#!/bin/bash\n#SBATCH --nodes=1\nsrun {options} hostname\n")
    verified = _verify(script, probed)
    assert (verified.returncode == 0) == taken, (verified.stderr, done.stderr)
