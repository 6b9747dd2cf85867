"""`scriptast run` on a real Slurm cluster: controller calls per poll with 50 jobs followed at once
(counted by wrappers around squeue, sacct and scontrol), the delay from a line written to the log
to the line on the terminal, the delay from a job leaving the queue to its verdict, and run's own
CPU while it follows a 60 s job. Every job is distinct (its own work_dir, command and length).

    SCRIPTAST_SLURM_CONF=/path/slurm.conf python bench/executor_bench.py

(`tests/slurm/cluster.sh up DIR` prints such a path; bench/run.py prints this section too;
`... executor_bench.py long-line` prints only the peak memory of run following a 1 GiB line.)"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCRIPTAST = shutil.which("scriptast") or str(Path(sys.executable).parent / "scriptast")
WRAPPED = ("squeue", "sacct", "scontrol")


def _emit(folder: Path, name: str, command: str, slurm_env: Path, **more: Any) -> Path:
    from scriptast.builders.read_request import build_request
    from scriptast.pipeline.emit_job import generate, write_outputs

    work = folder / name
    write_outputs(generate(build_request(custom_fields(work, command, slurm_env, **more), {})))
    return work


def custom_fields(work: Path, command: str, slurm_env: Path, **more: Any) -> dict[str, Any]:
    """The request of a custom job on the test cluster's batch partition (no install)."""
    return {
        "workflow_type": "custom",
        "execution_scenario": "local_slurm",
        "work_dir": str(work),
        "repo_root": str(ROOT / "tests/fixtures/trtllm"),
        "slurm_env_file": str(slurm_env),
        "partition": "batch",
        "account": "root",
        "llm_models_root": "/models",
        "models_path": str(ROOT / "tests/fixtures/models"),
        "custom_cmd": command,
        "persistent_mode": False,
        "install": False,
        "time_limit": "00:10:00",
        **more,
    }


def _wrappers(folder: Path, log: Path, tools: tuple[str, ...] = WRAPPED) -> Path:
    """Slurm commands (squeue, sacct and scontrol) that note each call (time, argv) and run
    the real one."""
    bin_dir = folder / "wrappers"
    bin_dir.mkdir()
    for tool in tools:
        real = shutil.which(tool)
        assert real, f"{tool} is not installed"
        script = bin_dir / tool
        script.write_text(
            f'#!/bin/sh\nprintf "%s {tool} %s\\n" "$(date +%s.%N)" "$*" >>{log}\nexec {real} "$@"\n'
        )
        script.chmod(0o755)
    return bin_dir


