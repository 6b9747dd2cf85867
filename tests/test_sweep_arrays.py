"""`emit --requests FILE --array`: one Slurm job array a shape, split at MaxArraySize, each task
told its array and index, refusals per line, bad flags refused with nothing written, and the
arrays run under the loopback Slurm with each task's log in its own work dir."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from scriptast.pipeline.sweep_arrays import Emitted, describe, plan_arrays
from scriptast.schedulers.slurm.array_script import ArrayMember, ArrayShape
from tests.run_site import BENCH, RunSite
from tests.slurm_cluster import Cluster
from tests.test_categories import site_fields

ROOT = Path(__file__).resolve().parent.parent
SCRIPTAST = str(Path(sys.executable).parent / "scriptast")


def bench_line(work: Path, index: int, tp: int, **changes: Any) -> dict[str, Any]:
    fields: dict[str, Any] = json.loads((ROOT / "examples/bench_local_slurm.json").read_text())
    fields.update(
        work_dir=str(work / f"job{index:02d}"),
        bench_cmd=f"trtllm-bench --model org/M{index} throughput --tp {tp}",
    )
    fields.update(changes)
    return fields


def write_sweep(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def emit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SCRIPTAST, "emit", *args], capture_output=True, text=True, cwd=ROOT, timeout=300
    )


def spec(work_dir: Path) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((work_dir / "job_spec.json").read_text())
    return found


def test_a_sweep_of_two_shapes_is_two_arrays_and_each_task_knows_its_index(
    tmp_path: Path,
) -> None:
    lines = [bench_line(tmp_path, i, tp=1 + i % 2) for i in range(12)]
    sweep = write_sweep(tmp_path / "tp.jsonl", lines)
    result = emit("--requests", str(sweep), "--array", "--array-limit", "4")
    assert result.returncode == 0, result.stderr
    folder = tmp_path / "tp_arrays"
    assert f"Wrote 2 job arrays for 12 jobs into {folder}, at most 4 tasks" in result.stdout
    assert "tp_array1.slurm: 6 tasks (lines 2,4,6,8,10,12)" in result.stdout
    assert "apart from tp_array0: its --ntasks, --ntasks-per-node, gres differ" in result.stdout
    digest = hashlib.sha256(sweep.read_bytes()).hexdigest()
    for name, members in (("tp_array0", range(0, 12, 2)), ("tp_array1", range(1, 12, 2))):
        script = (folder / f"{name}.slurm").read_text()
        assert "#SBATCH --array=0-5%4\n" in script
        expected_gres = "gpu:1" if name == "tp_array0" else "gpu:2"
        assert f"#SBATCH --gres={expected_gres}\n" in script
        for index, line in enumerate(members):
            work_dir = tmp_path / f"job{line:02d}"
            task = spec(work_dir)["array"]
            assert (task["script"], task["index"], task["sweep"]) == (
                str(folder / f"{name}.slurm"),
                index,
                digest,
            )
            own = spec(work_dir)["script_path"]
            assert f" = {index} ]; then\n    exec bash {own}\nfi\n" in script
            assert task["output"] == str(folder / f"{name}_%A_%a.out")
            assert (
                task["script_sha256"]
                == hashlib.sha256((folder / f"{name}.slurm").read_bytes()).hexdigest()
            )
        assert subprocess.run(["bash", "-n", str(folder / f"{name}.slurm")]).returncode == 0
    manifest = json.loads((folder / "arrays.json").read_text())
    assert [len(a["work_dirs"]) for a in manifest["arrays"]] == [6, 6]
    assert manifest["sweep_sha256"] == digest


def test_a_large_sweep_tells_every_task_its_index_from_a_pool(tmp_path: Path) -> None:
    from scriptast.pipeline.worker_pool import SERIAL_BELOW

    count = SERIAL_BELOW + 8
    lines = [bench_line(tmp_path, i, tp=1 + i % 2) for i in range(count)]
    result = emit("--requests", str(write_sweep(tmp_path / "p.jsonl", lines)), "--array")
    assert result.returncode == 0, result.stderr
    assert "p_array0.slurm: 20 tasks (lines 1,3,5,7,9,11,...)" in result.stdout
    for line in range(count):
        task = spec(tmp_path / f"job{line:02d}")["array"]
        assert (Path(task["script"]).name, task["index"]) == (f"p_array{line % 2}.slurm", line // 2)
    assert not list(tmp_path.glob("job*/.scriptast-*"))


def test_a_sweep_above_max_array_size_is_split_and_said(tmp_path: Path) -> None:
    env = json.loads((ROOT / "examples/slurm_env.json").read_text())
    (tmp_path / "slurm_env.json").write_text(json.dumps({**env, "max_array_size": 5}))
    lines = [
        bench_line(tmp_path, i, tp=2, slurm_env_file=str(tmp_path / "slurm_env.json"))
        for i in range(12)
    ]
    result = emit("--requests", str(write_sweep(tmp_path / "big.jsonl", lines)), "--array")
    assert result.returncode == 0, result.stderr
    assert "Wrote 3 job arrays for 12 jobs" in result.stdout
    assert "big_array1.slurm: 5 tasks (lines 6-10)" in result.stdout
    assert "split from big_array0: the cluster's MaxArraySize is 5" in result.stdout
    folder = tmp_path / "big_arrays"
    sizes = [
        re.findall(r"--array=(\S+)", (folder / f"big_array{k}.slurm").read_text()) for k in range(3)
    ]
    assert sizes == [["0-4"], ["0-4"], ["0-1"]]
    assert spec(tmp_path / "job11")["array"]["index"] == 1


def test_jobs_whose_mounts_differ_are_apart_whatever_their_persistent_mode(
    tmp_path: Path,
) -> None:
    """The mounts come from the resolved job, which job_spec.json names only in persistent
    mode: without it, two models folders are still two shapes, and one is still one."""
    other = tmp_path / "other_models"
    other.mkdir()
    lines = [
        bench_line(
            tmp_path,
            i,
            tp=2,
            persistent_mode=False,
            **({"models_path": str(other)} if i == 2 else {}),
        )
        for i in range(3)
    ]
    result = emit("--requests", str(write_sweep(tmp_path / "m.jsonl", lines)), "--array")
    assert result.returncode == 0, result.stderr
    assert "Wrote 2 job arrays for 3 jobs" in result.stdout
    assert "m_array1.slurm: 1 task (lines 3): " in result.stdout
    assert result.stdout.rstrip().endswith("apart from m_array0: its mounts differ")


def test_run_submits_an_array_only_as_emit_wrote_it_for_these_work_dirs(tmp_path: Path) -> None:
    """The array script is emit's (its sha256) and its branch for a task's index runs that
    task's own script: a job_spec.json edited to another task's index, or an array script
    edited after emit, is refused before anything is submitted."""
    from scriptast.errors import RunError
    from scriptast.executor.job_files import load_job
    from scriptast.schedulers.slurm.launcher import SlurmLauncher

    sweep = write_sweep(tmp_path / "c.jsonl", [bench_line(tmp_path, i, tp=2) for i in range(2)])
    assert emit("--requests", str(sweep), "--array").returncode == 0
    works = [tmp_path / f"job0{i}" for i in range(2)]
    launcher = SlurmLauncher()
    launcher.check_array([load_job(str(w)) for w in works])
    edited = spec(works[1])
    edited["array"]["index"] = 0  # task 0's branch runs job00's script, not this one's
    (works[1] / "job_spec.json").write_text(json.dumps(edited))
    with pytest.raises(RunError, match=r"task 0 of .*c_array0\.slurm does not run this work dir"):
        launcher.check_array([load_job(str(works[1]))])
    launcher.check_array([load_job(str(works[0]))])
    script = tmp_path / "c_arrays/c_array0.slurm"
    script.write_text(script.read_text() + "echo more\n")
    with pytest.raises(RunError, match="is not the job array script emit wrote"):
        launcher.check_array([load_job(str(works[0]))])


def test_a_re_emit_with_fewer_shapes_removes_the_arrays_it_no_longer_writes(
    tmp_path: Path,
) -> None:
    sweep = tmp_path / "s.jsonl"
    write_sweep(sweep, [bench_line(tmp_path, i, tp=1 + i % 2) for i in range(4)])
    assert emit("--requests", str(sweep), "--array").returncode == 0
    assert (tmp_path / "s_arrays/s_array1.slurm").exists()
    write_sweep(sweep, [bench_line(tmp_path, i, tp=2) for i in range(4)])
    result = emit("--requests", str(sweep), "--array")
    assert result.returncode == 0, result.stderr
    assert not (tmp_path / "s_arrays/s_array1.slurm").exists()
    assert spec(tmp_path / "job00")["array"]["index"] == 0


def test_a_line_that_cannot_be_an_array_task_fails_alone_and_is_not_written(
    tmp_path: Path,
) -> None:
    remote: dict[str, Any] = json.loads((ROOT / "examples/bench_remote_slurm.json").read_text())
    lines = [
        bench_line(tmp_path, 0, tp=2),
        {**remote, "work_dir": str(tmp_path / "remote")},
        bench_line(tmp_path, 2, tp=2, persistent_mode=True),
        bench_line(tmp_path, 3, tp=2),
    ]
    result = emit("--requests", str(write_sweep(tmp_path / "m.jsonl", lines)), "--array")
    assert result.returncode == 1
    errors = result.stderr.splitlines()
    assert errors[0].startswith(f"{tmp_path}/m.jsonl line 2: error: --array writes Slurm job")
    assert "and this request is remote_slurm" in errors[0]
    assert errors[1].startswith(f"{tmp_path}/m.jsonl line 3: error: a persistent allocation")
    assert not (tmp_path / "remote").exists() and not (tmp_path / "job02").exists()
    assert "Wrote 1 job array for 2 jobs" in result.stdout
    assert spec(tmp_path / "job03")["array"]["index"] == 1


def docker_line(work: Path, index: int, **changes: Any) -> dict[str, Any]:
    fields: dict[str, Any] = json.loads((ROOT / "examples/custom_local_docker.json").read_text())
    fields.update(work_dir=str(work / f"job{index:02d}"), **changes)
    return fields


def test_a_sweeps_docker_jobs_are_its_processes_each_container_named_for_its_line(
    tmp_path: Path,
) -> None:
    lines = [bench_line(tmp_path, 0, tp=2), *(docker_line(tmp_path, i) for i in (1, 2, 3))]
    sweep = write_sweep(tmp_path / "d.jsonl", lines)
    result = emit("--requests", str(sweep), "--array", "--array-limit", "2")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == (
        "3 docker jobs (lines 2-4) run as processes here, at most 2 at once: run of their "
        "work dirs starts the next as one ends"
    )
    assert "Wrote 1 job array for 1 job into" in result.stdout
    digest = hashlib.sha256(sweep.read_bytes()).hexdigest()
    names = set()
    for index, line in enumerate((1, 2, 3)):
        written = spec(tmp_path / f"job{line:02d}")
        assert "array" not in written
        assert list(written)[-1] == "processes"  # where JobSpec has it: the field order holds
        assert written["processes"] == {"name": "d_processes", "index": index, "limit": 2,
                                        "sweep": digest}  # fmt: skip
        name = re.search(r"--name (\S+)", written["docker_cmd"])
        assert name is not None and name.group(1).endswith(f"_{line + 1}")
        names.add(name.group(1))
    assert len(names) == 3  # docker names a container once: side by side they differ
    manifest = json.loads((tmp_path / "d_arrays/arrays.json").read_text())
    assert manifest["processes"]["work_dirs"] == [str(tmp_path / f"job0{i}") for i in (1, 2, 3)]
    alone = emit("--requests", str(sweep), "--array")
    assert "one at a time (--array-limit N runs N at once)" in alone.stdout
    assert spec(tmp_path / "job02")["processes"]["limit"] == 1
    plain = emit("--requests", str(sweep))  # without --array: the job as it always was
    assert "processes" not in spec(tmp_path / "job02")
    assert "_3 " not in spec(tmp_path / "job02")["docker_cmd"] and plain.returncode == 0


def docker_sweep(tmp_path: Path, count: int, limit: int) -> tuple[list[Path], dict[str, str]]:
    """A sweep of `count` docker jobs emitted with --array-limit `limit`, each logging when it
    starts and ends into tmp_path/events; their work dirs, and the environment of the docker
    stand-in (which runs each container's command on this host, refusing a name in use)."""
    from tests.shim_recorder import Shims

    shims = Shims(tmp_path / "shims")
    fake = tmp_path / "pkgs" / "tensorrt_llm"  # what the docker payload checks it can import
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    task = tmp_path / "task.sh"
    task.write_text(
        f'echo "start $1 $(date +%s%N)" >> {tmp_path}/events\n'
        "sleep ${TASK_SLEEP:-1.5}\n"
        f'echo "end $1 $(date +%s%N)" >> {tmp_path}/events\n'
        'echo "task $1 done"\n'
    )
    lines = [
        docker_line(tmp_path, i, custom_script=None, custom_cmd=f"bash {task} {i}", install=False)
        for i in range(count)
    ]
    sweep = write_sweep(tmp_path / "d.jsonl", lines)
    result = emit("--requests", str(sweep), "--array", "--array-limit", str(limit))
    assert result.returncode == 0, result.stderr
    env = {
        **os.environ,
        "PATH": f"{shims.bin}:{Path(sys.executable).parent}:/usr/bin:/bin",
        "SHIM_LOG": str(shims.log),
        "PYTHONPATH": str(fake.parent),
        "XDG_DATA_HOME": str(tmp_path / "data"),  # the results store watch adds to
    }
    return [Path(line["work_dir"]) for line in lines], env


def most_at_once(events: Path) -> int:
    """The most jobs that ran at one moment, from their start and end lines."""
    moments = sorted(
        (int(stamp), 1 if word == "start" else -1)
        for word, _, stamp in (line.split() for line in events.read_text().splitlines())
    )
    running = most = 0
    for _, change in moments:
        running += change
        most = max(most, running)
    return most


def test_a_docker_sweep_runs_at_most_its_limit_at_once_and_each_is_judged(
    tmp_path: Path,
) -> None:
    work_dirs, env = docker_sweep(tmp_path, count=5, limit=2)
    result = subprocess.run(
        [SCRIPTAST, "run", "--no-store", *map(str, work_dirs)],
        capture_output=True, text=True, env=env, timeout=300, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "3 docker jobs of a sweep wait for their turn" in result.stderr
    assert most_at_once(tmp_path / "events") == 2  # two side by side, never three
    starts = [line.split()[1] for line in (tmp_path / "events").read_text().splitlines()
              if line.startswith("start")]  # fmt: skip
    assert sorted(starts) == ["0", "1", "2", "3", "4"]
    for index, work_dir in enumerate(work_dirs):
        found = record(work_dir)
        assert (found["verdict"], found["exit_code"], found["launch"]) == ("PASSED", 0, "process")
        assert f"task {index} done" in Path(found["out_log"]).read_text()
    rows = [row.split()[-1] for row in result.stdout.splitlines() if row.startswith("PASSED")]
    assert rows == [str(w) for w in work_dirs]  # the table keeps the order given


def test_a_docker_sweep_stopped_cancels_what_runs_and_starts_no_more(tmp_path: Path) -> None:
    from tests.run_site import interrupt, wait_for

    work_dirs, env = docker_sweep(tmp_path, count=3, limit=1)
    process = subprocess.Popen(
        [SCRIPTAST, "run", "--no-store", *map(str, work_dirs)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**env, "TASK_SLEEP": "600"}, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_for(work_dirs[0], "RUNNING", text="")
        time.sleep(0.5)
        code, _, err = interrupt(process)
    finally:
        if process.poll() is None:
            process.kill()
    assert code == 12, err  # CANCELLED
    assert record(work_dirs[0])["verdict"] == "CANCELLED"
    assert not (work_dirs[1] / "run.json").exists() and not (work_dirs[2] / "run.json").exists()
    for work_dir in work_dirs[1:]:
        assert f"{work_dir.name}: not started: the run was stopped before its turn" in err
    starts = [line for line in (tmp_path / "events").read_text().splitlines()]
    assert len(starts) == 1 and starts[0].startswith("start 0 ")


def test_a_docker_sweep_that_must_wait_is_not_detached(tmp_path: Path) -> None:
    work_dirs, env = docker_sweep(tmp_path, count=3, limit=2)
    result = subprocess.run(
        [SCRIPTAST, "run", "--detach", "--no-store", *map(str, work_dirs)],
        capture_output=True, text=True, env=env, timeout=300, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert (result.returncode, result.stderr.splitlines()) == (2, [result.stderr.strip()])
    assert result.stderr.startswith("error: 1 of the docker jobs given wait for their turn")
    assert not list(tmp_path.glob("*/run.json"))
    two = subprocess.run(
        [SCRIPTAST, "run", "--detach", "--no-store", *map(str, work_dirs[:2])],
        capture_output=True, text=True, env=env, timeout=300, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert two.returncode == 0, two.stderr
    watched = subprocess.run(
        [SCRIPTAST, "watch", *map(str, work_dirs[:2])],
        capture_output=True, text=True, env=env, timeout=300, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert watched.returncode == 0, watched.stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--array-limit", "0"], "error: --array-limit 0: give how many tasks"),
        (["--array-limit", "-3"], "error: --array-limit -3: give how many tasks"),
        ([], None),
    ],
    ids=["zero", "negative", "without-array"],
)
def test_a_bad_array_limit_is_refused_and_nothing_is_written(
    tmp_path: Path, args: list[str], said: str | None
) -> None:
    sweep = write_sweep(tmp_path / "s.jsonl", [bench_line(tmp_path, 0, tp=2)])
    if said is None:  # --array-limit without --array
        result = emit("--requests", str(sweep), "--array-limit", "2")
        said = "error: --array-limit limits the tasks of a job array: add --array"
    else:
        result = emit("--requests", str(sweep), "--array", *args)
    assert (result.returncode, result.stderr.splitlines()) == (1, [result.stderr.strip()])
    assert result.stderr.startswith(said)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]


def test_array_without_a_sweep_is_refused(tmp_path: Path) -> None:
    result = emit(
        "--request", str(ROOT / "examples/bench_local_slurm.json"), "--array",
        "--work-dir", str(tmp_path / "w"),
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.startswith("error: --array groups the jobs of a sweep into job arrays")
    assert not (tmp_path / "w").exists()


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SCRIPTAST, "run", *args], capture_output=True, text=True, cwd=ROOT, timeout=300
    )


def test_array_task_runs_only_the_tasks_asked_from_work_dirs_or_an_array_script(
    tmp_path: Path,
) -> None:
    lines = [bench_line(tmp_path, i, tp=1 + i % 2) for i in range(6)]
    sweep = write_sweep(tmp_path / "tp.jsonl", lines)
    assert emit("--requests", str(sweep), "--array", "--array-limit", "2").returncode == 0
    folder = tmp_path / "tp_arrays"
    work_dirs = [str(tmp_path / f"job{i:02d}") for i in range(6)]
    both = run_cli("--dry-run", "--array-task", "1", *work_dirs)
    assert both.returncode == 0, both.stderr
    assert both.stdout.splitlines() == [
        f"sbatch --parsable --array=1%2 {folder}/tp_array{k}.slurm" for k in (0, 1)
    ]
    script = str(folder / "tp_array1.slurm")
    one = run_cli("--dry-run", script, "--array-task", "0,2")
    assert one.stdout.splitlines() == [f"sbatch --parsable --array=0,2%2 {script}"]
    whole = run_cli("--dry-run", script)
    assert whole.stdout.splitlines() == [f"sbatch --parsable --array=0-2%2 {script}"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--array-task", "7", "{work}/job00"], "no task of index 7 among the work dirs given"),
        (["--array-task", "1-x", "{work}/job00"], "--array-task '1-x' is not a list of task"),
        (["--array-task", "3-1", "{work}/job00"], "the range 3-1 runs backwards"),
        (["--array-task", "0", "{work}/alone"], "{work}/alone is not a task of a job array"),
        (["{work}/tp.jsonl"], "{work}/tp.jsonl is a file, not a work dir"),
        (["{work}/other.slurm"], "{work}/other.slurm is a file, not a work dir"),
        (["{work}/tp_arrays/stray.slurm"], "is not an array script {work}/tp_arrays/arrays.json"),
    ],
    ids=["no-such-index", "not-indices", "backwards", "no-array", "a-file", "not-an-array",
         "not-listed"],
)  # fmt: skip
def test_a_bad_array_task_is_refused_and_nothing_is_submitted(
    tmp_path: Path, args: list[str], said: str
) -> None:
    sweep = write_sweep(tmp_path / "tp.jsonl", [bench_line(tmp_path, i, tp=2) for i in range(2)])
    assert emit("--requests", str(sweep), "--array").returncode == 0
    alone = bench_line(tmp_path, 9, tp=2, work_dir=str(tmp_path / "alone"))
    request = tmp_path / "alone.json"
    request.write_text(json.dumps(alone))
    assert emit("--request", str(request)).returncode == 0
    (tmp_path / "other.slurm").write_text("#!/bin/bash\n")
    (tmp_path / "tp_arrays/stray.slurm").write_text("#!/bin/bash\n")
    result = run_cli("--no-store", *(a.format(work=tmp_path) for a in args))
    # run's errors exit 2 (its exit codes: 0 passed, 2 error, 10 and up a verdict)
    assert (result.returncode, result.stderr.splitlines()) == (2, [result.stderr.strip()])
    assert result.stderr.startswith("error: ")
    assert said.format(work=tmp_path) in result.stderr
    assert not list(tmp_path.glob("*/run.json"))


def _task(line: int, workflow: str, shape: ArrayShape, limit: int = 1001) -> tuple[int, Emitted]:
    member = ArrayMember(work_dir=f"/w/{line}", script=f"/w/{line}/j.slurm")
    return line, Emitted(member=member, shape=shape, max_array_size=limit, workflow=workflow)


SHAPE = ArrayShape(
    partition="batch", account="a", nodes=1, ntasks=2, ntasks_per_node=2, gres="gpu:2",
    time_limit="01:00:00", image="img", mounts="",
)  # fmt: skip


def test_workflows_of_one_shape_share_an_array_and_it_is_said() -> None:
    tasks = [_task(1, "bench", SHAPE), _task(2, "custom", SHAPE), _task(3, "bench", SHAPE)]
    planned = plan_arrays("s", tasks)
    assert [(a.name, a.lines) for a in planned] == [("s_array0", (1, 2, 3))]
    said = describe(planned, "/f", None)
    assert said[1].endswith("; workflows bench, custom share this shape")


def test_a_shape_the_cluster_takes_no_arrays_of_is_an_error() -> None:
    from scriptast.errors import ScriptastError

    with pytest.raises(ScriptastError, match=r"takes no job arrays \(MaxArraySize 0"):
        plan_arrays("s", [_task(1, "bench", SHAPE, limit=0)])


@pytest.mark.slurm
def test_each_array_runs_under_slurm_each_task_running_its_work_dirs_script(
    tmp_path: Path, cluster: Cluster
) -> None:
    """Two partitions, two arrays; task i runs work dir i's own script, its output the
    array's (`%A_%a` in the array's folder)."""
    base: dict[str, Any] = json.loads((ROOT / "examples/custom_local_slurm.json").read_text())
    lines = [
        {
            **base,
            "work_dir": str(tmp_path / f"job{i}"),
            "custom_cmd": f"echo task-{i}-says-hello",
            "partition": "batch" if i % 2 else "short",
            "account": "root",
            "install": False,
            "time_limit": "00:20:00",
        }
        for i in range(4)
    ]
    env_file = tmp_path / "slurm_env.json"
    probed = subprocess.run(
        [SCRIPTAST, "probe-slurm", "-o", str(env_file)], env=cluster.env(), capture_output=True
    )
    assert probed.returncode == 0, probed.stderr
    for line in lines:
        line["slurm_env_file"] = str(env_file)
    result = emit("--requests", str(write_sweep(tmp_path / "two.jsonl", lines)), "--array")
    assert result.returncode == 0, result.stderr
    assert "Wrote 2 job arrays for 4 jobs" in result.stdout
    for name in ("two_array0", "two_array1"):
        submitted = cluster.run("sbatch", "--parsable", str(tmp_path / f"two_arrays/{name}.slurm"))
        assert submitted.returncode == 0, submitted.stderr
        array_id = submitted.stdout.strip().split(";")[0]
        members = json.loads((tmp_path / "two_arrays/arrays.json").read_text())["arrays"]
        work_dirs = next(a["work_dirs"] for a in members if a["script"].endswith(f"{name}.slurm"))
        for index, work_dir in enumerate(work_dirs):
            task = spec(Path(work_dir))["array"]
            log = Path(task["output"].replace("%A", array_id).replace("%a", str(index)))
            deadline = time.monotonic() + 120
            while "finished with exit code" not in (log.read_text() if log.exists() else ""):
                assert time.monotonic() < deadline, f"no end in {log}"
                time.sleep(0.5)
            said = log.read_text()
            assert f"task-{Path(work_dir).name[3:]}-says-hello" in said
            assert "finished with exit code 0" in said


def custom_sweep(tmp_path: Path, cluster: Cluster, commands: list[str]) -> list[Path]:
    """A sweep of custom jobs on the loopback cluster, its arrays emitted: the work dirs. Even
    lines go to partition short, odd ones to batch (two shapes)."""
    base: dict[str, Any] = json.loads((ROOT / "examples/custom_local_slurm.json").read_text())
    env_file = tmp_path / "slurm_env.json"
    probed = subprocess.run(
        [SCRIPTAST, "probe-slurm", "-o", str(env_file)], env=cluster.env(), capture_output=True
    )
    assert probed.returncode == 0, probed.stderr
    lines = [
        {
            **base,
            "work_dir": str(tmp_path / f"job{i:02d}"),
            "custom_cmd": command,
            "partition": "batch" if i % 2 else "short",
            "account": "root",
            "install": False,
            "time_limit": "00:20:00",
            "slurm_env_file": str(env_file),
        }
        for i, command in enumerate(commands)
    ]
    result = emit("--requests", str(write_sweep(tmp_path / "cs.jsonl", lines)), "--array")
    assert result.returncode == 0, result.stderr
    return [Path(line["work_dir"]) for line in lines]


def scriptast_on(cluster: Cluster, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SCRIPTAST, *args], capture_output=True, text=True, env=cluster.env(), timeout=600
    )


