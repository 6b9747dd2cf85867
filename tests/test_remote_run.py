"""`scriptast run` on remote_slurm jobs, through a real sshd on loopback to the real test Slurm
cluster. The "cluster" side uses its own folders (not the local work_dir), so a passing test
proves the files travelled there and the logs came back."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.peak_memory import run_measured
from tests.run_site import BENCH, SCRIPTAST, RunSite, interrupt, record, slurm_env_for, wait_for
from tests.shim_recorder import Shims
from tests.site import Site
from tests.slurm_cluster import Cluster
from tests.ssh_server import SshServer, sshd

__all__ = ["sshd"]
pytestmark = pytest.mark.slurm
SAY = {"SHIM_BENCH_TPS": "77.0"}
"""trtllm-bench's whole report, upstream's format, with 77 tokens/s of output."""
OUTPUT_LINE = "Total Output Throughput (tokens/sec):             77.0000"


class Remote(RunSite):
    """A RunSite whose jobs go to the cluster over ssh."""

    server: SshServer
    cluster_root: Path
    ssh_config: Path

    def remote(self, name: str, **fields: object) -> Path:
        chosen: dict[str, object] = {
            "execution_scenario": "remote_slurm",
            "remote_repo_path": str(self.cluster_root / "TensorRT-LLM"),
            "remote_work_dir": str(self.cluster_root / "work_dirs" / name),
            "models_path": str(self.cluster_root / "models"),
            "workflow_type": "bench",
            "bench_cmd": BENCH,
        }
        chosen.update(fields)
        return self.emit(name, **chosen)

    def go(self, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return self.run(*args, "--ssh-host", "cluster", "--ssh-config", str(self.ssh_config),
                        **extra)  # fmt: skip


@pytest.fixture
def remote(site: Site, cluster: Cluster, sshd: SshServer, tmp_path: Path) -> Iterator[Remote]:
    slurm_env_for(cluster, site)
    shims = Shims(tmp_path / "shims")
    made = Remote(site=site, cluster=cluster, shims=shims)
    made.server = sshd
    made.cluster_root = tmp_path / "cluster"
    shutil.copytree(site.repo, made.cluster_root / "TensorRT-LLM")
    made.ssh_config = sshd.config(tmp_path / "ssh_config")
    yield made
    made.stop()
    cluster.run("scancel", "--name", "scriptast.persistent")
    subprocess.run(["ssh", "-F", str(made.ssh_config), "-o", "ControlPath=" + _control_path(),
                    "-O", "exit", "cluster"], capture_output=True)  # fmt: skip


def _control_path() -> str:
    from scriptast.transports.ssh import control_dir

    return control_dir() + "/%C"


def test_a_bench_job_travels_runs_and_its_logs_come_back(remote: Remote) -> None:
    work = remote.remote("travel")
    before = remote.server.accepted()
    done = remote.go("run", str(work), **SAY)
    assert done.returncode == 0, done.stderr
    assert OUTPUT_LINE in done.stdout
    installed = remote.shims.records("pip")  # from the checkout on the cluster
    assert installed and installed[0]["argv"][-2:] == ["-e", "."]
    assert installed[0]["cwd"] == str(remote.cluster_root / "TensorRT-LLM")
    found = record(work)
    cluster_dir = remote.cluster_root / "work_dirs" / "travel"
    assert found["remote_out_log"] == str(
        cluster_dir / f"llama_3_1_8b_instruct_bench_{found['job_id']}.out"
    )
    assert found["out_log"] == str(work / Path(found["remote_out_log"]).name)
    assert Path(found["out_log"]).read_text() == Path(found["remote_out_log"]).read_text()
    assert (cluster_dir / "llama_3_1_8b_instruct_bench.slurm").read_text() == (
        work / "llama_3_1_8b_instruct_bench.slurm"
    ).read_text()
    assert not list(cluster_dir.glob("*.tmp"))
    assert remote.server.accepted() - before == 1  # one master for every command of the run


def test_a_file_altered_on_its_way_is_refused(remote: Remote) -> None:
    work = remote.remote("altered")
    done = remote.go("run", str(work), SHIM_ALTER_UPLOAD="1")
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert re.fullmatch(
        r"error: \S+/llama_3_1_8b_instruct_bench\.slurm on cluster does not hold what emit wrote "
        r"\(sha256 [0-9a-f]{64}, expected [0-9a-f]{64}\): not submitted",
        line,
    )
    assert not (work / "run.json").exists()


def test_a_key_not_accepted_is_one_line_with_the_command_and_then_that_master_is_used(
    remote: Remote, tmp_path: Path
) -> None:
    work = remote.remote("mfa")
    refused_config = remote.server.config(tmp_path / "other_config", key="otherkey")
    done = remote.run("run", str(work), "--ssh-host", "cluster", "--ssh-config",
                      str(refused_config))  # fmt: skip
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    command = f"ssh -F {refused_config} -fNM -o ControlPath={_control_path()} -o ControlPersist=8h cluster"
    assert line.startswith("error: ssh to cluster needs a password or MFA (")
    assert line.endswith(f"): run once '{command}', then run scriptast again")
    # the user runs it by hand (here with the key the server takes), and run uses that master
    by_hand = command.replace(str(refused_config), str(remote.ssh_config))
    subprocess.run(by_hand.split(), check=True, stdin=subprocess.DEVNULL)
    again = remote.run("run", str(work), "--ssh-host", "cluster", "--ssh-config",
                       str(refused_config), **SAY)  # fmt: skip
    assert again.returncode == 0, again.stderr


def test_a_master_killed_mid_run_is_reestablished_once(remote: Remote) -> None:
    work = remote.remote("dropped")
    process = remote.start("run", str(work), "--ssh-host", "cluster", "--ssh-config",
                           str(remote.ssh_config), "--poll-max", "1",
                           SHIM_SLEEP_TRTLLM_BENCH="6", **SAY)  # fmt: skip
    wait_for(work, "RUNNING")
    check = subprocess.run(
        ["ssh", "-F", str(remote.ssh_config), "-o", f"ControlPath={_control_path()}", "-O",
         "check", "cluster"], capture_output=True, text=True,
    )  # fmt: skip
    master = int(re.search(r"pid=(\d+)", check.stderr).group(1))  # type: ignore[union-attr]
    before = remote.server.accepted()
    subprocess.run(["kill", str(master)], check=True)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert remote.server.accepted() - before == 1  # one new master, not a login a command
    assert OUTPUT_LINE in out
    assert record(work)["verdict"] == "PASSED"


def test_a_remote_bench_report_json_comes_back(remote: Remote) -> None:
    """--report_json is written on the cluster, in the checkout the job runs in: it is brought
    back into the local work_dir and its figures are read from it."""
    work = remote.remote("report_back", bench_cmd=f"{BENCH} --report_json report.json")
    cluster_report = remote.cluster_root / "TensorRT-LLM/report.json"
    done = remote.go("run", str(work), **SAY)
    assert done.returncode == 0, done.stdout + done.stderr
    found = record(work)
    assert found["verdict"] == "PASSED" and not found.get("unread")
    assert cluster_report.is_file()
    brought = json.loads((work / "report.json").read_text())
    assert brought["performance"]["system_output_throughput_tok_s"] == 77.0
    per_gpu = next(f for f in found["figures"] if f["name"] == "per_gpu_output_throughput")
    assert per_gpu["value"] == 77.0


def test_ctrl_c_cancels_the_job_on_the_cluster(remote: Remote) -> None:
    work = remote.remote("remote_ctrl_c", workflow_type="custom", custom_cmd="sleep 600",
                         bench_cmd=None)  # fmt: skip
    process = remote.start("run", str(work), "--ssh-host", "cluster", "--ssh-config",
                           str(remote.ssh_config))  # fmt: skip
    running = wait_for(work, "RUNNING")
    code, _, err = interrupt(process)
    assert code == 12, err
    assert remote.cluster is not None
    shown = remote.cluster.run("scontrol", "show", "job", "-o", running["job_id"]).stdout
    assert "JobState=CANCELLED" in shown


def test_a_persistent_allocation_on_the_cluster_runs_two_jobs(remote: Remote) -> None:
    first, second = remote.remote("rp1"), remote.remote("rp2", bench_cmd=f"{BENCH} --pp 1")
    one = remote.go("run", str(first), "--persistent", **SAY)
    two = remote.go("run", str(second), "--persistent", **SAY)
    assert (one.returncode, two.returncode) == (0, 0), one.stderr + two.stderr
    a, b = record(first), record(second)
    assert a["allocation_id"] == b["allocation_id"]
    assert (a["launch"], b["launch"], b["remote_host"]) == ("step", "step", "cluster")
    alloc = a["allocation_id"]
    assert b["notes"][0] == f"reused persistent allocation {alloc}"
    assert b["notes"][1].startswith(f"persistent allocation {alloc} stays: it holds 1 node(s)")
    assert b["notes"][1].endswith(f"'scriptast alloc release --remote cluster {alloc}'")
    assert len(b["notes"]) == 3 and b["notes"][2].startswith("stored in the results store ")
    assert OUTPUT_LINE in Path(b["out_log"]).read_text()
    listed = remote.run(
        "alloc", "list", "--json", "--remote", "cluster", "--ssh-config", str(remote.ssh_config)
    )
    assert [x["job_id"] for x in json.loads(listed.stdout)] == [a["allocation_id"]]


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        (
            "unknown host",
            "error: cannot connect to nosuch.invalid with ssh: ssh: Could not resolve hostname",
        ),
        (
            "work dir",
            "error: remote_work_dir /etc/hostname/work cannot be created on cluster: mkdir:",
        ),
        ("no sbatch", "error: sbatch is not installed on cluster (is Slurm's client on its PATH?)"),
        (
            "other user",
            "error: cluster logs in as 'root', but slurm_env.json was probed as 'alice'",
        ),
    ],
)
def test_bad_remote_input_is_one_line(remote: Remote, case: str, expected: str) -> None:
    fields: dict[str, object] = {}
    extra: dict[str, str] = {}
    host = "cluster"
    if case == "unknown host":
        host = "nosuch.invalid"
    elif case == "work dir":
        fields["remote_work_dir"] = "/etc/hostname/work"
    elif case == "no sbatch":
        extra["SHIM_NO_SBATCH"] = "1"
    else:
        probed = json.loads(remote.site.slurm_env.read_text())
        remote.site.slurm_env.write_text(json.dumps({**probed, "user": "alice"}))
    work = remote.remote(case.replace(" ", "_"), **fields)
    done = remote.run("run", str(work), "--ssh-host", host, "--ssh-config",
                      str(remote.ssh_config), **extra)  # fmt: skip
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert line.startswith(expected)


def test_detach_then_watch_brings_back_logs_and_fetched_files(remote: Remote) -> None:
    cluster_dir = remote.cluster_root / "work_dirs" / "fetched"
    work = remote.remote("fetched", workflow_type="custom", bench_cmd=None,
                         custom_cmd=f"sleep 2; echo 0.91 > {cluster_dir}/accuracy_result.txt")  # fmt: skip
    detached = remote.go("run", str(work), "--detach")
    assert detached.returncode == 0, detached.stderr
    # remote is a transport: the same batch kind as here, with the cluster it ran on
    assert (record(work)["launch"], record(work)["remote_host"]) == ("batch", "cluster")
    assert not (work / "accuracy_result.txt").exists()
    watched = remote.go("watch", str(work), "--fetch", "accuracy_*.txt")
    assert watched.returncode == 0, watched.stderr
    found = record(work)
    assert found["verdict"] == "PASSED"
    assert Path(found["out_log"]).parent == work and Path(found["out_log"]).exists()
    assert (work / "accuracy_result.txt").read_text() == "0.91\n"


def test_a_second_drop_of_the_master_is_an_error() -> None:
    from scriptast.errors import RunError
    from scriptast.transports.ssh import SshTransport

    transport = SshTransport("cluster")
    transport.reconnects = 1
    with pytest.raises(RunError, match="the ssh connection to cluster dropped again"):
        transport._reconnect()


@pytest.mark.parametrize("kind", ["ssh", "local"])
def test_a_sent_file_is_checked_before_it_is_renamed_into_place(
    remote: Remote, tmp_path: Path, kind: str
) -> None:
    """A file whose digest on the far side is not the one expected never replaces the file
    at its path, and leaves no temporary behind."""
    import hashlib

    from scriptast.transports.registry import transport

    sender = transport(kind, "cluster", str(remote.ssh_config))
    folder = remote.cluster_root / f"sent_{kind}"
    folder.mkdir(parents=True)
    target = folder / "job.slurm"
    target.write_text("what was there\n")
    wrong = sender.put(str(target), b"new\n", sha256="0" * 64)
    assert wrong.code != 0 and "sha256" in wrong.err
    assert target.read_text() == "what was there\n"
    assert sorted(p.name for p in folder.iterdir()) == ["job.slurm"]
    planted = tmp_path / f"planted_{kind}"
    forged = sender.put(str(target), b"new\n", sha256=f"$(touch {planted})")  # job_spec's text
    assert forged.code != 0 and not planted.exists() and target.read_text() == "what was there\n"
    right = sender.put(str(target), b"new\n", sha256=hashlib.sha256(b"new\n").hexdigest())
    assert right.code == 0 and target.read_text() == "new\n"


def test_an_upload_outside_the_cluster_folders_is_refused(remote: Remote) -> None:
    """job_spec.json edited to send an extra file over the cluster's authorized_keys: refused
    before anything is sent."""
    work = remote.remote("keys", workflow_type="custom", bench_cmd=None, custom_cmd="true")
    spec = json.loads((work / "job_spec.json").read_text())
    assert spec["extra_files"]
    keys = str(remote.cluster_root / ".ssh" / "authorized_keys")
    spec["extra_file_destinations"] = {spec["extra_files"][0]: keys}
    (work / "job_spec.json").write_text(json.dumps(spec))
    done = remote.go("run", str(work))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"error: {work}/job_spec.json sends files outside remote_work_dir and remote_repo_path "
        f"on the cluster ({keys}): emit the job again"
    ]
    assert not Path(keys).exists() and not (work / "run.json").exists()


def test_a_fetched_file_never_replaces_what_emit_wrote(remote: Remote) -> None:
    cluster_dir = remote.cluster_root / "work_dirs" / "clobber"
    work = remote.remote("clobber", workflow_type="custom", bench_cmd=None,
                         custom_cmd=f"echo '{{}}' > {cluster_dir}/job_spec.json")  # fmt: skip
    before = (work / "job_spec.json").read_bytes()
    done = remote.go("run", str(work), "--fetch", "job_spec.json")
    assert done.returncode == 0, done.stderr
    assert (work / "job_spec.json").read_bytes() == before
    assert any("not brought back: it would replace" in n for n in record(work)["notes"])


def _peak_run(remote: Remote, name: str, size: int) -> tuple[Path, int]:
    """A remote job that writes `size` bytes of 1 KiB lines: its work dir, and run's own peak
    resident memory in bytes."""
    make = f"head -c {size} /dev/zero | tr '\\0' x | fold -w 1023"
    work = remote.remote(name, workflow_type="custom", bench_cmd=None, custom_cmd=make)
    done = run_measured([SCRIPTAST, "run", str(work), "--ssh-host", "cluster", "--ssh-config",
                         str(remote.ssh_config)], env=remote.environment())  # fmt: skip
    assert done.returncode == 0
    return work, done.peak_bytes


def test_a_large_remote_log_comes_back_without_passing_through_memory(remote: Remote) -> None:
    """A 96 MiB log on the cluster is followed and brought back whole, and run's peak memory
    is within a third of that of the same run with a 1 MiB log: it grows not with the log."""
    size = 96 << 20
    _, small = _peak_run(remote, "small_log", 1 << 20)
    work, large = _peak_run(remote, "large_log", size)
    assert Path(record(work)["out_log"]).stat().st_size > size
    assert large - small < size // 3, (small, large)


def _master_open(remote: Remote) -> bool:
    check = subprocess.run(
        ["ssh", "-F", str(remote.ssh_config), "-o", f"ControlPath={_control_path()}", "-O",
         "check", "cluster"], capture_output=True, text=True,
    )  # fmt: skip
    return check.returncode == 0


def test_a_job_cancelled_while_queued_leaves_nothing_on_the_login_node(remote: Remote) -> None:
    """The job is held in the queue, so its log never appears; cancelled from another
    terminal, the run ends CANCELLED and no loop waiting for the log stays on the cluster;
    the ssh master the run opened is closed at its end."""
    work = remote.remote("held", workflow_type="custom", bench_cmd=None, custom_cmd="true")
    process = remote.start("run", str(work), "--ssh-host", "cluster", "--ssh-config",
                           str(remote.ssh_config), SHIM_SBATCH_HOLD="1")  # fmt: skip
    found = wait_for(work, "PENDING")
    log = found["remote_out_log"]
    waiting = subprocess.run(["pgrep", "-f", f"while \\[ ! -e {log}"], capture_output=True)
    assert waiting.returncode == 0  # the follower waits on the cluster for the log
    cancelled = remote.go("cancel", str(work), "--keep-connection")
    assert cancelled.returncode == 0, cancelled.stderr
    _, err = process.communicate(timeout=120)
    assert process.returncode == 12, err
    time.sleep(1)
    left = subprocess.run(["pgrep", "-af", f"while \\[ ! -e {log}"], capture_output=True, text=True)
    assert left.returncode == 1, left.stdout
    assert not _master_open(remote)


def test_keep_connection_leaves_the_master_open(remote: Remote) -> None:
    work = remote.remote("kept", workflow_type="custom", bench_cmd=None, custom_cmd="true")
    done = remote.go("run", str(work), "--keep-connection")
    assert done.returncode == 0, done.stderr
    assert _master_open(remote)
    closed = remote.go("watch", str(work))
    assert closed.returncode == 0 and _master_open(remote)  # not opened by it: left as it was


def test_a_remote_run_is_stored_with_the_clusters_commit(
    remote: Remote, results_store: Path
) -> None:
    """The TRT-LLM commit of a remote_slurm run is the cluster checkout's HEAD, read over the
    run's own ssh master (no new connection)."""
    import sqlite3

    from tests.test_results_runs import committed

    head = committed(remote.cluster_root / "TensorRT-LLM")
    work = remote.remote("stored")
    before = remote.server.accepted()
    done = remote.go("run", str(work), **SAY)
    assert done.returncode == 0, done.stderr
    assert remote.server.accepted() - before == 1
    with sqlite3.connect(results_store) as connection:
        rows = connection.execute("SELECT trtllm_commit, work_dir, verdict FROM scriptast_runs")
        assert rows.fetchall() == [(head, str(work), "PASSED")]
