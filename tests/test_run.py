"""`scriptast run`, `watch`, `cancel` and `alloc` on the real loopback Slurm cluster: every
verdict seen on jobs that emit wrote, with stand-ins for the TRT-LLM tools inside the steps."""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from scriptast.executor.log_verdict import HANG_PATTERN
from tests.run_site import BENCH, SCRIPTAST, RunSite, interrupt, record, slurm_env_for, wait_for
from tests.shim_recorder import Shims
from tests.site import Site
from tests.slurm_cluster import Cluster

pytestmark = pytest.mark.slurm

SAY_THROUGHPUT = {"SHIM_BENCH_TPS": "512.3"}
"""trtllm-bench's whole report, upstream's format, with 512.3 tokens/s of output."""
OUTPUT_LINE = "0: Total Output Throughput (tokens/sec):             512.3000"


def state_of(cluster: Cluster, job_id: str) -> str:
    shown = cluster.run("scontrol", "show", "job", "-o", job_id).stdout
    return shown.split("JobState=")[1].split()[0]


def test_a_passing_bench_job_is_passed_with_its_log_streamed(runs: RunSite) -> None:
    work = runs.emit("bench", workflow_type="bench", bench_cmd=f"{BENCH} --tp 2",
                     persistent_mode=False)  # fmt: skip
    done = runs.run("run", str(work), **SAY_THROUGHPUT)
    assert done.returncode == 0, done.stderr
    assert OUTPUT_LINE in done.stdout  # the log, streamed
    assert f"\nPASSED  {work}\n" in done.stdout
    found = record(work)
    assert found["verdict"] == "PASSED" and found["exit_code"] == 0
    # accounting is off on the test cluster: the final state came from squeue's fields
    assert found["final_state_source"] == "squeue"
    assert found["out_log"] == str(work / f"llama_3_1_8b_instruct_bench_{found['job_id']}.out")
    headline = next(f for f in found["figures"] if f.get("headline"))
    assert (headline["name"], headline["value"]) == ("output_throughput", 512.3)


def test_a_bench_log_without_its_output_throughput_is_inconclusive(runs: RunSite) -> None:
    """One line of trtllm-bench's report (tensorrt_llm/bench/dataclasses/reporting.py) is
    read as a figure, but the output throughput a bench run is judged on was never printed:
    INCONCLUSIVE, naming it, though a success pattern matched."""
    work = runs.emit("report", workflow_type="bench", bench_cmd=f"{BENCH} --tp 2",
                     persistent_mode=False)  # fmt: skip
    line = "Request Throughput (req/sec):                     12.3456"
    done = runs.run("run", str(work), SHIM_SAY_TRTLLM_BENCH=line)
    assert done.returncode == 11, done.stderr
    found = record(work)
    assert found["verdict"] == "INCONCLUSIVE" and found["missing"] == ["output_throughput"]
    assert [(f["name"], f["value"]) for f in found["figures"]] == [("request_throughput", 12.3456)]
    assert {hit["pattern"] for hit in found["success_hits"]} == {"Request Throughput (req/sec):"}


def test_a_pytest_job_that_wrote_no_junit_is_inconclusive(runs: RunSite) -> None:
    """pytest said its line and exited 0, but the JUnit report emit asked for is not there:
    the results could not be read, and an exit code alone never passes the job."""
    work = runs.emit("skipped", workflow_type="pytest", persistent_mode=False,
                     test_cmd="pytest -v test_unmarked.py::test_plain")  # fmt: skip
    done = runs.run("run", str(work), SHIM_SAY_PYTEST="1 passed in 0.02s")
    assert done.returncode == 11, done.stderr
    found = record(work)
    assert (found["verdict"], found["exit_code"]) == ("INCONCLUSIVE", 0)
    assert f"could not read {work}/results.xml: No such file or directory" in done.stdout


def test_a_failing_job_is_failed_with_its_exit_code_and_evidence(runs: RunSite) -> None:
    work = runs.emit("failing", workflow_type="bench", bench_cmd=BENCH, persistent_mode=False)
    done = runs.run("run", str(work), SHIM_SAY_TRTLLM_BENCH="RuntimeError: CUDA out of luck",
                    SHIM_EXIT_TRTLLM_BENCH="3")  # fmt: skip
    assert done.returncode == 10, done.stderr
    found = record(work)
    assert (found["verdict"], found["exit_code"]) == ("FAILED", 3)
    assert [h["pattern"] for h in found["failure_hits"]] == ["Error"]
    assert "failure patterns (evidence, not the verdict)" in done.stdout
    assert "Bench finished with exit code 3" in done.stdout