def record(work_dir: Path) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((work_dir / "run.json").read_text())
    return found


@pytest.mark.slurm
def test_run_submits_one_sbatch_an_array_and_judges_every_task(
    tmp_path: Path, cluster: Cluster
) -> None:
    commands = [f"echo task-{i}-done" for i in range(12)]
    commands[5] = "echo task-5-fails; exit 3"
    work_dirs = custom_sweep(tmp_path, cluster, commands)
    dry = scriptast_on(cluster, "run", "--dry-run", *map(str, work_dirs))
    assert dry.stdout.splitlines() == [
        f"sbatch --parsable --array=0-5 {tmp_path}/cs_arrays/cs_array{k}.slurm" for k in (0, 1)
    ]
    result = scriptast_on(cluster, "run", "--no-store", *map(str, work_dirs))
    assert result.returncode == 10, result.stderr  # the worst verdict: FAILED
    records = [record(w) for w in work_dirs]
    assert {r["launch"] for r in records} == {"array"}
    arrays = {r["job_id"].split("_")[0] for r in records}
    assert len(arrays) == 2  # one sbatch an array
    for line, (work_dir, each) in enumerate(zip(work_dirs, records, strict=True)):
        assert each["job_id"].endswith(f"_{line // 2}")
        assert each["out_log"].startswith(f"{tmp_path}/cs_arrays/cs_array{line % 2}_")
        link = work_dir / f"custom_custom_{each['job_id']}.out"
        assert os.readlink(link) == each["out_log"]
        if line == 5:
            assert (each["verdict"], each["exit_code"]) == ("FAILED", 3)
            assert "task-5-fails" in Path(each["out_log"]).read_text()
        else:
            assert (each["verdict"], each["exit_code"]) == ("PASSED", 0)
            assert f"task-{line}-done" in Path(each["out_log"]).read_text()
    rows = [line for line in result.stdout.splitlines() if str(tmp_path) in line]
    assert f"FAILED  {work_dirs[5]}" in result.stdout
    assert [row.split()[0] for row in rows if row.split()[0] in ("PASSED", "FAILED")].count(
        "PASSED"
    ) == 11
    assert result.stdout.rstrip().endswith("1 FAILED, 11 PASSED")


