"""Emit never changes the user's repository: every example of the guide, written or refused,
leaves the TensorRT-LLM checkout's `git status --porcelain` and its files' modes as they were."""

from __future__ import annotations

import json
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from tests.test_cli import console_script

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p.name for p in (ROOT / "examples").glob("*_*_*.json"))


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def _modes(repo: Path) -> dict[str, int]:
    return {
        str(p.relative_to(repo)): stat.S_IMODE(p.lstat().st_mode)
        for p in sorted(repo.rglob("*"))
        if ".git" not in p.relative_to(repo).parts
    }


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """The guide's layout: examples/ and the fixture checkout, made a git repository with the
    modes the upstream repository keeps (slurm_run.sh and slurm_install.sh at 644)."""
    site = tmp_path
    shutil.copytree(ROOT / "examples", site / "examples")
    shutil.copytree(ROOT / "tests/fixtures", site / "tests/fixtures")
    repo = site / "tests/fixtures/trtllm"
    for name in ("slurm_run.sh", "slurm_install.sh"):
        (repo / "jenkins/scripts/perf/local" / name).chmod(0o644)
    _git(repo, "init", "-q")
    _git(repo, "config", "core.fileMode", "true")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "checkout")
    return site


def _emit(site: Path, request: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [console_script(), "emit", "--request", request, "--json"],
        cwd=site,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(site)},
    )


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_guide_example_leaves_the_repository_as_it_was(site: Path, example: str) -> None:
    repo = site / "tests/fixtures/trtllm"
    before, modes = _git(repo, "status", "--porcelain"), _modes(repo)
    done = _emit(site, f"examples/{example}")
    assert done.returncode == 0, done.stderr
    assert _git(repo, "status", "--porcelain") == before
    assert _modes(repo) == modes


def test_a_refused_perf_sanity_emit_leaves_the_repository_as_it_was(site: Path) -> None:
    """Refused after submit.py ran: the cluster runs Slurm 23.11, where the `--segment` its
    launch script asks for needs block topology scriptast cannot see."""
    repo = site / "tests/fixtures/trtllm"
    env = json.loads((site / "examples/slurm_env.json").read_text(encoding="utf-8"))
    env["probe"]["slurm_version"] = "23.11.1"
    (site / "refused_env.json").write_text(json.dumps(env), encoding="utf-8")
    request = json.loads((site / "examples/perf_sanity_local_slurm.json").read_text("utf-8"))
    request.update(slurm_env_file="refused_env.json", work_dir="out/refused")
    (site / "refused.json").write_text(json.dumps(request), encoding="utf-8")
    before, modes = _git(repo, "status", "--porcelain"), _modes(repo)
    done = _emit(site, "refused.json")
    assert done.returncode == 1 and "--segment" in done.stderr, done.stderr
    assert _git(repo, "status", "--porcelain") == before
    assert _modes(repo) == modes
    assert not (site / "out/refused").exists()


def test_the_launch_script_runs_copies_of_the_checkout_scripts(site: Path) -> None:
    """The copies submit.py marks executable are the work dir's, written with job_spec.json."""
    done = _emit(site, "examples/perf_sanity_local_slurm.json")
    assert done.returncode == 0, done.stderr
    work = site / "out/perf_sanity_local_slurm"
    launch = (work / "slurm_launch.sh").read_text(encoding="utf-8")
    assert f"export runScript='{work}/slurm_run.sh'" in launch
    assert f"export installScript='{work}/slurm_install.sh'" in launch
    for name in ("slurm_run.sh", "slurm_install.sh"):
        copy = work / name
        original = site / "tests/fixtures/trtllm/jenkins/scripts/perf/local" / name
        assert copy.read_bytes() == original.read_bytes()
        assert copy.stat().st_mode & stat.S_IXUSR
    spec = json.loads((work / "job_spec.json").read_text(encoding="utf-8"))
    assert {f"{work}/slurm_run.sh", f"{work}/slurm_install.sh"} <= set(json.dumps(spec).split('"'))