def test_a_job_past_its_time_limit_is_slurms_timeout(runs: RunSite) -> None:
    work = runs.emit("slow", workflow_type="custom", custom_cmd="sleep 600",
                     time_limit="00:01:00", persistent_mode=False)  # fmt: skip
    done = runs.run("run", str(work), "--poll-max", "5")
    assert done.returncode == 15, done.stderr
    found = record(work)
    assert (found["verdict"], found["state"]) == ("TIMEOUT", "TIMEOUT")


def test_a_hang_pattern_cancels_the_job_and_is_hang(runs: RunSite) -> None:
    work = runs.emit("hung", workflow_type="bench", bench_cmd=BENCH, persistent_mode=False)
    line = "[TRT-LLM] [E] Hang detected after 300 seconds."
    done = runs.run("run", str(work), SHIM_SAY_TRTLLM_BENCH=line,
                    SHIM_SLEEP_TRTLLM_BENCH="600")  # fmt: skip
    assert done.returncode == 16, done.stderr
    found = record(work)
    assert found["verdict"] == "HANG" and found["hang_hit"]["pattern"] == HANG_PATTERN
    assert state_of(runs.cluster, found["job_id"]) == "CANCELLED"  # type: ignore[arg-type]


def test_scancel_from_outside_is_cancelled(runs: RunSite) -> None:
    work = runs.emit("outside", workflow_type="custom", custom_cmd="sleep 600",
                     persistent_mode=False)  # fmt: skip
    process = runs.start("run", str(work))
    running = wait_for(work, "RUNNING")
    assert runs.cluster is not None
    runs.cluster.run("scancel", running["job_id"])
    _, err = process.communicate(timeout=120)
    assert process.returncode == 12, err
    assert record(work)["verdict"] == "CANCELLED"


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_cancels_the_job_and_it_leaves_the_queue(
    runs: RunSite, signum: int
) -> None:
    work = runs.emit("ctrl_c", workflow_type="custom", custom_cmd="sleep 600",
                     persistent_mode=False)  # fmt: skip
    process = runs.start("run", str(work))
    running = wait_for(work, "RUNNING")
    code, _, err = interrupt(process, signum)
    assert code == 12, err
    found = record(work)
    name = signal.Signals(signum).name
    assert found["verdict"] == "CANCELLED" and f"interrupted by {name}" in " ".join(found["notes"])
    assert runs.cluster is not None
    queued = runs.cluster.run("squeue", "-h", "-j", running["job_id"], "-o", "%T").stdout
    assert queued.strip() in ("", "CANCELLED")
    assert state_of(runs.cluster, running["job_id"]) == "CANCELLED"


def test_a_torn_set_is_refused_and_force_runs_it(runs: RunSite) -> None:
    work = runs.emit("torn", workflow_type="bench", bench_cmd=BENCH, persistent_mode=False)
    script = work / "llama_3_1_8b_instruct_bench.slurm"
    script.write_text(script.read_text() + "echo edited by hand\n")
    done = runs.run("run", str(work))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"error: {work}: llama_3_1_8b_instruct_bench.slurm (changed since emit): the set emit "
        "wrote was torn or edited; emit it again, or run it as it is with --force"
    ]
    assert not (work / "run.json").exists()
    forced = runs.run("run", str(work), "--force", **SAY_THROUGHPUT)
    assert forced.returncode == 0, forced.stderr