@pytest.mark.slurm
def test_one_task_of_an_array_runs_alone_with_array_task(tmp_path: Path, cluster: Cluster) -> None:
    work_dirs = custom_sweep(tmp_path, cluster, [f"echo task-{i}-done" for i in range(4)])
    script = tmp_path / "cs_arrays/cs_array0.slurm"  # lines 0 and 2: indices 0 and 1
    result = scriptast_on(cluster, "run", "--no-store", str(script), "--array-task", "1")
    assert result.returncode == 0, result.stderr
    ran = record(work_dirs[2])
    assert (ran["verdict"], ran["launch"]) == ("PASSED", "array")
    assert ran["job_id"].endswith("_1")
    assert "task-2-done" in Path(ran["out_log"]).read_text()
    assert [w.name for w in work_dirs if (w / "run.json").exists()] == ["job02"]


@pytest.mark.slurm
def test_cancel_of_one_task_cancels_only_it(tmp_path: Path, cluster: Cluster) -> None:
    work_dirs = custom_sweep(tmp_path, cluster, ["sleep 300"] * 3)[0::2]  # short's two tasks
    detached = scriptast_on(cluster, "run", "--no-store", "--detach", *map(str, work_dirs))
    assert detached.returncode == 0, detached.stderr
    first, second = (record(w)["job_id"] for w in work_dirs)
    try:
        cancelled = subprocess.run(
            [SCRIPTAST, "cancel", str(work_dirs[1])], capture_output=True, text=True,
            env=cluster.env(SCRIPTAST_RESULTS=str(tmp_path / "results.db")), timeout=300,
        )  # fmt: skip
        assert cancelled.returncode == 0, cancelled.stderr
        assert record(work_dirs[1])["verdict"] == "CANCELLED"
        shown = cluster.run("squeue", "--noheader", "--array", "--jobs", f"{first},{second}",
                            "--Format", "JobArrayID:|,State:|")  # fmt: skip
        states = dict(line.strip().split("|")[:2] for line in shown.stdout.splitlines())
        assert states.get(first) in ("PENDING", "RUNNING"), shown.stdout
        assert states.get(second, "CANCELLED") == "CANCELLED", shown.stdout
    finally:
        cluster.run("scancel", first.split("_")[0])


