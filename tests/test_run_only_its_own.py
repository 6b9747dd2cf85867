"""`scriptast run`, `watch` and `cancel` act only on what this user submitted from this work dir,
on the real loopback Slurm: a `cp -a` of a live work dir never reaches the original's job, a
run.json edited to name another user's job, another job of the same user or an unrelated
process is refused and that job or process lives on, and a job_spec.json whose files lie outside
its work dir is refused unless --force."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.run_site import RunSite, record, wait_for

pytestmark = pytest.mark.slurm


def _state(runs: RunSite, job_id: str) -> str:
    assert runs.cluster is not None
    shown = runs.cluster.run("squeue", "--noheader", "--states=all", "-j", job_id, "-o", "%T")
    return shown.stdout.strip()


def _foreign(runs: RunSite, *extra: str) -> str:
    """A job that is not any work dir's: sleeping, its output thrown away."""
    assert runs.cluster is not None
    done = runs.cluster.run("sbatch", "--parsable", "--output=/dev/null", *extra,
                            "--chdir=/tmp", "--wrap", "sleep 300")  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_copy_of_a_live_work_dir_never_reaches_the_originals_job(
    runs: RunSite, tmp_path: Path
) -> None:
    work = runs.emit("original", workflow_type="custom", custom_cmd="sleep 300",
                     persistent_mode=False)  # fmt: skip
    process = runs.start("run", str(work))
    job_id = wait_for(work, "RUNNING")["job_id"]
    copy = tmp_path / "copy"
    shutil.copytree(work, copy, symlinks=True)
    copied = (copy / "run.json").read_bytes()
    for command in ("cancel", "watch", "run"):
        done = runs.run(command, str(copy))
        assert done.returncode == 2, (command, done.stderr)
        assert done.stderr.splitlines() == [
            f"error: {copy}/job_spec.json was written for work_dir {work}: this folder is a copy "
            "of it, or was moved, and never acts on that folder's job; emit the job again here"
        ], command
    assert _state(runs, job_id) == "RUNNING"
    assert (copy / "run.json").read_bytes() == copied  # nothing recorded a cancel there
    cancelled = runs.run("cancel", str(work))
    assert cancelled.returncode == 0, cancelled.stderr
    process.communicate(timeout=120)


@pytest.mark.parametrize("whose", ["another user's", "the same user's other job"])
def test_an_edited_run_json_never_cancels_another_job(runs: RunSite, whose: str) -> None:
    work = runs.emit("edited", workflow_type="custom", custom_cmd="sleep 300",
                     persistent_mode=False)  # fmt: skip
    assert runs.run("run", str(work), "--detach").returncode == 0
    ours = record(work)["job_id"]
    extra = ("--uid=nobody", "--gid=nogroup") if whose == "another user's" else ()
    other = _foreign(runs, *extra)
    deadline = time.monotonic() + 30
    while _state(runs, other) != "RUNNING" and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _state(runs, other) == "RUNNING"  # alive, so that a cancel would show
    edited = record(work) | {"job_id": other}
    (work / "run.json").write_text(json.dumps(edited))
    for command in ("cancel", "watch"):
        done = runs.run(command, str(work))
        assert done.returncode == 2, done.stderr
        (line,) = done.stderr.splitlines()
        assert line.startswith(f"error: {work}/run.json names job {other}, which is not this "
                               "work dir's (the controller shows job")  # fmt: skip
        assert line.endswith("nothing was done to it")
    assert _state(runs, other) == "RUNNING"
    assert runs.cluster is not None
    runs.cluster.run("scancel", other, ours)


def test_a_run_json_naming_an_unrelated_process_never_kills_it(
    runs: RunSite, tmp_path: Path
) -> None:
    """A step job's record edited to name a process of the same user that is not the job's
    wrapper: cancel refuses and the process lives."""
    work = runs.emit("proc", workflow_type="custom", custom_cmd="sleep 300")
    assert runs.run("run", str(work), "--detach").returncode == 0
    found = wait_for(work, "RUNNING")
    bystander = subprocess.Popen(["sleep", "300"], cwd=tmp_path, start_new_session=True)
    try:
        (work / "run.json").write_text(json.dumps(found | {"pid": bystander.pid}))
        done = runs.run("cancel", str(work))
        assert done.returncode == 2, done.stderr
        assert f"names process {bystander.pid}, which is not this work dir's" in done.stderr
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()
        (work / "run.json").write_text(json.dumps(found))
        assert runs.run("cancel", str(work)).returncode == 0


def test_files_outside_the_work_dir_are_refused_unless_forced(runs: RunSite) -> None:
    work = runs.emit("outside", workflow_type="custom", custom_cmd="true", persistent_mode=False)
    spec = json.loads((work / "job_spec.json").read_text())
    spec["logs"]["output"] = "/tmp/elsewhere/custom_custom_%j.out"
    (work / "job_spec.json").write_text(json.dumps(spec))
    done = runs.run("run", str(work))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"error: {work}/job_spec.json names files outside its work dir (log "
        "/tmp/elsewhere/custom_custom_%j.out): emit the job again, or run it as it is with --force"
    ]
    assert not (work / "run.json").exists()
    forced = runs.run("run", str(work), "--force")
    assert forced.returncode == 0, forced.stderr


def test_a_script_elsewhere_is_digest_checked_even_when_forced_outside(
    runs: RunSite, tmp_path: Path
) -> None:
    """job_spec.json edited to submit a script outside the work dir: refused; with --force
    (files outside allowed) the script must still be the one emit wrote, by its digest."""
    work = runs.emit("elsewhere", workflow_type="custom", custom_cmd="true", persistent_mode=False)
    spec = json.loads((work / "job_spec.json").read_text())
    other = tmp_path / spec["script_name"]
    other.write_text("#!/bin/bash\necho not what emit wrote\n")
    spec["script_path"] = str(other)
    (work / "job_spec.json").write_text(json.dumps(spec))
    refused = runs.run("run", str(work))
    assert refused.returncode == 2 and f"script {other}" in refused.stderr
    assert "names files outside its work dir" in refused.stderr
    forced = runs.run("run", str(work), "--force")
    assert forced.returncode == 2
    assert forced.stderr.splitlines() == [
        f"error: {work}: script {other} does not hold what emit wrote as {spec['script_name']}: "
        "not submitted; emit the job again"
    ]
    assert not (work / "run.json").exists()
    shutil.copy(work / spec["script_name"], other)  # the same script, kept elsewhere
    copied = runs.run("run", str(work), "--force")
    assert copied.returncode == 0, copied.stderr


def test_a_run_json_whose_job_id_names_two_jobs_is_refused(runs: RunSite) -> None:
    """`1,2` would make squeue and scancel act on two jobs: only an id as sbatch prints it is
    ever handed to them."""
    work = runs.emit("two_ids", workflow_type="custom", custom_cmd="sleep 300",
                     persistent_mode=False)  # fmt: skip
    assert runs.run("run", str(work), "--detach").returncode == 0
    ours = record(work)["job_id"]
    other = _foreign(runs)
    (work / "run.json").write_text(json.dumps(record(work) | {"job_id": f"{ours},{other}"}))
    done = runs.run("cancel", str(work))
    assert done.returncode == 2
    assert f"its job id '{ours},{other}' is not one the scheduler gave" in done.stderr
    deadline = time.monotonic() + 30
    while _state(runs, other) != "RUNNING" and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _state(runs, other) == "RUNNING"
    assert runs.cluster is not None
    runs.cluster.run("scancel", ours, other)
