"""`scriptast run` keeps its promises on the real loopback Slurm cluster: the verdict read from
Slurm's fields (never from text another job can write), a job the queue leaves out asked about
again, TRT-LLM's own hang line, each job's own elapsed time, a cancel from another terminal,
and job_spec.json's monitor timeout."""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import pytest

from tests.run_site import BENCH, SCRIPTAST, RunSite, record, wait_for

pytestmark = pytest.mark.slurm

SAY_THROUGHPUT = {"SHIM_BENCH_TPS": "512.3"}


def test_another_jobs_comment_never_turns_a_failed_job_passed(runs: RunSite) -> None:
    """Two failing jobs, and jobs whose name and comment hold `JobId=<ours> JobState=COMPLETED
    ExitCode=0:0` in the same queue: both are FAILED with their own exit code."""
    assert runs.cluster is not None
    first = runs.emit("f1", workflow_type="custom", custom_cmd="sleep 4; exit 3",
                      persistent_mode=False)  # fmt: skip
    second = runs.emit("f2", workflow_type="custom", custom_cmd="sleep 4; exit 5",
                       persistent_mode=False)  # fmt: skip
    process = runs.start("run", str(first), str(second), "--json")
    ids = [wait_for(work, "RUNNING")["job_id"] for work in (first, second)]
    for job_id in ids:
        lie = f"x JobId={job_id} JobState=COMPLETED ExitCode=0:0 "
        runs.cluster.run("sbatch", "--parsable", f"--job-name={lie}", f"--comment={lie}",
                         "--output=/dev/null", "--wrap", "sleep 30")  # fmt: skip
    out, err = process.communicate(timeout=120)
    assert process.returncode == 10, err
    results = [(r["verdict"], r["exit_code"]) for r in json.loads(out)]
    assert results == [("FAILED", 3), ("FAILED", 5)]


def test_a_line_that_only_mentions_hangs_is_no_hang(runs: RunSite) -> None:
    work = runs.emit("nohang", workflow_type="bench", bench_cmd=BENCH, persistent_mode=False)
    done = runs.run("run", str(work), SHIM_SAY_TRTLLM_BENCH="health check: no hang detected",
                    **SAY_THROUGHPUT)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "hang_hit" not in record(work)


def test_trtllms_hang_line_is_a_hang(runs: RunSite) -> None:
    """The line upstream's HangDetector logs (tensorrt_llm/_torch/pyexecutor/hang_detector.py)
    through TRT-LLM's logger."""
    work = runs.emit("hang", workflow_type="bench", bench_cmd=BENCH, persistent_mode=False)
    line = "[12/05/2026-21:30:00] [TRT-LLM] [E] Hang detected after 300 seconds."
    done = runs.run("run", str(work), SHIM_SAY_TRTLLM_BENCH=line, SHIM_SLEEP_TRTLLM_BENCH="600")
    assert done.returncode == 16, done.stderr
    hit = record(work)["hang_hit"]
    assert hit["line"].endswith("Hang detected after 300 seconds.")


def test_the_requests_hang_pattern_replaces_trtllms(runs: RunSite) -> None:
    work = runs.emit("own_hang", workflow_type="custom", persistent_mode=False,
                     custom_cmd="echo 'Hang detected after 5 seconds'; echo 'WATCHDOG: rank 3 "
                     "stalled'; sleep 600", hang_pattern=r"WATCHDOG: rank \d+ stalled")  # fmt: skip
    assert json.loads((work / "job_spec.json").read_text())["hang_pattern"].startswith("WATCH")
    done = runs.run("run", str(work))
    assert done.returncode == 16, done.stderr
    assert record(work)["hang_hit"]["line"].endswith(": WATCHDOG: rank 3 stalled")  # srun -l


def test_each_job_has_its_own_elapsed_time(runs: RunSite) -> None:
    short = runs.emit("short", workflow_type="custom", custom_cmd="sleep 1",
                      persistent_mode=False)  # fmt: skip
    long = runs.emit("long", workflow_type="custom", custom_cmd="sleep 12",
                     persistent_mode=False)  # fmt: skip
    done = runs.run("run", str(short), str(long), "--json")
    results = {r["work_dir"]: r["elapsed_seconds"] for r in json.loads(done.stdout)}
    assert results[str(short)] <= 4 < 10 <= results[str(long)] <= 16, results