SWEEP_POINTS = [(tp, users) for tp in (1, 2) for users in (1, 8, 64)]


@pytest.mark.slurm
def test_a_bench_sweep_is_stored_tabled_and_drawn(runs: RunSite, tmp_path: Path) -> None:
    """A stand-in trtllm-bench whose throughput grows with tp and concurrency (and each
    user's share shrinks): the tasks go into the store with their sweep, the table marks the
    setups no other beats on both throughput per GPU and per user, and the curve is drawn."""
    lines = []
    for tp, users in SWEEP_POINTS:
        chosen = {"account": "root", "partition": "batch", "workflow_type": "bench",
                  "work_dir": str(runs.site.work(f"tp{tp}_c{users}")),
                  "bench_cmd": f"{BENCH} --tp {tp} --concurrency {users}"}  # fmt: skip
        lines.append(site_fields(runs.site, chosen))
    sweep = write_sweep(tmp_path / "curve.jsonl", lines)
    emitted = runs.run("emit", "--requests", str(sweep), "--array")
    assert "Wrote 2 job arrays for 6 jobs" in emitted.stdout, emitted.stderr
    store = str(tmp_path / "results.db")
    work_dirs = [line["work_dir"] for line in lines]
    done = runs.run("run", "--results", store, *work_dirs, SHIM_BENCH_TPS="1000")
    assert done.returncode == 0, done.stdout + done.stderr
    array_id = record(Path(work_dirs[0]))["job_id"].split("_")[0]
    listed = runs.run("results", "list", "--results", store, "--sweep", array_id)
    assert sorted(line.split()[-1] for line in listed.stdout.splitlines()[1:]) == sorted(
        work_dirs[:3]  # tp1's three share one array
    )
    digest = hashlib.sha256(sweep.read_bytes()).hexdigest()
    whole = runs.run("results", "list", "--results", store, "--sweep", digest[:8])
    assert len(whole.stdout.splitlines()) == 1 + 6, whole.stdout
    shown = runs.run("results", "sweep", "--results", store, "--format", "json")
    assert shown.returncode == 0, shown.stderr
    document = json.loads(shown.stdout)
    assert document["sweep"] == digest
    front = {Path(t["work_dir"]).name for t in document["tasks"] if t["pareto"]}
    assert front == {"tp1_c8", "tp1_c64", "tp2_c1", "tp2_c8", "tp2_c64"}  # tp1_c1: tp2_c8 beats it
    tp2_c8 = next(t for t in document["tasks"] if t["work_dir"].endswith("tp2_c8"))
    assert tp2_c8["setup"]["tp"] == 2 and tp2_c8["setup"]["concurrency"] == 8
    assert tp2_c8["figures"]["per_gpu_output_throughput"] == pytest.approx(
        1000 * 2**0.85 * 8 / 24 / 2
    )
    table = runs.run("results", "sweep", digest[:10], "--results", store)
    marked = {line.split()[-1] for line in table.stdout.splitlines() if line.startswith("*")}
    assert {Path(w).name for w in marked} == front
    as_csv = runs.run("results", "sweep", array_id, "--results", store, "--format", "csv")
    assert as_csv.stdout.splitlines()[0].startswith("run_id,work_dir,verdict,tp,pp,ep,")
    assert len(as_csv.stdout.splitlines()) == 1 + 3
    latency = runs.run("results", "sweep", "--results", store, "--against", "latency",
                       "--format", "json")  # fmt: skip
    assert json.loads(latency.stdout)["front"]["y"] == "request_latency_p50"
    png = tmp_path / "curve.png"
    drawn = runs.run("results", "plot", "--sweep", "latest", "-o", str(png), "--results", store)
    assert drawn.returncode == 0, drawn.stderr
    assert drawn.stdout == f"{png}: sweep {digest}, 6 setup(s), 5 on the Pareto front\n"
    from matplotlib import image

    pixels = image.imread(str(png))
    assert pixels.shape[:2] == (600, 900) and pixels.std() > 0.05  # drawn on, not blank