def test_persistent_allocation_runs_two_jobs_then_allocates_anew(runs: RunSite) -> None:
    first = runs.emit("p1", workflow_type="bench", bench_cmd=f"{BENCH} --tp 2")
    second = runs.emit("p2", workflow_type="bench", bench_cmd=f"{BENCH} --tp 2 --pp 1")
    one = runs.run("run", str(first), **SAY_THROUGHPUT)
    two = runs.run("run", str(second), **SAY_THROUGHPUT)
    assert (one.returncode, two.returncode) == (0, 0), one.stderr + two.stderr
    a, b = record(first), record(second)
    assert a["allocation_id"] == b["allocation_id"]
    assert (a["launch"], b["launch"]) == ("step", "step")
    assert a["notes"][0] == f"new persistent allocation {a['allocation_id']}"
    assert b["notes"][0] == f"reused persistent allocation {a['allocation_id']}"
    assert b["notes"][1].startswith(f"persistent allocation {a['allocation_id']} stays: ")
    assert len(b["notes"]) == 3 and b["notes"][2].startswith("stored in the results store ")
    # the steps ran inside the allocation, with its tasks and GPUs
    launched = [r for r in runs.shims.records("trtllm-bench")]
    assert {r["env"]["SLURM_JOB_ID"] for r in launched} == {a["allocation_id"]}
    assert all(r["env"].get("CUDA_VISIBLE_DEVICES") for r in launched)
    wider = runs.emit("p3", workflow_type="bench", bench_cmd=f"{BENCH} --tp 4")
    three = runs.run("run", str(wider), **SAY_THROUGHPUT)
    assert three.returncode == 0, three.stderr
    c = record(wider)
    assert c["allocation_id"] != a["allocation_id"]
    assert (
        f"allocation {a['allocation_id']}: ntasks_per_node 2 != 4, gres gpu:2 != gpu:4"
        in (c["notes"])
    )
    listed = runs.run("alloc", "list", "--json")
    assert {x["job_id"] for x in json.loads(listed.stdout)} == {
        a["allocation_id"],
        c["allocation_id"],
    }
    released = runs.run("alloc", "release", a["allocation_id"])
    assert released.stdout == f"released {a['allocation_id']}\n"


def test_a_hung_step_in_an_allocation_is_cancelled_and_the_allocation_kept(
    runs: RunSite,
) -> None:
    work = runs.emit("p_hang", workflow_type="bench", bench_cmd=BENCH)
    done = runs.run("run", str(work), SHIM_SAY_TRTLLM_BENCH="Hang detected after 9 seconds.",
                    SHIM_SLEEP_TRTLLM_BENCH="600")  # fmt: skip
    assert done.returncode == 16, done.stderr
    allocation = record(work)["allocation_id"]
    assert runs.cluster is not None
    assert state_of(runs.cluster, allocation) == "RUNNING"


def test_many_work_dirs_one_table_and_one_json_list(runs: RunSite) -> None:
    good = runs.emit("m_good", workflow_type="bench", bench_cmd=BENCH, persistent_mode=False)
    bad = runs.emit("m_bad", workflow_type="custom", custom_cmd="exit 4", persistent_mode=False)
    done = runs.run("run", str(good), str(bad), "--json", **SAY_THROUGHPUT)
    assert done.returncode == 10, done.stderr
    results = json.loads(done.stdout)
    assert [(r["work_dir"], r["verdict"]) for r in results] == [
        (str(good), "PASSED"),
        (str(bad), "FAILED"),
    ]
    assert f"[m_good] {OUTPUT_LINE}" in done.stderr  # logs, prefixed, on stderr
    again = runs.run("run", str(good), str(bad), **SAY_THROUGHPUT)
    assert again.stdout.splitlines()[-1] == "1 FAILED, 1 PASSED"


def test_detach_then_watch_and_cancel(runs: RunSite) -> None:
    work = runs.emit("detached", workflow_type="custom", custom_cmd="sleep 600",
                     persistent_mode=False)  # fmt: skip
    detached = runs.run("run", str(work), "--detach")
    assert detached.returncode == 0, detached.stderr
    assert "verdict" not in record(work) and record(work)["launch"] == "batch"
    refused = runs.run("run", str(work))
    assert refused.returncode == 2 and "already has a live run" in refused.stderr
    cancelled = runs.run("cancel", str(work))
    assert cancelled.returncode == 0, cancelled.stderr
    assert record(work)["verdict"] == "CANCELLED"
    watched = runs.run("watch", str(work))
    assert watched.returncode == 12 and watched.stdout.startswith("CANCELLED")


def test_dry_run_runs_nothing(runs: RunSite) -> None:
    work = runs.emit("dry", workflow_type="bench", bench_cmd=BENCH, persistent_mode=False)
    done = runs.run("run", str(work), "--dry-run", PATH="/nonexistent")
    assert done.returncode == 0
    assert done.stdout == f"sbatch --parsable {work}/llama_3_1_8b_instruct_bench.slurm\n"
    assert not (work / "run.json").exists()
    # the dry run is the launcher's own account of what it submits: a run records the same
    ran = runs.run("run", str(work), **SAY_THROUGHPUT)
    assert ran.returncode == 0, ran.stderr
    assert record(work)["submit_command"] == shlex.split(done.stdout)