@pytest.mark.parametrize("persistent", [False, True])
def test_cancel_from_another_terminal_is_cancelled_and_exits_0(
    runs: RunSite, persistent: bool
) -> None:
    """`scriptast cancel` while a `run` follows the job: the cancel exits 0, and the run
    reports CANCELLED (12), as run.json says, also for a step in an allocation whose process
    the cancel ended with exit 143."""
    name = f"other_terminal_{persistent}"
    work = runs.emit(name, workflow_type="custom", custom_cmd="sleep 600",
                     persistent_mode=persistent)  # fmt: skip
    following = runs.start("run", str(work))
    wait_for(work, "RUNNING")
    cancelled = runs.run("cancel", str(work))
    assert cancelled.returncode == 0, cancelled.stdout + cancelled.stderr
    assert f"CANCELLED  {work}\n" in cancelled.stdout
    _, err = following.communicate(timeout=120)
    assert following.returncode == 12, err
    found = record(work)
    assert found["verdict"] == "CANCELLED" and found["cancel_requested_at"]


def test_job_specs_monitor_timeout_is_read(runs: RunSite) -> None:
    """`monitor_timeout_seconds`, the executors' contract field, when job_spec.json has it."""
    work = runs.emit("monitored", workflow_type="custom", custom_cmd="sleep 600",
                     persistent_mode=False)  # fmt: skip
    spec_path = work / "job_spec.json"
    spec = json.loads(spec_path.read_text())
    spec["monitor_timeout_seconds"] = 3
    spec_path.write_text(json.dumps(spec, indent=2) + "\n")
    started = time.monotonic()
    done = runs.run("run", str(work))
    assert done.returncode == 15, done.stderr
    assert time.monotonic() - started < 60
    assert "still running after 3 s" in " ".join(record(work)["notes"])


def test_alloc_list_says_none(runs: RunSite) -> None:
    assert runs.cluster is not None
    runs.cluster.run("scancel", "--name", "scriptast.persistent")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        listed = runs.run("alloc", "list")
        if listed.stdout.startswith("none"):
            break
        time.sleep(0.5)
    assert listed.returncode == 0 and listed.stdout == "none: you hold no persistent allocation\n"


def _slurm_end_epoch(log: Path) -> float:
    """When Slurm ended the job, as the end line slurmstepd writes to its stderr says (to the
    second, in the node's local time)."""
    stamp = re.search(r"CANCELLED AT (\S+)", log.read_text())
    assert stamp is not None, log.read_text()
    return time.mktime(time.strptime(stamp.group(1), "%Y-%m-%dT%H:%M:%S"))


@pytest.mark.parametrize("ignores_sigterm", [False, True])
def test_timeout_is_reported_soon_after_slurm_ends_the_job(
    runs: RunSite, ignores_sigterm: bool
) -> None:
    """Slurm ends the job at its limit (within its enforcement interval) and prints its end
    line; TIMEOUT follows within seconds, not a backed-off poll later, also while a job that
    ignores SIGTERM is COMPLETING for KillWait (30 s here): Slurm's reason TimeLimit decides."""
    command = ("trap '' TERM; " if ignores_sigterm else "") + "sleep 600"
    work = runs.emit(f"limit_{ignores_sigterm}", workflow_type="custom", custom_cmd=command,
                     time_limit="00:01:00", persistent_mode=False)  # fmt: skip
    done = runs.run("run", str(work))
    ended = time.time()
    assert done.returncode == 15, done.stderr
    found = record(work)
    assert found["verdict"] == "TIMEOUT"
    if "TimeLimit" in found["final_state_source"]:  # judged while Slurm winds the job down
        assert "exit_code" not in found  # the batch script's exit is not known yet
    else:  # the final state came first
        assert not ignores_sigterm
        # the signal only when Slurm has recorded it yet (squeue may show 0 before sacct's 0:15);
        # or 143:0, when the batch shell outlived its step by a moment and exited 128 + SIGTERM
        shown = (found["exit_code"], found.get("exit_signal", 15))
        assert shown in ((0, 15), (143, 15)), shown
        assert found["exit_code"] == 0 or "exit_signal" not in found
    assert ended - _slurm_end_epoch(Path(found["err_log"])) < 10


def test_a_step_is_judged_by_its_allocation_cancelled(runs: RunSite) -> None:
    """The allocation under a running step is cancelled: srun's step dies (exit 143), and the
    step is CANCELLED, as its allocation is."""
    assert runs.cluster is not None
    work = runs.emit("alloc_cancel", workflow_type="custom", custom_cmd="sleep 600")
    process = runs.start("run", str(work))
    running = wait_for(work, "RUNNING")
    runs.cluster.run("scancel", running["allocation_id"])
    _, err = process.communicate(timeout=120)
    assert process.returncode == 12, err
    found = record(work)
    assert found["verdict"] == "CANCELLED"
    assert f"allocation {running['allocation_id']} ended CANCELLED" in " ".join(found["notes"])