def test_a_sweep_the_store_does_not_hold_is_said(tmp_path: Path) -> None:
    store = str(tmp_path / "results.db")
    from scriptast.results.store.database import Store
    from scriptast.results.store.location import locate

    Store.open(locate(store), create=True).close()
    for args, said in (
        ([], "error: no sweep in the results store"),
        (["deadbeef"], "error: no stored task of sweep deadbeef"),
        (["not-hex!"], "error: --sweep 'not-hex!' is neither a job array's id"),
        (["--against", "speed"], "error: --against speed: give per-user or latency"),
        (["--format", "xml"], "error: --format xml: give table, csv or json"),
    ):
        done = subprocess.run([SCRIPTAST, "results", "sweep", *args, "--results", store],
                              capture_output=True, text=True)  # fmt: skip
        assert (done.returncode, done.stderr.startswith(said)) == (1, True), done.stderr


@pytest.mark.slurm
def test_cancel_of_the_sweep_cancels_each_array_with_one_scancel(
    tmp_path: Path, cluster: Cluster
) -> None:
    work_dirs = custom_sweep(tmp_path, cluster, ["sleep 300"] * 4)
    detached = scriptast_on(cluster, "run", "--no-store", "--detach", *map(str, work_dirs))
    assert detached.returncode == 0, detached.stderr
    wrappers, calls = tmp_path / "bin", tmp_path / "scancel.log"
    wrappers.mkdir()
    real = subprocess.run(["sh", "-c", "command -v scancel"], capture_output=True, text=True)
    (wrappers / "scancel").write_text(
        f'#!/bin/sh\necho "$*" >>{calls}\nexec {real.stdout.strip()} "$@"\n'
    )
    (wrappers / "scancel").chmod(0o755)
    ids = [record(w)["job_id"] for w in work_dirs]
    try:
        env = cluster.env(SCRIPTAST_RESULTS=str(tmp_path / "results.db"))
        env["PATH"] = f"{wrappers}:{env['PATH']}"
        cancelled = subprocess.run([SCRIPTAST, "cancel", *map(str, work_dirs)],
                                   capture_output=True, text=True, env=env, timeout=300)  # fmt: skip
        assert cancelled.returncode == 0, cancelled.stderr
        assert [record(w)["verdict"] for w in work_dirs] == ["CANCELLED"] * 4
        sent = sorted(calls.read_text().splitlines())
        by_array = sorted(" ".join(i for i in ids if i.startswith(a + "_")) for a in
                          {i.split("_")[0] for i in ids})  # fmt: skip
        assert sent == by_array  # one scancel an array, naming its tasks
    finally:
        for array_id in {i.split("_")[0] for i in ids}:
            cluster.run("scancel", array_id)