def test_a_dry_run_in_a_persistent_allocation_names_the_backends_commands(runs: RunSite) -> None:
    work = runs.emit("dry_step", workflow_type="bench", bench_cmd=BENCH, persistent_mode=True)
    done = runs.run("run", str(work), "--dry-run", PATH="/nonexistent")
    assert done.returncode == 0, done.stderr
    find, allocate, step = done.stdout.splitlines()
    assert find == "squeue --noheader --me --name scriptast.persistent"
    assert allocate.startswith("salloc --no-shell --job-name=scriptast.persistent '--comment=")
    assert "--partition=batch" in allocate.split() and "--nodes=1" in allocate.split()
    assert step == f"env 'SLURM_JOB_ID=<allocation>' bash {work}/llama_3_1_8b_instruct_bench.slurm"
    assert not (work / "run.json").exists()


def test_sbatch_refusing_the_script_is_one_line_with_its_words(runs: RunSite) -> None:
    probed = json.loads(runs.site.slurm_env.read_text())
    probed["partitions"].append({**probed["partitions"][0], "name": "ghost"})
    runs.site.slurm_env.write_text(json.dumps(probed))
    work = runs.emit("refused", workflow_type="bench", bench_cmd=BENCH, persistent_mode=False,
                     partition="ghost")  # fmt: skip
    done = runs.run("run", str(work))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"error: sbatch refused {work}/llama_3_1_8b_instruct_bench.slurm: invalid partition "
        "specified: ghost; Batch job submission failed: Invalid partition name specified"
    ]
    assert not (work / "run.json").exists()


def test_sbatchs_own_reason_reaches_the_error_line(runs: RunSite) -> None:
    """sbatch names the option it does not know on its first line and says 'Try sbatch
    --help' last: the reason is what reaches the error line."""
    work = runs.emit("segment", workflow_type="custom", custom_cmd="true", persistent_mode=False)
    script = next(work.glob("*.slurm"))
    lines = script.read_text().splitlines(keepends=True)
    script.write_text(lines[0] + "#SBATCH --segment=1\n" + "".join(lines[1:]))
    done = runs.run("run", "--force", str(work))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"error: sbatch refused {script}: unrecognized option '--segment=1'"
    ], done.stderr


def test_slurm_not_installed_is_one_line(runs: RunSite, tmp_path: Path) -> None:
    work = runs.emit("no_slurm", workflow_type="bench", bench_cmd=BENCH, persistent_mode=False)
    empty = tmp_path / "empty"
    empty.mkdir()
    done = runs.run("run", str(work), PATH=f"{empty}:{Path(SCRIPTAST).parent}")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "error: sbatch is not installed on this machine (is Slurm's client installed and on PATH?)"
    ]
    assert not (work / "run.json").exists()


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    """A folder on a file system that is then mounted read-only (root may write anything
    else)."""
    folder = tmp_path / "ro"
    folder.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(folder)], check=True)
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def test_a_work_dir_that_is_not_writable_is_one_line(runs: RunSite, read_only: Path) -> None:
    work = runs.emit("readonly", workflow_type="bench", bench_cmd=BENCH, persistent_mode=False,
                     work_dir=str(read_only / "job"))  # fmt: skip
    subprocess.run(["mount", "-o", "remount,ro", str(read_only)], check=True)
    done = runs.run("run", str(work))
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"error: work_dir {work} is not writable: run.json cannot be recorded"
    ]


