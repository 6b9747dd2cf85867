"""A log line that never ends costs `scriptast run` no more memory than a short one: a docker
job (a process here, its log a file followed as it grows) that prints hundreds of MiB without a
newline is followed with memory flat, a pattern past the kept head of the line still found, and
the record notes the line was cut."""

from __future__ import annotations

from pathlib import Path

from tests.peak_memory import run_measured
from tests.run_site import SCRIPTAST, RunSite, record
from tests.shim_recorder import Shims
from tests.site import Site

LONG = 200 << 20


def _peak(runs: RunSite, work: Path, tmp_path: Path) -> int:
    """`scriptast run WORK`'s peak resident memory in bytes (it must pass)."""
    err_path = tmp_path / f"{work.name}.stderr"
    with open(err_path, "wb") as err:
        done = run_measured([SCRIPTAST, "run", str(work)], env=runs.environment(), stderr=err)
    assert done.returncode == 0, err_path.read_text()
    return done.peak_bytes


def test_a_docker_jobs_endless_line_is_followed_in_flat_memory(site: Site, tmp_path: Path) -> None:
    shims = Shims(tmp_path / "shims")
    fake = tmp_path / "pkgs" / "tensorrt_llm"  # what the docker payload checks it can import
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    runs = RunSite(site=site, cluster=None, shims=shims, env={"PYTHONPATH": str(fake.parent)})

    def job(name: str, size: int) -> Path:
        # custom's failure pattern sits at the end of the long line, so it is found only by a
        # scan that goes on past the kept head of the line
        command = f"head -c {size} /dev/zero | tr '\\0' x; echo ' Traceback'"
        return runs.emit(name, execution_scenario="local_docker", workflow_type="custom",
                         custom_cmd=command, partition=None, account=None, slurm_env_file=None,
                         env_check={"gpus_per_node": 8})  # fmt: skip

    short, long = job("short", 1000), job("long", LONG)
    small, large = _peak(runs, short, tmp_path), _peak(runs, long, tmp_path)
    assert large - small < 32 << 20, (small >> 20, large >> 20)
    found = record(long)
    assert found["verdict"] == "PASSED"
    [hit] = found["failure_hits"]
    assert hit["pattern"] == "Traceback" and hit["line"].endswith("(cut)"), hit["line"][-80:]
    assert any("longer than" in note for note in found["notes"]), found["notes"]