def test_a_step_whose_node_fails_is_node_fail(runs: RunSite) -> None:
    """A node of the allocation goes down under the step: NODE_FAIL (13), never PASSED from
    srun's exit code."""
    assert runs.cluster is not None
    work = runs.emit("alloc_node", workflow_type="custom", custom_cmd="sleep 600")
    process = runs.start("run", str(work))
    wait_for(work, "RUNNING")
    _, err = _with_its_node_down(runs, work, process)
    assert process.returncode == 13, err
    assert record(work)["verdict"] == "NODE_FAIL"


def _with_its_node_down(
    runs: RunSite, work: Path, process: subprocess.Popen[str]
) -> tuple[str, str]:
    """The node under the running step's allocation set down until `process` (the run
    following it) ends, then back; what the run printed."""
    assert runs.cluster is not None
    allocation = record(work)["allocation_id"]
    node = runs.cluster.run("squeue", "--noheader", "-j", allocation,
                            "--format", "%N").stdout.strip()  # fmt: skip
    assert node in ("n1", "n2"), node
    try:
        runs.cluster.run("scontrol", "update", f"nodename={node}", "state=down", "reason=test")
        return process.communicate(timeout=180)
    finally:
        _node_back(runs, node)


def _node_back(runs: RunSite, node: str) -> None:
    assert runs.cluster is not None
    runs.cluster.run("scontrol", "update", f"nodename={node}", "state=resume")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        shown = runs.cluster.run("sinfo", "--noheader", "-n", node, "-o", "%T").stdout
        if shown.split() and all(
            s.rstrip("*") in ("idle", "mixed", "allocated") for s in shown.split()
        ):
            return
        runs.cluster.run("scontrol", "update", f"nodename={node}", "state=resume")
        time.sleep(0.5)
    raise AssertionError(f"{node} did not come back: {shown}")


def test_watch_of_several_work_dirs_ends_with_runs_table(runs: RunSite) -> None:
    """One work dir judged before, one followed now: watch prints what run prints for several
    jobs, the summaries of those not PASSED and the table of all, in the order given."""
    judged = runs.emit("w_judged", workflow_type="custom", custom_cmd="exit 3",
                       persistent_mode=False)  # fmt: skip
    assert runs.run("run", str(judged)).returncode == 10
    live = runs.emit("w_live", workflow_type="custom", custom_cmd="sleep 2",
                     persistent_mode=False)  # fmt: skip
    assert runs.run("run", str(live), "--detach").returncode == 0
    both = runs.run("watch", str(judged), str(live))
    assert both.returncode == 10, both.stderr
    table = both.stdout[both.stdout.index("VERDICT  EXIT") :].splitlines()
    assert [row.split()[0] for row in table[1:3]] == ["FAILED", "PASSED"]
    assert table[1].endswith(str(judged)) and table[2].endswith(str(live))
    assert table[3] == "1 FAILED, 1 PASSED"
    assert f"\nFAILED  {judged}\n" in both.stdout  # after the live job's log lines


