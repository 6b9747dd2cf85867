"""`verify --slurm-env-file`: each component of a heterogeneous job against the cluster's
partitions, the account against the user's, and every option used against the cluster's Slurm
release (added after it, or dropped before it) by Slurm's own option table."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
SCRIPTAST = str(Path(sys.executable).parent / "scriptast")


def _verify(tmp_path: Path, script: str, release: str = "24.05.4") -> tuple[int, str, str]:
    env = json.loads((ROOT / "examples" / "slurm_env.json").read_text())
    env["probe"]["slurm_version"] = release
    env_file = tmp_path / "slurm_env.json"
    env_file.write_text(json.dumps(env))
    path = tmp_path / "job.sh"
    path.write_text(script)
    done = subprocess.run(
        [SCRIPTAST, "verify", str(path), "--slurm-env-file", str(env_file)],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr.replace(str(path), "job.sh")


def test_each_component_of_a_heterogeneous_job_is_checked(tmp_path: Path) -> None:
    script = (
        "#!/bin/bash\n#SBATCH --partition=batch\n#SBATCH --nodes=1\n#SBATCH hetjob\n"
        "#SBATCH --partition=gpu_large\n#SBATCH --nodes=1\nsrun --het-group=1 hostname\n"
    )
    code, _, err = _verify(tmp_path, script)
    assert code == 1
    assert err.startswith("job.sh:5: partition 'gpu_large' is not in slurm_env.json (known: ")
    assert err.count("\n") == 1
    code, out, _ = _verify(tmp_path, script.replace("gpu_large", "arm"))
    assert (code, out.strip()) == (0, f"{tmp_path / 'job.sh'}: ok")


def test_an_account_the_user_lacks_is_named(tmp_path: Path) -> None:
    script = "#!/bin/bash\n#SBATCH --account=coreai_trtlm\nsrun hostname\n"
    code, _, err = _verify(tmp_path, script)
    assert code == 1
    assert err == (
        "job.sh:2: account 'coreai_trtlm' is not one of the user's accounts in slurm_env.json "
        "(coreai_trtllm, perf_qa) (did you mean 'coreai_trtllm'?)\n"
    )
    assert _verify(tmp_path, script.replace("trtlm", "trtllm"))[0] == 0


@pytest.mark.parametrize(
    ("line", "release", "message"),
    [
        ("#SBATCH --tres-bind=gres/gpu:closest", "22.05.8",
         "job.sh:2: --tres-bind needs a Slurm release after 22.05; the cluster runs 22.05.8"),
        ("#SBATCH --tres-per-task=gres/gpu:1", "22.05.8",
         "job.sh:2: --tres-per-task needs Slurm 23.02 or later; the cluster runs 22.05.8"),
        ("#SBATCH --extra=rack=a", "22.05.8",
         "job.sh:2: --extra needs a Slurm release after 22.05; the cluster runs 22.05.8, whose "
         "sbatch takes it for --extra-node-info"),
        ("#SBATCH --power=level", "24.05.4",
         "job.sh:2: --power is gone from sbatch since Slurm 24.05; the cluster runs 24.05.4"),
    ],
)  # fmt: skip
def test_an_option_the_release_lacks_is_named(
    tmp_path: Path, line: str, release: str, message: str
) -> None:
    code, _, err = _verify(tmp_path, f"#!/bin/bash\n{line}\nsrun hostname\n", release)
    assert (code, err) == (1, f"{message}\n")


def test_options_the_release_has_pass(tmp_path: Path) -> None:
    script = "#!/bin/bash\n#SBATCH --tres-bind=gres/gpu:closest\n#SBATCH --power=level\nsrun x\n"
    assert _verify(tmp_path, script.replace("--power=level\n", "--nodes=1\n"), "23.02.7")[0] == 0
    assert (
        _verify(tmp_path, script.replace("#SBATCH --tres-bind=gres/gpu:closest\n", ""), "23.11.1")[
            0
        ]
        == 0
    )
