"""The sbatch/srun option lists against real Slurm binaries: every option scriptast takes as
Slurm 22.05's is accepted by 22.05's sbatch and srun (this machine's), and every option recorded
as added later is refused by them; `verify` reads a script for a newer cluster without false
errors, and names an option the cluster's release predates."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from scriptast.cli.app import app
from scriptast.model.slurm_options import (
    ADDED_LATER,
    BASE_RELEASE,
    PYXIS_OPTIONS,
    SBATCH_OPTIONS,
    SRUN_OPTIONS,
    release_key,
)
from scriptast.readers.linter.slurm_cli import CliOption, table

pytestmark = pytest.mark.slurm


def _release(program: str, env: dict[str, str]) -> str:
    out = subprocess.run([program, "--version"], capture_output=True, text=True, env=env).stdout
    return out.split()[-1]


@pytest.fixture
def slurm_conf(tmp_path: Path) -> dict[str, str]:
    if shutil.which("sbatch") is None:
        pytest.fail("sbatch is not installed: run tests/slurm/cluster.sh install-deps")
    conf = tmp_path / "slurm.conf"
    conf.write_text(
        "ClusterName=options\nSlurmctldHost=localhost\nNodeName=n1 CPUs=1\nPartitionName=p Nodes=n1\n"
    )
    return {"SLURM_CONF": str(conf), "PATH": "/usr/bin:/bin"}


def _unrecognized(program: str, option: str, env: dict[str, str]) -> bool:
    # options are parsed in order, so --help after the option answers without a controller
    result = subprocess.run(
        [program, f"--{option}=1", "--help"], capture_output=True, text=True, env=env, timeout=30
    )
    return "unrecognized option" in result.stderr


def test_the_binaries_here_are_the_base_release(slurm_conf: dict[str, str]) -> None:
    for program in ("sbatch", "srun"):
        assert release_key(_release(program, slurm_conf))[:2] == release_key(BASE_RELEASE)


@pytest.mark.parametrize(
    ("program", "options"), [("sbatch", SBATCH_OPTIONS), ("srun", SRUN_OPTIONS)]
)
def test_base_options_are_accepted(
    program: str, options: frozenset[str], slurm_conf: dict[str, str]
) -> None:
    refused = [o for o in sorted(options - PYXIS_OPTIONS) if _unrecognized(program, o, slurm_conf)]
    assert refused == []


@pytest.mark.parametrize("program", ["sbatch", "srun"])
def test_later_options_are_refused_by_the_base_release(
    program: str, slurm_conf: dict[str, str]
) -> None:
    accepted = [o for o in sorted(ADDED_LATER) if not _unrecognized(program, o, slurm_conf)]
    assert accepted == []
    assert all(release_key(r) > release_key(BASE_RELEASE) for r in ADDED_LATER.values())


LAUNCH = """#!/bin/bash
#SBATCH --nodes=2
#SBATCH --segment=2
#SBATCH --ntasks=8
#SBATCH --partition=batch
export x=1
srunArgs=(
  "--container-name=aggr_test-1"
)
world_size=$((totalNodes * 4))
if [[ -n "${x}" ]]; then
    srun "${srunArgs[@]}" --mpi=pmix --ntasks="$world_size" bash -c true
fi
"""


def test_verify_reads_a_script_for_a_newer_cluster(tmp_path: Path) -> None:
    script = tmp_path / "slurm_launch.sh"
    script.write_text(LAUNCH)
    result = CliRunner().invoke(app, ["verify", str(script)])
    assert result.exit_code == 0, result.output
    assert "not an sbatch option" not in result.output and "does not parse" not in result.output


def test_verify_names_an_option_the_cluster_predates(tmp_path: Path) -> None:
    script = tmp_path / "slurm_launch.sh"
    script.write_text(LAUNCH.replace("srunArgs=(\n", "srun_args=(\n").split("srun_args")[0])
    env = json.loads((Path(__file__).parent.parent / "examples/slurm_env.json").read_text())
    env["probe"]["slurm_version"] = "23.11.4"
    env_file = tmp_path / "slurm_env.json"
    env_file.write_text(json.dumps(env))
    result = CliRunner().invoke(app, ["verify", str(script), "--slurm-env-file", str(env_file)])
    assert result.exit_code == 1
    assert "--segment needs Slurm 24.05 or later; the cluster runs 23.11.4" in result.output
    env["probe"]["slurm_version"] = "24.05.1"
    env_file.write_text(json.dumps(env))
    newer = CliRunner().invoke(app, ["verify", str(script), "--slurm-env-file", str(env_file)])
    assert newer.exit_code == 0, newer.output


def _table_options(program: str) -> list[CliOption]:
    return [o for o in table(program).longs if o.plugin is None]


@pytest.mark.parametrize("program", ["sbatch", "srun"])
def test_the_option_table_is_the_base_releases(program: str, slurm_conf: dict[str, str]) -> None:
    """slurm_cli_options.json against 22.05's own getopt: every option the table gives the base
    release is known to it, every option marked as added later is not (unless it is the start
    of an older one's name, which 22.05 takes it for: `--extra` is its `--extra-node-info`)."""
    options = _table_options(program)
    base = [o.name for o in options if o.since is None]
    later = [o.name for o in options if o.since is not None]
    assert len(base) > 100 and later
    assert [name for name in base if _unrecognized(program, name, slurm_conf)] == []
    taken = [name for name in later if not _unrecognized(program, name, slurm_conf)]
    assert taken == [name for name in later if any(b.startswith(name) for b in base)]


@pytest.mark.parametrize("program", ["sbatch", "srun"])
def test_the_tables_arguments_are_getopts(program: str, slurm_conf: dict[str, str]) -> None:
    """An option the table says takes no value is refused one; one that needs a value is
    refused without it, as 22.05's getopt_long says."""
    wrong = []
    for option in _table_options(program):
        if option.since is not None or option.name in ("help", "usage", "version"):
            continue
        if option.arg == "no":
            argv = [program, f"--{option.name}=1", "--help"]
            said = "doesn't allow an argument"
        elif option.arg == "required":
            argv = [program, f"--{option.name}"]
            said = "requires an argument"
        else:
            continue
        done = subprocess.run(argv, capture_output=True, text=True, env=slurm_conf, timeout=30)
        if said not in done.stderr:
            wrong.append((option.name, option.arg, done.stderr.strip()[:80]))
    assert wrong == []


def test_the_model_and_the_table_agree_on_later_options() -> None:
    """The emitter's ADDED_LATER and the table's `since` name the same releases."""
    for program in ("sbatch", "srun"):
        named = {o.name: o.since for o in _table_options(program)}
        for option, release in ADDED_LATER.items():
            assert named[option] == release, (program, option)


def test_the_emitters_option_lists_are_within_slurms_table() -> None:
    """What the model lets a script say is what Slurm's table has (the emitter's own lists
    never drift from slurm_opt.c)."""
    for program, names in (("sbatch", SBATCH_OPTIONS), ("srun", SRUN_OPTIONS)):
        known = {o.name for o in table(program).longs}
        assert sorted(names - known) == [], program
