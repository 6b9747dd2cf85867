"""Every job the real loopback Slurm accepted is recorded before anything else can happen, and is
either followed or cancelled: `kill -9` right after sbatch returns, SIGHUP during sbatch, Ctrl-C
during the second of four submissions, two runs of one work dir at once, a record that cannot be
written; and a refused run takes no allocation. The faults are put exactly where they belong by
an `sbatch` in front of the real one, which does its part and then signals the run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.run_site import RunSite, record, wait_for

pytestmark = pytest.mark.slurm

SBATCH = """#!/bin/bash
# the real sbatch, with a fault before or after it: $FAULT
count_file="$FAULT_DIR/count"; n=$(( $(cat "$count_file" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "$count_file"
case "$FAULT" in
  hup-during) kill -HUP "$PPID" ;;
  int-second) [ "$n" = 2 ] && kill -INT "$PPID" ;;
esac
/usr/bin/sbatch "$@"; rc=$?
case "$FAULT" in
  kill-after) kill -9 "$PPID" ;;
  unrecordable) rm -f "$RUN_JSON"; mkdir "$RUN_JSON" ;;
esac
exit $rc
"""


def _faulty(runs: RunSite, tmp_path: Path, fault: str, **extra: str) -> dict[str, str]:
    folder = tmp_path / "faulty"
    folder.mkdir(exist_ok=True)
    sbatch = folder / "sbatch"
    sbatch.write_text(SBATCH)
    sbatch.chmod(0o755)
    path = f"{folder}:{runs.environment()['PATH']}"
    return {"PATH": path, "FAULT": fault, "FAULT_DIR": str(folder), **extra}


def _queued(runs: RunSite, name: str = "custom_custom") -> list[str]:
    """This user's live jobs of `name` whose script lies in this test's site (the ids)."""
    assert runs.cluster is not None
    shown = runs.cluster.run("squeue", "--noheader", "--me", "--name", name, "-o", "%i|%T|%o")
    site = str(runs.site.root)
    return [
        line.split("|")[0]
        for line in shown.stdout.splitlines()
        if "COMPLET" not in line and (name != "custom_custom" or site in line)
    ]


def _job(runs: RunSite, name: str, command: str = "sleep 3") -> Path:
    return runs.emit(name, workflow_type="custom", custom_cmd=command, persistent_mode=False)


def test_kill_9_right_after_sbatch_leaves_a_record_watch_follows(
    runs: RunSite, tmp_path: Path
) -> None:
    work = _job(runs, "killed")
    done = runs.run("run", str(work), **_faulty(runs, tmp_path, "kill-after"))
    assert done.returncode == -9
    left = record(work)
    assert left["state"] == "SUBMITTING" and "job_id" not in left
    assert left["launch"] == "batch"  # known before the scheduler is asked
    [job_id] = _queued(runs)
    again = runs.run("run", str(work))
    assert again.returncode == 2
    assert f"already has a live run (job {job_id}" in again.stderr
    watched = runs.run("watch", str(work))
    assert watched.returncode == 0, watched.stderr
    found = record(work)
    assert (found["job_id"], found["verdict"], found["launch"]) == (job_id, "PASSED", "batch")
    assert any("found in the queue by its name and script" in n for n in found["notes"])


def test_kill_9_right_after_an_arrays_sbatch_leaves_records_watch_follows(
    runs: RunSite, tmp_path: Path
) -> None:
    """The tasks of a job array: each found again by the array's name and script and its own
    index, then followed to its verdict."""
    import json

    from tests.test_categories import site_fields

    lines = [
        site_fields(
            runs.site,
            {
                "account": "root",
                "partition": "batch",
                "workflow_type": "custom",
                "custom_cmd": f"sleep 2; echo task-{n}",
                "work_dir": str(runs.site.work(f"task{n}")),
            },
        )
        for n in range(2)
    ]
    sweep = tmp_path / "pair.jsonl"
    sweep.write_text("".join(json.dumps(line) + "\n" for line in lines))
    emitted = runs.run("emit", "--requests", str(sweep), "--array")
    assert emitted.returncode == 0, emitted.stderr
    works = [Path(line["work_dir"]) for line in lines]
    done = runs.run("run", *map(str, works), **_faulty(runs, tmp_path, "kill-after"))
    assert done.returncode == -9
    for work in works:
        left = record(work)
        assert (left["state"], left["launch"], "job_id" in left) == ("SUBMITTING", "array", False)
    watched = runs.run("watch", *map(str, works))
    assert watched.returncode == 0, watched.stdout + watched.stderr
    found = [record(work) for work in works]
    assert [f["job_id"].split("_")[1] for f in found] == ["0", "1"]
    assert len({f["job_id"].split("_")[0] for f in found}) == 1  # the one array
    assert [f["verdict"] for f in found] == ["PASSED", "PASSED"]
    assert all(any("found in the queue by its array's name" in n for n in f["notes"])
               for f in found)  # fmt: skip
    assert "task-1" in Path(found[1]["out_log"]).read_text()


def test_sighup_during_sbatch_cancels_and_records_the_job(runs: RunSite, tmp_path: Path) -> None:
    work = _job(runs, "hangup", "sleep 60")
    done = runs.run("run", str(work), **_faulty(runs, tmp_path, "hup-during"))
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[-1] == (
        "error: interrupted: what it had submitted was cancelled, and run.json says so"
    )
    found = record(work)
    assert found["verdict"] == "CANCELLED" and found["job_id"]
    assert "interrupted while submitting: cancelled" in found["notes"]
    assert _queued(runs) == []


def test_ctrl_c_during_the_second_of_four_submissions(runs: RunSite, tmp_path: Path) -> None:
    works = [_job(runs, f"four_{n}", "sleep 60") for n in range(4)]
    done = runs.run("run", *map(str, works), **_faulty(runs, tmp_path, "int-second"))
    assert done.returncode == 2, done.stderr
    assert [record(w)["verdict"] for w in works[:2]] == ["CANCELLED", "CANCELLED"]
    assert not any((w / "run.json").exists() for w in works[2:])  # never submitted
    assert (tmp_path / "faulty" / "count").read_text().strip() == "2"
    assert _queued(runs) == []


def test_two_runs_of_one_work_dir_at_once_submit_one_job(runs: RunSite) -> None:
    work = _job(runs, "twice", "sleep 60")
    started = [runs.start("run", str(work), "--detach") for _ in range(2)]
    errors = [p.communicate(timeout=120)[1] for p in started]
    assert sorted(p.returncode for p in started) == [0, 2], errors
    assert any("already has a live run" in e for e in errors)
    queued = _queued(runs)
    assert len(queued) == 1
    assert runs.cluster is not None
    runs.cluster.run("scancel", *queued)


def test_a_job_that_cannot_be_recorded_is_cancelled_and_said(runs: RunSite, tmp_path: Path) -> None:
    work = _job(runs, "unrecorded", "sleep 60")
    fault = _faulty(runs, tmp_path, "unrecordable", RUN_JSON=str(work / "run.json"))
    done = runs.run("run", str(work), **fault)
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert line.startswith(f"error: cannot write {work}/run.json: ")
    assert line.endswith("was cancelled, since it could not be recorded")
    assert _queued(runs) == []


@pytest.mark.parametrize("refusal", ["torn", "live"])
def test_a_refused_run_takes_no_allocation(runs: RunSite, refusal: str) -> None:
    work = runs.emit(f"refused_{refusal}", workflow_type="custom", custom_cmd="sleep 60",
                     persistent_mode=True)  # fmt: skip
    if refusal == "torn":
        runner = next(p for p in work.iterdir() if p.name.startswith("slurm_run_"))
        runner.write_text(runner.read_text() + "# edited\n")
    else:
        assert runs.run("run", str(work), "--detach").returncode == 0
    before = _queued(runs, "scriptast.persistent")
    done = runs.run("run", str(work))
    assert done.returncode == 2
    expected = "edited" if refusal == "torn" else "already has a live run"
    assert expected in done.stderr
    assert _queued(runs, "scriptast.persistent") == before
    if refusal == "live":
        assert runs.run("cancel", str(work)).returncode == 0


def test_a_submission_sbatch_refuses_leaves_the_record_as_it_was(runs: RunSite) -> None:
    """sbatch refuses: nothing was submitted, and run.json is as before the run (none here)."""
    work = _job(runs, "refused", "true")
    done = runs.run("run", str(work), SBATCH_PARTITION="ghost")
    assert done.returncode == 2
    assert "invalid partition specified: ghost" in done.stderr
    assert not (work / "run.json").exists()
    watched = runs.run("watch", str(work))
    assert watched.returncode == 2 and "has no run.json" in watched.stderr


def test_an_allocation_that_stays_is_named_and_released_when_idle(runs: RunSite) -> None:
    """The verdict names the persistent allocation left behind (what it holds, the command that
    releases it); with --alloc-idle 4s it is released by itself once it runs no step."""
    import time

    work = runs.emit("idle", workflow_type="custom", custom_cmd="sleep 2", persistent_mode=True)
    done = runs.run("run", str(work), "--alloc-idle", "4s")
    assert done.returncode == 0, done.stderr
    alloc = record(work)["allocation_id"]
    [note] = [n for n in record(work)["notes"] if n.startswith("persistent allocation")]
    assert note.startswith(f"persistent allocation {alloc} stays: it holds 1 node(s), gres ")
    assert note.endswith(f"released by itself after 4 s without a step; release it now with "
                         f"'scriptast alloc release {alloc}'")  # fmt: skip
    assert note in done.stdout
    deadline = time.monotonic() + 60
    while alloc in _queued(runs, "scriptast.persistent") and time.monotonic() < deadline:
        time.sleep(1)
    assert alloc not in _queued(runs, "scriptast.persistent")


def test_a_signal_while_the_final_state_is_read_finishes_the_verdict(
    runs: RunSite, tmp_path: Path
) -> None:
    """Ctrl-C arrives while run asks for the job's final state (sacct, after the job left):
    the verdict is finished and recorded, not "nothing is left submitted"."""
    folder = tmp_path / "interrupting"
    folder.mkdir()
    sacct = folder / "sacct"
    sacct.write_text('#!/bin/sh\nkill -INT "$PPID"\nexec /usr/bin/sacct "$@"\n')
    sacct.chmod(0o755)
    work = _job(runs, "concluding", "true")
    done = runs.run("run", str(work), PATH=f"{folder}:{runs.environment()['PATH']}")
    assert done.returncode == 0, done.stderr
    assert "error:" not in done.stderr
    assert record(work)["verdict"] == "PASSED"


def _gone(runs: RunSite, job_id: str) -> bool:
    assert runs.cluster is not None
    shown = runs.cluster.run("squeue", "-h", "-j", job_id, "-o", "%T").stdout.strip()
    return shown in ("", "CANCELLED", "COMPLETING")


@pytest.mark.parametrize("gap", [0.02, 0.3])
def test_a_second_ctrl_c_finishes_the_cancel_and_records_it(runs: RunSite, gap: float) -> None:
    """Two Ctrl-C 20 ms apart (and 300 ms): the second does not abandon the job; run finishes
    cancelling it, records CANCELLED and exits 12, and the job has left the queue."""
    import signal
    import time

    work = _job(runs, f"twice_c_{int(gap * 1000)}", "sleep 120")
    process = runs.start("run", str(work))
    running = wait_for(work, "RUNNING")
    process.send_signal(signal.SIGINT)
    time.sleep(gap)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 12, err
    left = record(work)
    assert left["verdict"] == "CANCELLED" and "cancel_requested_at" in left
    assert "interrupt once more to leave at once" in err
    assert _gone(runs, running["job_id"])


def test_a_third_ctrl_c_leaves_and_names_what_may_still_run(runs: RunSite, tmp_path: Path) -> None:
    """The third Ctrl-C leaves before the cancel is confirmed, and says which job may still be
    running and how to cancel it; the record it leaves is one watch judges CANCELLED. The
    cancel is held up by an scancel that waits, so that the third arrives while it runs."""
    import signal
    import time

    folder = tmp_path / "slow_scancel"
    folder.mkdir()
    scancel = folder / "scancel"
    scancel.write_text('#!/bin/sh\nsleep 5\nexec /usr/bin/scancel "$@"\n')
    scancel.chmod(0o755)
    work = _job(runs, "thrice_c", "sleep 25")  # runs on past the cancel run leaves before
    process = runs.start("run", str(work), PATH=f"{folder}:{runs.environment()['PATH']}")
    running = wait_for(work, "RUNNING")
    for _ in range(3):
        process.send_signal(signal.SIGINT)
        time.sleep(0.5)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 2, err
    job_id = running["job_id"]
    [line] = [each for each in err.splitlines() if each.startswith("error:")]
    assert "interrupted a third time" in line
    assert f"job {job_id} of {work}" in line
    assert f"scriptast cancel {work}" in line and f"scancel {job_id}" in line
    assert "cancel_requested_at" in record(work)
    watched = runs.run("watch", str(work))
    assert watched.returncode == 12, watched.stderr
    assert record(work)["verdict"] == "CANCELLED"