def test_docker_jobs_pass_fail_miss_their_image_and_are_killed_alone(
    site: Site, tmp_path: Path
) -> None:
    shims = Shims(tmp_path / "shims")
    fake = tmp_path / "pkgs" / "tensorrt_llm"  # what the docker payload checks it can import
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    runs = RunSite(site=site, cluster=None, shims=shims, env={"PYTHONPATH": str(fake.parent)})
    fields = {"execution_scenario": "local_docker", "workflow_type": "bench", "bench_cmd": BENCH,
              "partition": None, "account": None, "slurm_env_file": None,
              "env_check": {"gpus_per_node": 8}}  # fmt: skip
    work = runs.emit("docker", **fields)
    passed = runs.run("run", str(work), **SAY_THROUGHPUT)
    assert passed.returncode == 0, passed.stderr
    found = record(work)
    assert found["container_name"] == "llama_3_1_8b_instruct_bench"
    assert found["launch"] == "process"
    assert found["out_log"] == str(work / "llama_3_1_8b_instruct_local.log")
    failed = runs.run("run", str(work), SHIM_EXIT_PIP="7")
    assert failed.returncode == 10 and record(work)["exit_code"] == 7
    image = json.loads((work / "job_spec.json").read_text())["docker_image"]
    missing = runs.run("run", str(work), SHIM_DOCKER_MISSING=image)
    assert missing.returncode == 10 and record(work)["exit_code"] == 125
    assert "pull access denied" in missing.stdout
    # another container of the same image, under another name, must outlive the cancel
    other = subprocess.Popen(
        [str(shims.bin / "docker"), "run", "--name", "neighbour", image, "sleep", "600"],
        env=runs.environment(),
    )
    process = runs.start("run", str(work), SHIM_SLEEP_TRTLLM_BENCH="600")
    try:
        wait_for(work, "RUNNING")
        time.sleep(1)
        code, _, err = interrupt(process)
    finally:
        runs.stop()
    assert code == 12, err
    assert other.poll() is None
    other.kill()
    other.wait()


TOUR_FILES = ("examples", "tests/fixtures", "tests/shims", "tests/slurm", "tests/__init__.py",
              "tests/shim_recorder.py")  # fmt: skip
"""What of the checkout the run tour uses: its requests, the fixture tree, the stand-ins and the
scripts that start the cluster."""


def _listing(folder: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mode)
        for p in sorted(folder.rglob("*"))
    }


def test_readme_run_tour_runs_as_written_and_leaves_nothing_in_the_checkout(
    tmp_path: Path,
) -> None:
    """Every command of the README's run tour, in one shell session as a newcomer types them:
    its own loopback cluster started by tests/slurm/tour.sh and stopped at the end, the output
    each prints, and a checkout left as it was."""
    import re
    import shutil
    import sys

    root = Path(__file__).resolve().parent.parent
    readme = (root / "README.md").read_text()
    block = re.search(r"<!-- run-tour -->\n```console\n(.*?)```", readme, re.S)
    assert block is not None
    steps = re.findall(r"^\$ (.*)\n((?:(?!\$ ).*\n)*)", block.group(1), re.M)
    assert steps[0][0].split()[:3] == ["bash", "tests/slurm/tour.sh", "up"]
    assert steps[-1][0].startswith("bash tests/slurm/tour.sh down")
    checkout = tmp_path / "checkout"
    for item in TOUR_FILES:
        source, target = root / item, checkout / item
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    before = _listing(checkout)
    tour = str(tmp_path / "tour")
    state = tmp_path / "session.sh"
    state.write_text("")
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin:/usr/sbin:/sbin",
        "HOME": str(tmp_path / "home"),
        "PYTHON": sys.executable,
        "LANG": "C.UTF-8",
    }

    def varying(text: str) -> str:
        text = text.replace(tour, "/tmp/scriptast-tour")
        text = re.sub(r"job \d+", "job <id>", text)
        return re.sub(r"elapsed \d+:\d\d:\d\d", "elapsed <time>", text)

    try:
        for command, expected in steps:
            line = command.replace("/tmp/scriptast-tour", tour)
            shown = subprocess.run(
                ["bash", "-c", f". {state}\n{line}\nexport -p > {state}"],
                cwd=checkout, env=env, capture_output=True, text=True, timeout=600,
            )  # fmt: skip
            assert varying(shown.stdout + shown.stderr) == varying(expected), command
    finally:
        subprocess.run(["bash", str(root / "tests/slurm/cluster.sh"), "down", tour],
                       capture_output=True)  # fmt: skip
    assert _listing(checkout) == before


def _accounted(site: Site, accounting_cluster: Cluster, tmp_path: Path) -> RunSite:
    slurm_env_for(accounting_cluster, site)
    shims = Shims(tmp_path / "shims")
    (shims.bin / "srun").unlink()
    (shims.bin / "docker").unlink()
    return RunSite(site=site, cluster=accounting_cluster, shims=shims)