@pytest.mark.slurm
def test_a_requeued_task_is_judged_on_its_last_run_as_a_batch_job_is(
    tmp_path: Path, cluster: Cluster
) -> None:
    flag = tmp_path / "requeued_flag"
    command = (
        f"if [ ! -e {flag} ]; then touch {flag}; echo first-run; sleep 30; fi; echo second-run"
    )
    work_dirs = custom_sweep(tmp_path, cluster, [command, "echo other-task"])
    process = subprocess.Popen(
        [SCRIPTAST, "run", "--no-store", "--poll-max", "2", *map(str, work_dirs)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cluster.env(),
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            assert time.monotonic() < deadline, "the task never ran"
            if (work_dirs[0] / "run.json").exists():
                found = record(work_dirs[0])
                log = Path(found["out_log"] or "/nonexistent")  # "" while being submitted
                if log.exists() and "first-run" in log.read_text():
                    break
            time.sleep(0.2)
        task_id = found["job_id"]
        requeued = cluster.run("scontrol", "requeue", task_id)
        assert requeued.returncode == 0, requeued.stderr
        for _ in range(50):  # Slurm holds a requeued job back a while; let it start again now
            if cluster.run("scontrol", "update", f"jobid={task_id}", "starttime=now").returncode:
                break
            if "RUNNING" in cluster.run("squeue", "-h", "-j", task_id, "-o", "%T").stdout:
                break
            time.sleep(0.2)
        out, err = process.communicate(timeout=180)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, err
    found = record(work_dirs[0])
    assert (found["verdict"], found["restarts"], found["job_id"]) == ("PASSED", 1, task_id)
    assert "--- the job runs again (requeued): its log from the start ---" in out
    assert any("second-run" in line for line in found["last_lines"])
    assert not any("first-run" in line for line in found["last_lines"])
    assert record(work_dirs[1])["verdict"] == "PASSED"