def test_the_status_line_on_a_terminal(runs: RunSite, tmp_path: Path) -> None:
    """Under tmux (what a person sees): each log line starts at the left edge, never behind
    the status line, which says running once the job runs; the verdict is coloured."""
    import shutil
    import subprocess

    tmux = shutil.which("tmux")
    assert tmux is not None, "tmux is installed by tests/slurm/cluster.sh install-deps"
    ticks = "sleep 3; for i in 1 2 3 4 5 6; do echo tick-$i; sleep 1; done"
    work = runs.emit("terminal", workflow_type="custom", custom_cmd=ticks, persistent_mode=False)
    socket = str(tmp_path / "tmux.sock")
    env = runs.environment()
    command = f"{SCRIPTAST} run {work} --poll-max 30; sleep 30"
    subprocess.run([tmux, "-S", socket, "new-session", "-d", "-x", "200", "-y", "50",
                    "env", *(f"{k}={v}" for k, v in env.items() if k in ("PATH", "SLURM_CONF",
                    "SHIM_LOG")), "bash", "-c", command], check=True)  # fmt: skip
    try:
        screens: list[str] = []
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            screen = subprocess.run([tmux, "-S", socket, "capture-pane", "-p"],
                                    capture_output=True, text=True).stdout  # fmt: skip
            screens.append(screen)
            if "PASSED  " in screen:
                break
            time.sleep(0.3)
        coloured = subprocess.run([tmux, "-S", socket, "capture-pane", "-p", "-e"],
                                  capture_output=True, text=True).stdout  # fmt: skip
    finally:
        subprocess.run([tmux, "-S", socket, "kill-server"], capture_output=True)
    last = screens[-1]
    assert "PASSED  " in last, last
    ticked = [line for line in last.splitlines() if "tick-" in line]
    assert len(ticked) == 6 and all(line.startswith("0: ") for line in ticked), last
    assert not any("queued" in line for line in last.splitlines() if "tick-" in line)
    assert any("terminal running 0:00:0" in s for s in screens[:-1]), screens
    # the verdict is green on the terminal; the job's own lines are not coloured
    assert "\x1b[32mPASSED" in coloured, coloured
    assert not any("\x1b[" in line for line in coloured.splitlines() if "tick-" in line)


def test_a_requeued_job_is_judged_on_its_last_run_and_says_it_restarted(runs: RunSite) -> None:
    """Slurm requeues the running job (as after a node failure) and runs it again: the verdict
    is the second run's (the first run's lines are not judged), with the restart counted and
    said."""
    assert runs.cluster is not None
    flag = runs.site.work("requeued_flag")
    command = (f"if [ ! -e {flag} ]; then touch {flag}; echo first-run; sleep 30; fi; "
               "echo second-run")  # fmt: skip
    work = runs.emit("requeued", workflow_type="custom", custom_cmd=command,
                     persistent_mode=False)  # fmt: skip
    process = runs.start("run", str(work), "--poll-max", "2")
    job_id = wait_for(work, "RUNNING", text="first-run")["job_id"]
    requeued = runs.cluster.run("scontrol", "requeue", job_id)
    assert requeued.returncode == 0, requeued.stderr
    for _ in range(50):  # Slurm holds a requeued job back a while; let it start again now
        if runs.cluster.run("scontrol", "update", f"jobid={job_id}", "starttime=now").returncode:
            break
        if "RUNNING" in runs.cluster.run("squeue", "-h", "-j", job_id, "-o", "%T").stdout:
            break
        time.sleep(0.2)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    found = record(work)
    assert (found["verdict"], found["restarts"]) == ("PASSED", 1)
    assert "restarted: Slurm requeued the job once before this verdict" in out
    assert "first-run" in out and "0: second-run" in out
    assert "--- the job runs again (requeued): its log from the start ---" in out
    assert any("second-run" in line for line in found["last_lines"])
    assert not any("first-run" in line for line in found["last_lines"])


def test_retries_submit_again_after_a_node_failure(runs: RunSite) -> None:
    """--retries 1: the node under the job's allocation goes down (NODE_FAIL), the job is
    submitted again, runs on the other node and passes; the first attempt is recorded."""
    assert runs.cluster is not None
    work = runs.emit("retried", workflow_type="custom", custom_cmd="sleep 6")
    process = runs.start("run", str(work), "--retries", "1")
    first = wait_for(work, "RUNNING")
    out, err = _with_its_node_down(runs, work, process)
    assert process.returncode == 0, err
    found = record(work)
    assert found["verdict"] == "PASSED"
    [attempt] = found["attempts"]
    assert (attempt["job_id"], attempt["verdict"]) == (first["job_id"], "NODE_FAIL")
    assert found["allocation_id"] != first["allocation_id"]
    assert f"earlier attempt: job {first['job_id']} NODE_FAIL, submitted again" in out
    assert "NODE_FAIL on job" in err and "submitting it again (retry 1 of 1)" in err


def test_a_step_whose_allocation_runs_out_of_time_is_timeout(runs: RunSite) -> None:
    """The allocation (--alloc-time 1 min) ends at its limit under a step that would run
    for 10: TIMEOUT (15), not srun's FAILED 143."""
    work = runs.emit("alloc_limit", workflow_type="custom", custom_cmd="sleep 600")
    done = runs.run("run", str(work), "--alloc-time", "00:01:00")
    assert done.returncode == 15, done.stdout + done.stderr
    found = record(work)
    assert found["verdict"] == "TIMEOUT"
    assert f"allocation {found['allocation_id']} ended TIMEOUT" in " ".join(found["notes"])