def test_a_timeout_read_from_sacct_is_recorded_as_from_scontrol(
    site: Site, accounting_cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One event, one record: a job Slurm ends at its time limit has the exit code and signal
    from sacct that scontrol's ExitCode gives (sacct's allocation line says 0:0, its batch step
    0:15), and run.json records them when its final state came from sacct."""
    from scriptast.schedulers.slurm.client import SlurmClient, parse_code_signal
    from scriptast.transports.local import LocalTransport

    runs = _accounted(site, accounting_cluster, tmp_path)
    work = runs.emit("acct_limit", workflow_type="custom", custom_cmd="sleep 600",
                     time_limit="00:01:00", persistent_mode=False)  # fmt: skip
    done = runs.run("run", str(work))
    assert done.returncode == 15, done.stderr
    found = record(work)
    assert found["verdict"] == "TIMEOUT"
    job_id = found["job_id"]
    monkeypatch.setenv("SLURM_CONF", str(accounting_cluster.conf))
    client = SlurmClient(LocalTransport())
    deadline = time.monotonic() + 60

    def batch_step_accounted() -> bool:  # its exit is the job's: slurmdbd may record it last
        listed = accounting_cluster.run("sacct", "--noheader", "--parsable2", "--jobs", job_id,
                                        "--format", "JobID").stdout  # fmt: skip
        return f"{job_id}.batch" in listed.split()

    while (
        not batch_step_accounted()
        or (final := client.finals([job_id]).get(job_id)) is None
        or final.source != "sacct"
    ):
        assert time.monotonic() < deadline, "sacct never recorded the job's end"
        time.sleep(1)
    shown = accounting_cluster.run("scontrol", "show", "job", "-o", job_id).stdout
    exit_code = next(w for w in shown.split() if w.startswith("ExitCode="))
    assert final.state == "TIMEOUT"
    assert (final.exit_code, final.signal) == parse_code_signal(exit_code.split("=", 1)[1])
    if found["final_state_source"] == "sacct":
        assert (found["exit_code"], found.get("exit_signal")) == (final.exit_code, final.signal)
    else:  # judged from squeue's TimeLimit reason before the end was accounted
        assert "TimeLimit" in found["final_state_source"]


def test_with_accounting_on_the_end_comes_from_sacct(
    site: Site, accounting_cluster: Cluster, tmp_path: Path
) -> None:
    runs = _accounted(site, accounting_cluster, tmp_path)
    failing = runs.emit("acct_fail", workflow_type="bench", bench_cmd=BENCH, persistent_mode=False)
    done = runs.run("run", str(failing), SHIM_EXIT_TRTLLM_BENCH="3")
    assert done.returncode == 10, done.stderr
    found = record(failing)
    assert (found["verdict"], found["exit_code"], found["final_state_source"]) == (
        "FAILED", 3, "sacct",
    )  # fmt: skip
    passing = runs.emit("acct_pass", workflow_type="bench", bench_cmd=BENCH, persistent_mode=False)
    done = runs.run("run", str(passing), **SAY_THROUGHPUT)
    assert done.returncode == 0, done.stderr
    assert record(passing)["final_state_source"] == "sacct"


def test_a_reader_that_goes_away_does_not_stop_the_judging(runs: RunSite) -> None:
    work = runs.emit("piped", workflow_type="bench", bench_cmd=BENCH, persistent_mode=False)
    done = subprocess.run(
        ["bash", "-c", 'set -o pipefail; "$0" run "$1" | head -c 1', SCRIPTAST, str(work)],
        capture_output=True, text=True, env=runs.environment(**SAY_THROUGHPUT), timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert record(work)["verdict"] == "PASSED"


@pytest.mark.parametrize(
    ("daemon", "said"),
    [
        ("down", "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the "
                 "docker daemon running?: start it (systemctl start docker), then run again"),
        ("denied", "connect: permission denied: add yourself to the docker group (then log in "
                   "again), or use rootless docker, then run again"),
    ],
)  # fmt: skip
def test_a_docker_daemon_down_or_refusing_is_an_error_not_a_failed_job(
    site: Site, tmp_path: Path, daemon: str, said: str
) -> None:
    runs = RunSite(site=site, cluster=None, shims=Shims(tmp_path / "shims"))
    fields = {"execution_scenario": "local_docker", "workflow_type": "custom",
              "custom_cmd": "true", "partition": None, "account": None,
              "slurm_env_file": None, "env_check": {"gpus_per_node": 8}}  # fmt: skip
    work = runs.emit("daemon", **fields)
    done = runs.run("run", str(work), SHIM_DOCKER_DAEMON=daemon)
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert line.startswith("error: docker cannot reach its daemon: ") and line.endswith(said)
    assert not (work / "run.json").exists()
    assert not [r for r in runs.shims.records("docker") if r["argv"][:1] == ["run"]]