def calls_per_poll(
    folder: Path, slurm_env: Path, env: dict[str, str], jobs: int = 50
) -> dict[str, float]:
    """Follow `jobs` jobs at once: squeue calls, polls, and the final-state calls."""
    log = folder / "calls.log"
    wrappers = _wrappers(folder, log)
    works = [_emit(folder, f"job{n}", f"sleep {2 + n % 7}.{n:02d}", slurm_env) for n in range(jobs)]
    started = time.monotonic()
    done = subprocess.run(
        [SCRIPTAST, "run", *map(str, works), "--json"],
        env={**env, "PATH": f"{wrappers}:{env['PATH']}"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    wall = time.monotonic() - started
    results = json.loads(done.stdout)
    calls = [line.split(" ", 2) for line in log.read_text().splitlines()]
    squeues = [c for c in calls if c[1] == "squeue"]
    listed = [len(c[2].split("--jobs ")[1].split()[0].split(",")) for c in squeues]
    polls = 1 + sum(1 for a, b in itertools.pairwise(squeues) if float(b[0]) - float(a[0]) > 0.05)
    return {
        "jobs": jobs,
        "passed": sum(r["verdict"] == "PASSED" for r in results),
        "squeue calls": len(squeues),
        "polls": polls,
        "calls per poll": len(squeues) / polls,
        "jobs listed by the first squeue": listed[0] if listed else 0,
        "final-state calls (sacct, scontrol)": len(calls) - len(squeues),
        "wall s": wall,
    }


def log_delay(folder: Path, slurm_env: Path, env: dict[str, str]) -> list[float]:
    """Seconds from a line's write (its content is the time) to its arrival on run's stdout."""
    command = "for i in $(seq 30); do date +%s.%N; sleep 0.37; done"
    work = _emit(folder, "stamps", command, slurm_env)
    process = subprocess.Popen(
        [SCRIPTAST, "run", str(work)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    delays = []
    for line in process.stdout:
        arrived = time.time()
        value = line.strip().split(": ")[-1]
        if value.replace(".", "").isdigit() and "." in value:
            delays.append(arrived - float(value))
    process.wait()
    return delays


def verdict_delay(folder: Path, slurm_env: Path, env: dict[str, str]) -> tuple[float, float]:
    """(seconds from the job leaving the queue to the verdict printed, the poll interval then)."""
    work = _emit(folder, "ending", "sleep 20", slurm_env)
    process = subprocess.Popen(
        [SCRIPTAST, "run", str(work), "--poll-max", "30"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    job_id: list[str] = []
    left: list[float] = []

    def watch_queue() -> None:
        while not job_id:
            time.sleep(0.05)
        while process.poll() is None and not left:
            shown = subprocess.run(
                ["squeue", "-h", "-t", "all", "-j", job_id[0], "-o", "%T"],
                env=env,
                capture_output=True,
                text=True,
            ).stdout.strip()
            if shown in ("", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"):
                left.append(time.time())
            time.sleep(0.05)

    watcher = threading.Thread(target=watch_queue)
    watcher.start()
    verdict_at = 0.0
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith("Job ID: "):
            job_id.append(line.split(": ")[1].strip())
        if line.startswith(("PASSED", "FAILED", "INCONCLUSIVE")):
            verdict_at = time.time()
    process.wait()
    watcher.join()
    # the poll interval at that time: 20 s into the job the backoff was at 8 s (0.5, 1, 2, 4, 8)
    return verdict_at - left[0], 8.0


def timeout_delay(folder: Path, slurm_env: Path, env: dict[str, str]) -> float:
    """Seconds from Slurm ending a job at its time limit (the `CANCELLED AT ... DUE TO TIME
    LIMIT` stamp slurmstepd writes, to the second) to run printing TIMEOUT."""
    import re

    work = _emit(folder, "limit", "sleep 600", slurm_env, time_limit="00:01:00")
    process = subprocess.Popen(
        [SCRIPTAST, "run", str(work)], env=env, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    verdict_at = 0.0
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith("TIMEOUT"):
            verdict_at = time.time()
    process.wait()
    record = json.loads((work / "run.json").read_text())
    text = Path(record["err_log"]).read_text()
    stamp = re.search(r"CANCELLED AT (\S+) DUE TO TIME LIMIT", text)
    assert stamp is not None and verdict_at, text
    ended = time.mktime(time.strptime(stamp.group(1), "%Y-%m-%dT%H:%M:%S"))  # local time
    return verdict_at - ended


def run_cpu(
    folder: Path, slurm_env: Path, env: dict[str, str], seconds: int = 60
) -> tuple[float, float]:
    """(run's CPU seconds, wall seconds) while it follows a job of `seconds`."""
    work = _emit(folder, "minute", f"sleep {seconds}", slurm_env)
    started = time.monotonic()
    process = subprocess.Popen(
        [SCRIPTAST, "run", str(work)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, _, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - started
    return usage.ru_utime + usage.ru_stime, wall


def long_line_peak(folder: Path, slurm_env: Path, env: dict[str, str]) -> dict[str, float]:
    """run's peak resident memory (MiB) following three distinct jobs: a 1 KiB log, a 1 GiB log
    of 1 KiB lines, and one 1 GiB line without a newline with custom's failure pattern at its
    end (found past the kept head only by the scan that goes on through the line)."""
    jobs = {
        "1 KiB log": "head -c 1024 /dev/zero | tr '\\0' a; echo",
        "1 GiB of 1 KiB lines": "head -c 1073741824 /dev/zero | tr '\\0' b | fold -w 1023",
        "1 GiB line": "head -c 1073741824 /dev/zero | tr '\\0' c; echo ' Traceback'",
    }
    peaks: dict[str, float] = {}
    for n, (name, command) in enumerate(jobs.items()):
        work = _emit(folder, f"long{n}", command, slurm_env)
        sys.path.insert(0, str(ROOT))
        from tests.peak_memory import run_measured

        peaks[name] = run_measured([SCRIPTAST, "run", str(work)], env=env).peak_bytes / (1 << 20)
        record = json.loads((work / "run.json").read_text())
        if name == "1 GiB line":
            found = [hit["pattern"] for hit in record.get("failure_hits", [])]
            peaks["pattern found past the head"] = float(found == ["Traceback"])
        Path(record["out_log"]).unlink()
    return peaks


def remote_run(folder: Path, slurm_env: Path, env: dict[str, str]) -> dict[str, float]:
    """A remote_slurm job through a loopback sshd (the tests' own): ssh processes and
    connections one run makes, and the delay from a cluster log line to the terminal."""
    sys.path.insert(0, str(ROOT))
    from tests.shim_recorder import Shims
    from tests.ssh_server import start_sshd

    shims = Shims(folder / "shims")
    (shims.bin / "srun").unlink()  # the cluster's real srun
    (shims.bin / "docker").unlink()
    server, process = start_sshd(folder, Path(env["SLURM_CONF"]), shims)
    try:
        cluster = folder / "cluster"
        shutil.copytree(ROOT / "tests/fixtures/trtllm", cluster / "TensorRT-LLM")
        command = "for i in $(seq 30); do date +%s.%N; sleep 0.37; done"
        work = _emit(
            folder,
            "remote",
            command,
            slurm_env,
            execution_scenario="remote_slurm",
            remote_repo_path=str(cluster / "TensorRT-LLM"),
            remote_work_dir=str(cluster / "work"),
            models_path="/cluster/models",
        )
        config = server.config(folder / "ssh_config")
        counted = folder / "ssh-calls.log"
        wrappers = folder / "ssh-wrapper"
        wrappers.mkdir()
        (wrappers / "ssh").write_text(f'#!/bin/sh\necho "$*" >>{counted}\nexec /usr/bin/ssh "$@"\n')
        (wrappers / "ssh").chmod(0o755)
        before = server.accepted()
        running = subprocess.Popen(
            [SCRIPTAST, "run", str(work), "--ssh-host", "cluster", "--ssh-config", str(config)],
            env={**env, "PATH": f"{wrappers}:{env['PATH']}", "SHIM_LOG": str(shims.log)},
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        assert running.stdout is not None
        delays = []
        for line in running.stdout:
            arrived = time.time()
            value = line.strip().split(": ")[-1]
            if value.replace(".", "").isdigit() and "." in value:
                delays.append(arrived - float(value))
        running.wait()
        calls = counted.read_text().splitlines()
        subprocess.run(["ssh", "-F", str(config), "-o", "ControlPath=" + _control(), "-O",
                        "exit", "cluster"], capture_output=True)  # fmt: skip
        return {
            "exit": running.returncode,
            "connections": server.accepted() - before,
            "ssh processes": len(calls),
            "masters": sum("ControlMaster=yes" in c for c in calls),
            "median delay": statistics.median(delays),
            "max delay": max(delays),
            "lines": len(delays),
        }
    finally:
        process.terminate()
        process.wait()


def _control() -> str:
    from scriptast.transports.ssh import control_dir

    return control_dir() + "/%C"


def long_line_rows(folder: Path, slurm_env: Path, env: dict[str, str]) -> list[tuple[str, str]]:
    """The rows of `long_line_peak`."""
    peaks = long_line_peak(folder, slurm_env, env)
    found = "yes" if peaks.pop("pattern found past the head") else "NO"
    return [
        (f"run: peak RSS following a {name}", f"{peak:.1f} MiB") for name, peak in peaks.items()
    ] + [("run: failure pattern at the end of the 1 GiB line found", found)]


def _environment() -> tuple[dict[str, str], str] | None:
    """run's environment for the test cluster SCRIPTAST_SLURM_CONF names, and that path."""
    conf = os.environ.get("SCRIPTAST_SLURM_CONF")
    if not conf or not Path(conf).is_file():
        return None
    env = {**os.environ, "SLURM_CONF": conf}
    env["PATH"] = f"{Path(SCRIPTAST).parent}:{env['PATH']}"
    return env, conf


def section() -> list[tuple[str, str]]:
    """The `run` rows of bench/run.py (or one row saying why there are none)."""
    found = _environment()
    if found is None:
        return [("scriptast run", "not measured: set SCRIPTAST_SLURM_CONF to a test cluster")]
    env = found[0]
    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory(prefix="scriptast-run-bench-") as scratch:
        folder = Path(scratch)
        slurm_env = folder / "slurm_env.json"
        probed = subprocess.run([SCRIPTAST, "probe-slurm", "-o", str(slurm_env)], env=env)
        assert probed.returncode == 0
        (folder / "many").mkdir()
        polls = calls_per_poll(folder / "many", slurm_env, env)
        rows += [
            ("run: 50 jobs followed, PASSED", f"{polls['passed']:.0f} of {polls['jobs']:.0f}"),
            ("run: squeue calls / polls (target 1)",
             f"{polls['calls per poll']:.2f} ({polls['squeue calls']:.0f} calls, "
             f"{polls['polls']:.0f} polls, the first listing "
             f"{polls['jobs listed by the first squeue']:.0f} jobs)"),
            ("run: final-state calls for all 50 (sacct, then scontrol)",
             f"{polls['final-state calls (sacct, scontrol)']:.0f}"),
        ]  # fmt: skip
        (folder / "lines").mkdir()
        delays = log_delay(folder / "lines", slurm_env, env)
        rows.append(
            ("run: log line written -> on the terminal (target <= 1 s)",
             f"median {statistics.median(delays):.2f} s, max {max(delays):.2f} s, "
             f"{len(delays)} lines")
        )  # fmt: skip
        (folder / "end").mkdir()
        delay, interval = verdict_delay(folder / "end", slurm_env, env)
        rows.append(
            (f"run: job left the queue -> verdict (target <= {interval:g} + 1 s)",
             f"{delay:.2f} s")
        )  # fmt: skip
        (folder / "limit").mkdir()
        rows.append(
            ("run: Slurm ended the job at its limit -> TIMEOUT (target <= 2 s)",
             f"{timeout_delay(folder / 'limit', slurm_env, env):.2f} s (Slurm's stamp is to "
             "the second)")
        )  # fmt: skip
        (folder / "cpu").mkdir()
        cpu, wall = run_cpu(folder / "cpu", slurm_env, env)
        rows.append(
            ("run: own CPU following a 60 s job (target <= 2% of a core)",
             f"{100 * cpu / wall:.2f}% ({cpu:.2f} s CPU in {wall:.1f} s)")
        )  # fmt: skip
        (folder / "long").mkdir()
        rows += long_line_rows(folder / "long", slurm_env, env)
        (folder / "remote").mkdir()
        remote = remote_run(folder / "remote", slurm_env, env)
        rows += [
            ("run remote_slurm: ssh connections opened (target 1)",
             f"{remote['connections']:.0f} ({remote['ssh processes']:.0f} ssh commands through "
             f"{remote['masters']:.0f} master; exit {remote['exit']:.0f})"),
            ("run remote_slurm: cluster log line -> on the terminal",
             f"median {remote['median delay']:.2f} s, max {remote['max delay']:.2f} s, "
             f"{remote['lines']:.0f} lines"),
        ]  # fmt: skip
    return rows


def long_line_section() -> list[tuple[str, str]]:
    """Only the long-line rows (`python bench/executor_bench.py long-line`)."""
    found = _environment()
    if found is None:
        return [("scriptast run", "not measured: set SCRIPTAST_SLURM_CONF to a test cluster")]
    env = found[0]
    with tempfile.TemporaryDirectory(prefix="scriptast-run-bench-") as scratch:
        folder = Path(scratch)
        slurm_env = folder / "slurm_env.json"
        probed = subprocess.run([SCRIPTAST, "probe-slurm", "-o", str(slurm_env)], env=env)
        assert probed.returncode == 0
        return long_line_rows(folder, slurm_env, env)


if __name__ == "__main__":
    chosen = long_line_section if sys.argv[1:] == ["long-line"] else section
    for name, value in chosen():
        print(f"{name:70}  {value}")
