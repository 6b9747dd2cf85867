"""Hostile-input harness: for each attack class, the cases tried and the cases handled.

    python -m tests.hostile.harness [--scale N]

prints the table docs/reliability.md quotes; tests/hostile/test_harness.py runs
it and requires every case handled. "Handled" means the promise of that class held: one error
line and nothing written, or output that keeps the rule the class attacks.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import msgspec

from scriptast.builders.read_request import build_request
from scriptast.errors import ScriptastError
from scriptast.model.image_ref import image_problem
from scriptast.pipeline.emit_job import Output, generate, write_outputs
from scriptast.readers.roundtrip.readback import sbatch_tokens
from tests.hostile.bad_inputs import CASES, ROOT, base_fields

SCRIPTAST = str(Path(sys.executable).parent / "scriptast")
SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*\Z")
HOSTILE_PIECES = [
    "/", "..", ".", "-", "--", "~", " ", "\t", "\n", "\r", "%", "%j", "\\", "'", '"', "$(id)",
    "`id`", "*", "?", "[", "{a,b}", ";", "&", "|", ">", "<", "#", "!", ":", ",", "=", "é",
    "\u00a0", "\u2028", "\u202e", "\ufeff", "\U0001f600", "a", "Llama-3.1", "x" * 120,
]  # fmt: skip


class Tally(msgspec.Struct):
    """One attack class: cases tried, cases handled, and the first few that were not."""

    name: str
    tried: int = 0
    handled: int = 0
    failures: list[str] = msgspec.field(default_factory=list)

    def record(self, case: str, ok: bool) -> None:
        self.tried += 1
        if ok:
            self.handled += 1
        elif len(self.failures) < 5:
            self.failures.append(case)


def tree(folder: Path) -> dict[str, bytes]:
    """Every file and folder under `folder` (folders as b'<dir>')."""
    found = {}
    for path in sorted(folder.rglob("*")):
        key = str(path.relative_to(folder))
        found[key] = b"<dir>" if path.is_dir() and not path.is_symlink() else path.read_bytes()
    return found


def _hostile_texts(rng: random.Random, count: int) -> list[str]:
    texts = list(HOSTILE_PIECES)
    while len(texts) < count:
        texts.append("".join(rng.choice(HOSTILE_PIECES) for _ in range(rng.randint(1, 5))))
    return texts[:count]


def _generate(root: Path, **changes: Any) -> Output:
    fields = {k: v for k, v in {**base_fields(root), **changes}.items() if v is not None}
    return generate(build_request(fields, {}), home=str(root / "home"))


def attack_bad_inputs(root: Path, scale: int) -> Tally:
    """Inputs that used to end in tracebacks: one line on stderr, exit 1, nothing written."""
    tally = Tally("bad inputs: one error line, exit 1, nothing written")
    environment = {**os.environ, "HOME": str(root / "home"), "XDG_CACHE_HOME": str(root.parent)}
    for name, make in sorted(CASES.items()):
        folder = root / name
        folder.mkdir()
        case = make(folder)
        before = tree(folder)
        feed: dict[str, Any] = {"stdin": subprocess.DEVNULL}
        if case.stdin is not None:
            feed = {"input": case.stdin}
        elif case.close_stdin:
            feed = {"preexec_fn": _close_stdin}
        result = subprocess.run(
            [SCRIPTAST, *case.argv], capture_output=True, env=environment, timeout=60, **feed
        )
        errors = result.stderr.decode("utf-8", "replace").splitlines()
        sweep = "--requests" in case.argv
        ok = (
            result.returncode == 1
            and "Traceback" not in result.stderr.decode("utf-8", "replace")
            and (len(errors) == 1 or (sweep and len(errors) >= 1))
            and all(_is_error_line(line, case.argv) for line in errors)
            and tree(folder) == before
        )
        tally.record(name, ok)
    return tally


def _close_stdin() -> None:
    os.close(0)


def _is_error_line(line: str, argv: tuple[str, ...]) -> bool:
    if argv[0] == "verify":
        return line.startswith(("error: ", argv[-1] + ":"))
    return line.startswith("error: ") or (" line " in line and ": error: " in line)


def attack_file_names(root: Path, scale: int) -> Tally:
    """Hostile model names: an error, or every file is one safe name directly in work_dir."""
    tally = Tally("model names: every file one safe name inside work_dir")
    rng = random.Random(1)
    work = root / "work"
    for index, name in enumerate(_hostile_texts(rng, 60 * scale)):
        try:
            output = _generate(root, model_name=name, work_dir=str(work))
        except ScriptastError:
            tally.record(repr(name), True)
            continue
        ok = all(
            os.path.dirname(f.path) == str(work) and SAFE_NAME.match(os.path.basename(f.path))
            for f in output.files
        )
        if ok and index % 10 == 0:  # and written for real, now and then
            write_outputs(output)
            ok = all(p.parent == work for p in root.rglob("*") if p.is_file() and "work" in p.parts)
        tally.record(repr(name), ok)
    return tally


def attack_images(root: Path, scale: int) -> Tally:
    """Hostile image references: an error, or a valid reference that no tool reads as an
    option, in both the docker command and the srun steps."""
    tally = Tally("image references: never a docker/srun option")
    rng = random.Random(2)
    images = [
        "--volume=/:/host", "-v/:/host", "--privileged", "-", "a b", "x;id", "$(id)", "nvcr.io/",
        "UPPER/case", "nvcr.io#", "#x", "a@b", "nvcr.io/nvidia/pytorch:24.01-py3",
        "nvcr.io#nvidia/pytorch:24.01-py3", "ubuntu", "localhost:5000/a:b",
    ]  # fmt: skip
    images += _hostile_texts(rng, 40 * scale)
    for image in images:
        for scenario in ("local_docker", "local_slurm"):
            changes: dict[str, Any] = {"container_image": image, "execution_scenario": scenario}
            if scenario == "local_docker":
                changes.update(slurm_env_file=None, partition=None, account=None)
                changes["env_check"] = {"gpus_per_node": 8}
            try:
                output = _generate(root, **changes)
            except ScriptastError:
                tally.record(f"{scenario} {image!r}", True)
                continue
            job = output.job
            ok = image_problem(job.image) is None and not job.image_enroot.startswith("-")
            tally.record(f"{scenario} {image!r}", ok)
    return tally


def attack_log_paths(root: Path, scale: int) -> Tally:
    """work_dirs with `%` and backslashes: an error, or --output that Slurm expands to the
    file job_spec names (`%%` is a literal `%`, `%j` the job id)."""
    tally = Tally("log paths: Slurm writes the file job_spec names")
    rng = random.Random(3)
    pieces = ["%", "%%", "%j", "%u", "%x", "100%used", "\\", "\\%j", "a", "é", "%A_%a"]
    for index in range(40 * scale):
        name = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 4)))
        work = root / f"w{index}" / name
        try:
            output = _generate(root, work_dir=str(work))
        except ScriptastError:
            tally.record(repr(name), "\\" in name)
            continue
        text = next(f.text for f in output.files if f.path.endswith(".slurm"))
        line = re.search(r"^#SBATCH( --output=.*)$", text, re.M)
        (token,) = sbatch_tokens(line.group(1)) if line else ("",)  # as sbatch reads the line
        expanded = _slurm_expand(token.removeprefix("--output="), "42")
        wanted = str(work / output.job_spec.log_file_pattern.replace("%j", "42"))
        tally.record(repr(name), expanded == wanted)
    return tally


def _slurm_expand(pattern: str, job_id: str) -> str:
    """Slurm's reading of an --output pattern, for the codes that matter here."""
    if "\\" in pattern:
        return pattern.replace("\\", "")
    codes = {"%": "%", "j": job_id}
    return re.sub(r"%(%|j|u|x|A|a)", lambda m: codes.get(m[1], f"<{m[1]}>"), pattern)


def attack_commands(root: Path, scale: int) -> Tally:
    """Generated commands: typed or passed through, they run as `bash -c CMD` runs them."""
    from hypothesis import HealthCheck, given, settings

    from tests.test_command_fidelity import RECORDER, check_same, commands

    tally = Tally("commands: run exactly as bash -c runs them")
    bin_dir = root / "bin"
    bin_dir.mkdir()
    (bin_dir / "rec").write_text(RECORDER)
    (bin_dir / "rec").chmod(0o755)

    @settings(
        max_examples=150 * scale,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(commands())
    def run(command: str) -> None:
        try:
            check_same(command, bin_dir, root / "run")
        except AssertionError:
            tally.record(repr(command), False)
            return
        tally.record(repr(command), True)

    run()
    return tally


def attack_write_faults(root: Path, scale: int) -> Tally:
    """A failure or a signal at every file-system call of a write: work_dir as it was."""
    tally = Tally("write faults: work_dir as it was, no temporaries")
    work = root / "work"
    write_outputs(_generate(root, work_dir=str(work), model_name="same"))
    for fault in ("oserror", "sigterm", "sigint"):
        for target in ("open", "replace", "link", "rename", "chmod"):
            for nth in range(1, 4):
                before = tree(work)
                output = _generate(root, work_dir=str(work), model_name="same",
                                   bench_cmd=f"trtllm-bench --model org/M{nth} throughput")  # fmt: skip
                failed = _with_fault(target, nth, fault, partial(write_outputs, output))
                # refused: as it was; written (the fault missed, or was worked around): whole
                ok = tree(work) == before if failed else _consistent(work)
                tally.record(f"{fault} at {target} #{nth}", ok)
    return tally


def _with_fault(target: str, nth: int, fault: str, action: Callable[[], None]) -> bool:
    """Run `action` with the nth call of os.<target> on a temporary failing (or signalled);
    whether `action` refused with a ScriptastError."""
    real = getattr(os, target)
    calls = [0]

    def faulty(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] == nth and ".scriptast-" in " ".join(map(str, args)):
            if fault == "oserror":
                raise OSError(5, "Input/output error")
            os.kill(os.getpid(), signal.SIGTERM if fault == "sigterm" else signal.SIGINT)
        return real(*args, **kwargs)

    setattr(os, target, faulty)
    try:
        action()
    except ScriptastError:
        return True
    finally:
        setattr(os, target, real)
    return False


def _consistent(work: Path) -> bool:
    import hashlib
    import json

    spec = json.loads((work / "job_spec.json").read_text())
    names = sorted(p.name for p in work.iterdir())
    return names == sorted([*spec["files"], "job_spec.json"]) and all(
        hashlib.sha256((work / n).read_bytes()).hexdigest() == d for n, d in spec["files"].items()
    )


def attack_sweeps(root: Path, scale: int) -> Tally:
    """A sweep of good and hostile lines: each line gets a result, each good line is written,
    a repeated work_dir fails the later line."""
    import json

    tally = Tally("sweep lines: each gets a result, good ones written")
    rng = random.Random(4)
    lines: list[bytes] = []
    good: dict[int, Path] = {}
    for number in range(1, 80 * scale + 1):
        work = root / "sweep" / f"w{number}"
        fields = {**base_fields(root), "work_dir": str(work)}
        kinds = ["good", "good", "good", "bytes", "surrogate", "nul", "json", "repeat"]
        kind = "good" if number == 1 else rng.choice(kinds)  # line 1 owns w1, which repeats
        if kind == "good":
            good[number] = work
            lines.append(json.dumps(fields).encode())
        elif kind == "bytes":
            lines.append(json.dumps(fields).encode()[:-2] + b"\xff}")
        elif kind == "surrogate":
            lines.append(json.dumps({**fields, "model_name": "\udc80"}).encode())
        elif kind == "nul":
            lines.append(json.dumps({**fields, "account": "a\u0000"}).encode())
        elif kind == "json":
            lines.append(b"{" + os.urandom(8).hex().encode())
        else:
            lines.append(json.dumps({**fields, "work_dir": str(root / "sweep" / "w1")}).encode())
    path = root / "sweep.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    result = subprocess.run(
        [SCRIPTAST, "emit", "--requests", str(path)],
        capture_output=True,
        env={**os.environ, "HOME": str(root / "home"), "XDG_CACHE_HOME": str(root.parent)},
        timeout=600,
    )
    reported = {int(m[1]) for m in re.finditer(rb"^\S+ line (\d+): error: ", result.stderr, re.M)}
    for number in range(1, len(lines) + 1):
        if number in good:
            ok = number not in reported and (good[number] / "job_spec.json").is_file()
        else:
            ok = number in reported
        tally.record(f"line {number}", ok and b"Traceback" not in result.stderr)
    return tally


def _lying_env(root: Path, name: str, change: Callable[[dict[str, Any]], None]) -> str:
    data: dict[str, Any] = json.loads((ROOT / "examples/slurm_env.json").read_text())
    change(data)
    path = root / f"{name}.json"
    path.write_text(json.dumps(data))
    return str(path)


def _batch(data: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = data["partitions"][0]
    return found


LIES: dict[str, Callable[[dict[str, Any]], None]] = {
    "gres gpu:0": lambda d: _batch(d).update(gres="gpu:0"),
    "gres gpu:h100:0": lambda d: _batch(d).update(gres="gpu:h100:0(IDX:N/A)"),
    "gpus_per_node 0": lambda d: _batch(d).update(gpus_per_node=0),
    "gpus_per_node -4": lambda d: _batch(d).update(gpus_per_node=-4),
    "a partition listed twice": lambda d: d["partitions"].append(dict(_batch(d))),
    "pmix.preferred not offered": lambda d: d["pmix"].update(preferred="pmix_v5"),
}
READ_ONLY_KEYS = ("UID", "EUID", "PPID", "BASHPID", "SHELLOPTS", "BASHOPTS", "BASH_VERSINFO",
                  "GROUPS", "RANDOM", "LINENO")  # fmt: skip


def attack_lying_values(root: Path, scale: int) -> Tally:
    """slurm_env.json that contradicts itself, time limits past MaxTime, custom_env keys bash
    will not assign: one error line naming the value, nothing written; a down partition warns;
    a gres list with `gpu:N` not first still sizes the job."""
    tally = Tally(
        "values that lie (slurm_env contradictions, UNLIMITED past MaxTime, read-only custom_env keys): one error line; a down partition warns"
    )
    environment = {**os.environ, "HOME": str(root / "home")}

    def refused(name: str, text: str, **changes: Any) -> None:
        folder = root / f"w{tally.tried}"
        request = root / f"r{tally.tried}.json"
        fields = {**base_fields(root), "work_dir": str(folder), **changes}
        request.write_text(json.dumps({k: v for k, v in fields.items() if v is not None}))
        done = subprocess.run([SCRIPTAST, "emit", "--request", str(request)], env=environment,
                              capture_output=True, text=True, timeout=60)  # fmt: skip
        lines = done.stderr.splitlines()
        ok = (done.returncode == 1 and len(lines) == 1 and lines[0].startswith("error: ")
              and text in lines[0] and not folder.exists())  # fmt: skip
        tally.record(name, ok)

    for _ in range(scale):
        for name, change in LIES.items():
            path = _lying_env(root, name.replace(" ", "_"), change)
            refused(name, "contradicts itself", slurm_env_file=path)
        for limit in ("UNLIMITED", "infinite", "1-00:00:00"):
            refused(
                f"time_limit {limit}",
                f"time_limit {limit} exceeds partition 'batch' MaxTime",
                time_limit=limit,
            )
        for key in READ_ONLY_KEYS:
            refused(f"custom_env {key}", f"custom_env key {key!r}", workflow_type="custom",
                    bench_cmd=None, custom_cmd="env", custom_env=f"{key}=1 FOO=2")  # fmt: skip
    down = _lying_env(root, "down", lambda d: _batch(d).update(state="down"))
    output = _generate(root, slurm_env_file=down)
    tally.record(
        "a down partition", any("is down in slurm_env.json" in w for w in output.job.warnings)
    )
    listed = _lying_env(
        root, "cray", lambda d: _batch(d).update(gres="craynetwork:4,gpu:4", gpus_per_node=None)
    )
    output = _generate(root, slurm_env_file=listed)
    script = next(f.text for f in output.files if f.path.endswith(".slurm"))
    tally.record("gres craynetwork:4,gpu:4", "#SBATCH --gres=gpu:2\n" in script)
    return tally


def attack_probe_outputs(root: Path, scale: int) -> Tally:
    """probe-slurm told to write where it cannot, or run from a deleted folder: one error
    line, exit 1, no traceback."""
    tally = Tally(
        "probe-slurm (-o in a missing folder, -o a folder, a deleted working directory): one error line"
    )
    for index in range(scale):
        gone = root / f"gone{index}"
        gone.mkdir()
        cases = {
            "missing folder": ([SCRIPTAST, "probe-slurm", "-o", str(root / "no" / "x.json")], root),
            "a folder": ([SCRIPTAST, "probe-slurm", "-o", str(root)], root),
            "deleted cwd": ([SCRIPTAST, "probe-slurm", "-o", str(root / "p.json")], gone),
        }
        for name, (argv, cwd) in cases.items():
            if name == "deleted cwd":
                done = subprocess.run(
                    ["bash", "-c", 'cd "$1" && rmdir "$1" && shift && exec "$@"', "-", str(cwd), *argv],
                    capture_output=True, text=True, timeout=60,
                )  # fmt: skip
            else:
                done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=cwd)
            lines = done.stderr.splitlines()
            ok = (done.returncode == 1 and len(lines) == 1 and lines[0].startswith("error: ")
                  and "Traceback" not in done.stderr and not (root / "p.json").exists())  # fmt: skip
            tally.record(name, ok)
    return tally


def _endless(root: Path, name: str, kind: str) -> str:
    """A FIFO nobody writes to, /dev/zero, or a 100 MB sparse file."""
    if kind == "zero":
        return "/dev/zero"
    path = root / name
    if kind == "fifo":
        os.mkfifo(path)
    else:
        with open(path, "wb") as stream:
            stream.truncate(100 * 1024 * 1024)
    return str(path)


def _emits_quickly(argv: list[str], env: dict[str, str], stdin: Any = subprocess.DEVNULL,
                   done_ok: bool = False) -> bool:  # fmt: skip
    try:
        done = subprocess.run([SCRIPTAST, *argv], capture_output=True, text=True, env=env,
                              stdin=stdin, timeout=30)  # fmt: skip
    except subprocess.TimeoutExpired:
        return False
    lines = done.stderr.splitlines()
    if done_ok and done.returncode == 0:
        return True
    return (done.returncode == 1 and len(lines) == 1 and lines[0].startswith("error: ")
            and len(lines[0]) < 1000)  # fmt: skip


def attack_endless_inputs(root: Path, scale: int) -> Tally:
    """FIFOs, /dev/zero and huge files as the request, sweep, slurm_env, properties or
    job_spec.json; a 1 MB field name; a bad SCRIPTAST_LOCK_TIMEOUT; a signal while emit waits
    for the lock: emit ends within 30 s with one error line (or, for job_spec.json, its job)."""
    tally = Tally(
        "inputs that never end (FIFOs, /dev/zero, 100 MB, 1 MB names, a bad lock timeout, a signal while locked): one error line, no hang"
    )
    env = {**os.environ, "HOME": str(root / "home")}
    repo = root / "repo"
    shutil.copytree(ROOT / "tests/fixtures/trtllm", repo)
    for round_ in range(scale):
        for kind in ("fifo", "zero", "huge"):
            endless = _endless(root, f"request{round_}{kind}.json", kind)
            tally.record(f"request {kind}", _emits_quickly(["emit", "--request", endless], env))
            sweep = _endless(root, f"sweep{round_}{kind}.jsonl", kind)
            tally.record(f"sweep {kind}", _emits_quickly(["emit", "--requests", sweep], env))
            fields = {**base_fields(root), "work_dir": str(root / f"w{round_}{kind}")}
            good = root / f"good{round_}{kind}.json"
            fields["slurm_env_file"] = _endless(root, f"env{round_}{kind}.json", kind)
            good.write_text(json.dumps(fields))
            tally.record(f"slurm_env {kind}", _emits_quickly(["emit", "--request", str(good)], env))
        with open("/dev/zero", "rb") as zero:
            tally.record("stdin /dev/zero", _emits_quickly(["emit", "--request", "-"], env, zero))
        properties = repo / "jenkins/current_image_tags.properties"
        properties.unlink()
        os.mkfifo(properties)
        fields = {**base_fields(root), "repo_root": str(repo), "work_dir": str(root / "wp")}
        request = root / f"props{round_}.json"
        request.write_text(json.dumps(fields))
        tally.record("properties fifo", _emits_quickly(["emit", "--request", str(request)], env))
        properties.unlink()
        shutil.copy(
            ROOT / "tests/fixtures/trtllm/jenkins/current_image_tags.properties", properties
        )
        work = root / f"spec{round_}"
        work.mkdir()
        os.mkfifo(work / "job_spec.json")
        request = root / f"spec{round_}.json"
        request.write_text(json.dumps({**base_fields(root), "work_dir": str(work)}))
        ok = _emits_quickly(["emit", "--request", str(request)], env, done_ok=True)
        tally.record("job_spec.json fifo", ok and (work / "job_spec.json").is_file())
        request = root / f"name{round_}.json"
        request.write_text(json.dumps({**base_fields(root), "x" * 1_000_000: 1}))
        tally.record("1 MB field name", _emits_quickly(["emit", "--request", str(request)], env))
        for value in ("nan", "inf", "-1", "soon", "1e400"):
            request = root / f"lock{round_}.json"
            request.write_text(json.dumps({**base_fields(root), "work_dir": str(root / "wl")}))
            argv = ["emit", "--request", str(request)]
            tally.record(f"lock timeout {value}",
                         _emits_quickly(argv, {**env, "SCRIPTAST_LOCK_TIMEOUT": value}))  # fmt: skip
        for signum in (signal.SIGTERM, signal.SIGINT):
            tally.record(f"{signum.name} while locked", _signalled_while_locked(root, env, signum))
    return tally


def _signalled_while_locked(root: Path, env: dict[str, str], signum: int) -> bool:
    import fcntl
    import time

    work = root / "locked"
    work.mkdir(exist_ok=True)
    request = root / "locked.json"
    request.write_text(json.dumps({**base_fields(root), "work_dir": str(work)}))
    holder = os.open(work, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(holder, fcntl.LOCK_EX)
    try:
        process = subprocess.Popen([SCRIPTAST, "emit", "--request", str(request)], env=env,
                                   stderr=subprocess.PIPE, text=True)  # fmt: skip
        time.sleep(1.0)
        process.send_signal(signum)
        try:
            _, err = process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            return False
        return process.returncode == 1 and len(err.splitlines()) == 1 and "interrupted" in err
    finally:
        os.close(holder)


def attack_sweep_identities(root: Path, scale: int) -> Tally:
    """Sweeps whose lines name one work_dir under other spellings (`//x`, `x/.`, a symlink):
    the later lines are refused; a pool worker killed mid-sweep costs no line its result."""
    tally = Tally(
        "sweeps (one work_dir spelled three ways; a worker killed by SIGKILL mid-sweep): every line a result, the same folder refused"
    )
    env = {**os.environ, "HOME": str(root / "home")}
    for round_ in range(scale):
        folder = root / f"same{round_}"
        folder.mkdir()
        (root / f"link{round_}").symlink_to(folder)
        spellings = [str(folder), "/" + str(folder), f"{folder}/.", str(root / f"link{round_}")]
        sweep = root / f"spell{round_}.jsonl"
        sweep.write_text("".join(json.dumps({**base_fields(root), "work_dir": s}) + "\n"
                                 for s in spellings))  # fmt: skip
        done = subprocess.run([SCRIPTAST, "emit", "--requests", str(sweep)], env=env,
                              capture_output=True, text=True, timeout=120)  # fmt: skip
        refused = [
            line for line in done.stderr.splitlines() if "is also the work_dir of line 1" in line
        ]
        tally.record("one folder, four spellings", done.returncode == 1 and len(refused) == 3)
        tally.record("a worker killed mid-sweep", _sweep_with_a_killed_worker(root, env, round_))
    return tally


def _sweep_with_a_killed_worker(root: Path, env: dict[str, str], round_: int) -> bool:
    import time

    lines = 600
    sweep = root / f"kill{round_}.jsonl"
    sweep.write_text("".join(
        json.dumps({**base_fields(root), "work_dir": str(root / f"k{round_}" / str(n)),
                    "model_name": f"m{n}"}) + "\n" for n in range(lines)
    ))  # fmt: skip
    process = subprocess.Popen([SCRIPTAST, "emit", "--requests", str(sweep)], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    killed = False
    deadline = time.monotonic() + 20
    while not killed and time.monotonic() < deadline and process.poll() is None:
        children = subprocess.run(["pgrep", "-P", str(process.pid)], capture_output=True,
                                  text=True).stdout.split()  # fmt: skip
        if len(list((root / f"k{round_}").glob("*/job_spec.json"))) > 50 and children:
            os.kill(int(children[0]), signal.SIGKILL)
            killed = True
        time.sleep(0.02)
    out, err = process.communicate(timeout=300)
    written = len(list((root / f"k{round_}").glob("*/job_spec.json")))
    failed = [line for line in err.splitlines() if ": error: " in line]
    return (
        killed
        and "Traceback" not in err
        and out
        == f"Generated {lines - len(failed)} of {lines} jobs from {sweep}; {len(failed)} failed\n"
        and written + len(failed) == lines
    )


def _perf_fields(root: Path, work: Path) -> dict[str, Any]:
    """The bundled perf_sanity request on a copy of the fixture repository (submit.py changes
    the modes of its helper scripts)."""
    fields: dict[str, Any] = json.loads(
        (ROOT / "examples/perf_sanity_local_slurm.json").read_text()
    )
    repo = root / "perf-repo"
    if not repo.exists():
        shutil.copytree(ROOT / "tests/fixtures/trtllm", repo)
    for name in ("slurm_env_file", "models_path"):
        fields[name] = str(ROOT / fields[name])
    config = Path(fields["perf_config_yaml"]).relative_to("tests/fixtures/trtllm")
    fields.update(repo_root=str(repo), perf_config_yaml=str(repo / config), work_dir=str(work))
    return fields


def attack_symlinks(root: Path, scale: int) -> Tally:
    """Symbolic links planted in work_dir (at a file emit writes, at a folder an earlier
    job_spec names, where submit.py writes): nothing outside work_dir is written, moved or
    removed; the link itself is replaced, or emit refuses with one line."""
    tally = Tally(
        "symlinks planted in work_dir (at a file emit writes, a folder an earlier job_spec names, where submit.py writes): nothing outside it changed"
    )
    env = {**os.environ, "HOME": str(root / "home")}
    outside = root / "outside"
    outside.mkdir()

    def emit(name: str, fields: dict[str, Any]) -> subprocess.CompletedProcess[str]:
        request = root / f"{name}.json"
        request.write_text(json.dumps(fields))
        return subprocess.run([SCRIPTAST, "emit", "--request", str(request)], env=env,
                              capture_output=True, text=True, timeout=120)  # fmt: skip

    for round_ in range(scale):
        victim = outside / f"victim{round_}"
        victim.write_text("precious\n")
        for name in ("llama_3_1_8b_instruct_bench.slurm", "job_spec.json"):
            work = root / f"file{round_}{name}"
            work.mkdir()
            (work / name).symlink_to(victim)
            done = emit(f"file{round_}{name}", {**base_fields(root), "work_dir": str(work)})
            ok = (done.returncode == 0 and victim.read_text() == "precious\n"
                  and not (work / name).is_symlink())  # fmt: skip
            tally.record(f"a link at {name}", ok)
        work = root / f"earlier{round_}"
        (work).mkdir()
        kept = outside / f"kept{round_}"
        kept.mkdir()
        (kept / "a.txt").write_text("theirs\n")
        digest = hashlib.sha256(b"theirs\n").hexdigest()
        (work / "job_spec.json").write_text(json.dumps({"files": {"sub/a.txt": digest}}))
        (work / "sub").symlink_to(kept)
        done = emit(f"earlier{round_}", {**base_fields(root), "work_dir": str(work)})
        kept_file = kept / "a.txt"
        tally.record("a link at a folder an earlier job_spec names",
                     done.returncode == 0 and kept_file.exists()
                     and kept_file.read_text() == "theirs\n")  # fmt: skip
        for name in ("slurm_launch.sh", "test_list.txt"):
            work = root / f"perf{round_}{name}"
            work.mkdir()
            (work / name).symlink_to(victim)
            done = emit(f"perf{round_}{name}", _perf_fields(root, work))
            ok = (done.returncode == 0 and victim.read_text() == "precious\n"
                  and (work / name).is_file() and not (work / name).is_symlink())  # fmt: skip
            tally.record(f"a link where submit.py writes {name}", ok)
    return tally


INJECTIONS = ["x'; id; '", "x\nid", "$(id)", "`id`", "x y", 'x"y', "x%jy", "x#y", "a;b",
              "${HOME}", "x\\y", "x|y"]  # fmt: skip


def _rename_batch(data: dict[str, Any], name: str) -> None:
    _batch(data)["name"] = name


def attack_perf_sanity_values(root: Path, scale: int) -> Tally:
    """Hostile values on their way to submit.py (which writes them into its launch script
    unquoted): refused with one line before submit.py runs, nothing written; a submit.py that
    writes more than it was asked is refused after it ran."""
    tally = Tally(
        "perf_sanity values submit.py would write unquoted (partition, account, work dir, repo, models root, mounts, config name; a submit.py adding options): one error line, nothing written"
    )
    env = {**os.environ, "HOME": str(root / "home")}
    rng = random.Random(3)

    def refused(name: str, fields: dict[str, Any], said: str = "") -> None:
        request = root / f"perf{tally.tried}.json"
        request.write_text(json.dumps(fields))
        work = Path(fields["work_dir"])
        before = tree(work) if work.is_dir() else None
        done = subprocess.run([SCRIPTAST, "emit", "--request", str(request)], env=env,
                              capture_output=True, text=True, timeout=120)  # fmt: skip
        lines = done.stderr.splitlines()
        ok = (done.returncode == 1 and len(lines) == 1 and lines[0].startswith("error: ")
              and said in lines[0]
              and (tree(work) == before if before is not None else not work.exists()))  # fmt: skip
        tally.record(name, ok)

    for _ in range(scale):
        for payload in rng.sample(INJECTIONS, len(INJECTIONS)):
            work = root / f"w{tally.tried}"
            fields = _perf_fields(root, work)
            refused(f"work_dir {payload!r}", {**fields, "work_dir": str(root / ("wd" + payload))})
            refused(f"llm_models_root {payload!r}", {**fields, "llm_models_root": "/m" + payload})
        for payload in ("x'y", "x;y", "x$y", "x y"):
            renamed = partial(_rename_batch, name="b" + payload)
            env_path = _lying_env(root, f"p{tally.tried}", renamed)
            fields = _perf_fields(root, root / f"w{tally.tried}")
            refused(
                f"partition {payload!r}",
                {**fields, "slurm_env_file": env_path, "partition": "b" + payload},
            )
    repo = root / "perf-repo"
    submit_py = repo / "jenkins/scripts/perf/local/submit.py"
    original = submit_py.read_text()
    submit_py.write_text(
        original.replace(
            'f"#SBATCH --time={args.time}"', 'f"#SBATCH --time={args.time}", "#SBATCH --exclusive"'
        )
    )
    refused(
        "a submit.py that adds an option",
        _perf_fields(root, root / "extra"),
        "asks for more than scriptast passed",
    )
    submit_py.write_text(original)
    return tally


def _example(name: str, root: Path, **changes: Any) -> dict[str, Any]:
    fields: dict[str, Any] = json.loads((ROOT / f"examples/{name}.json").read_text())
    for key in ("repo_root", "slurm_env_file", "models_path", "perf_config_yaml"):
        if key in fields and not fields[key].startswith("/"):
            fields[key] = str(ROOT / fields[key])
    return {**fields, **changes}


def attack_colliding_names(root: Path, scale: int) -> Tally:
    """Inputs at the paths emit writes (a custom_script where the runner or the .slurm goes, a
    perf config named like submit.py's launch script) and two files for one cluster path: one
    error line, the user's file untouched, nothing written."""
    tally = Tally(
        "names that collide (a custom_script at the runner's or the script's path, a perf config named slurm_launch.sh, two files for one cluster path): one error line, the user's file kept"
    )
    env = {**os.environ, "HOME": str(root / "home")}

    def refused(name: str, fields: dict[str, Any], kept: Path | None) -> None:
        request = root / f"c{tally.tried}.json"
        request.write_text(json.dumps(fields))
        before = kept.read_bytes() if kept is not None else None
        done = subprocess.run([SCRIPTAST, "emit", "--request", str(request)], env=env,
                              capture_output=True, text=True, timeout=120)  # fmt: skip
        lines = done.stderr.splitlines()
        ok = (done.returncode == 1 and len(lines) == 1 and lines[0].startswith("error: ")
              and (kept is None or kept.read_bytes() == before))  # fmt: skip
        tally.record(name, ok)

    for round_ in range(scale):
        for target in ("slurm_run_custom.sh", "custom_custom.slurm", "job_spec.json"):
            work = root / f"cw{round_}{target}"
            work.mkdir()
            mine = work / target
            mine.write_text("echo the user's own script\n")
            fields = _example("custom_local_slurm", root, work_dir=str(work),
                              custom_script=str(mine), custom_cmd=None)  # fmt: skip
            refused(f"custom_script at {target}", {k: v for k, v in fields.items() if v}, mine)
        elsewhere = root / f"scripts{round_}"
        elsewhere.mkdir()
        runner = elsewhere / "slurm_run_custom.sh"
        runner.write_text("echo mine\n")
        fields = _example("custom_remote_slurm", root, work_dir=str(root / f"cr{round_}"),
                          custom_script=str(runner), custom_cmd=None)  # fmt: skip
        refused("two files for one cluster path", {k: v for k, v in fields.items() if v}, runner)
        config = root / f"configs{round_}" / "slurm_launch.sh"
        config.parent.mkdir()
        shutil.copy(
            ROOT / "tests/fixtures/trtllm/tests/scripts/perf-sanity/aggregated/llama_8b_aggr.yaml",
            config,
        )
        repo = root / "perf-repo"
        if not repo.exists():
            shutil.copytree(ROOT / "tests/fixtures/trtllm", repo)
        fields = _example("perf_sanity_remote_slurm", root, work_dir=str(root / f"cp{round_}"),
                          repo_root=str(repo), perf_config_yaml=str(config),
                          remote_work_dir=str(root / f"cluster{round_}"))  # fmt: skip
        refused("a perf config named slurm_launch.sh", fields, config)
    return tally


WROTE_TEST_LIST = """    with open(test_list_path, "w") as stream:
        stream.write(test_id + "\\n")
"""


def _patched_submit(repo: Path, after_test_list: str) -> str:
    """The copy's submit.py with `after_test_list` run once it wrote test_list.txt; the
    original text, to put back."""
    submit_py = repo / "jenkins/scripts/perf/local/submit.py"
    original = submit_py.read_text()
    assert WROTE_TEST_LIST in original
    submit_py.write_text(original.replace(WROTE_TEST_LIST, WROTE_TEST_LIST + after_test_list))
    return original


def _listed_only(work: Path, keep: set[str]) -> bool:
    """work_dir holds job_spec.json, the files it lists, the user's `keep`, nothing else."""
    spec = json.loads((work / "job_spec.json").read_text())
    listed = {*spec["files"], "job_spec.json"}
    present = {str(p.relative_to(work)) for p in work.rglob("*") if p.is_file() or p.is_symlink()}
    return present - keep == listed


def attack_shared_work_dir(root: Path, scale: int) -> Tally:
    """Another process writing into work_dir while submit.py runs (its files neither taken nor
    removed, on success or failure), and an emit killed by SIGKILL mid-submit.py (the next
    complete emit leaves no file of it, puts a link it set aside back)."""
    tally = Tally(
        "a shared work_dir (another writer while submit.py runs; an emit killed by SIGKILL mid-run): others' files kept and not taken; no leftovers after the next emit"
    )
    env = {**os.environ, "HOME": str(root / "home")}
    fields = _perf_fields(root, root / "unused")
    repo = Path(fields["repo_root"])

    def emit(request: dict[str, Any], name: str) -> subprocess.CompletedProcess[str]:
        path = root / f"{name}.json"
        path.write_text(json.dumps(request))
        return subprocess.run([SCRIPTAST, "emit", "--request", str(path)], env=env,
                              capture_output=True, text=True, timeout=120)  # fmt: skip

    for round_ in range(scale):
        for fails in (False, True):
            work = root / f"shared{round_}{fails}"
            work.mkdir()
            step = "    time.sleep(1.0)\n" + (
                "    raise SystemExit('submit.py failed here')\n" if fails else ""
            )
            original = _patched_submit(repo, step.replace("time.sleep", "__import__('time').sleep"))
            stop = threading.Event()

            def writer(folder: Path = work, stop: threading.Event = stop) -> None:
                count = 0
                while not stop.is_set():
                    (folder / f"other-{count}.txt").write_text("another writer\n")
                    count += 1
                    stop.wait(0.1)

            thread = threading.Thread(target=writer)
            thread.start()
            try:
                done = emit(_perf_fields(root, work), f"shared{round_}{fails}")
            finally:
                stop.set()
                thread.join()
                (repo / "jenkins/scripts/perf/local/submit.py").write_text(original)
            others = sorted(work.glob("other-*.txt"))
            if fails:
                ok = (
                    done.returncode == 1
                    and len(others) > 5
                    and not (work / "test_list.txt").exists()
                )
            else:
                listed = json.loads((work / "job_spec.json").read_text())["files"]
                ok = (done.returncode == 0 and len(others) > 5
                      and not any(name.startswith("other-") for name in listed))  # fmt: skip
            tally.record(f"another writer, submit.py {'failing' if fails else 'passing'}", ok)
        tally.record("an emit killed mid-submit.py", _killed_then_emitted(root, env, repo, round_))
    return tally


def _killed_then_emitted(root: Path, env: dict[str, str], repo: Path, round_: int) -> bool:
    import time

    work = root / f"killed{round_}"
    work.mkdir()
    victim = root / f"linked{round_}"
    victim.write_text("the user's\n")
    (work / "slurm_launch.sh").symlink_to(victim)
    original = _patched_submit(repo, "    __import__('time').sleep(30)\n")
    request = root / f"killed{round_}.json"
    request.write_text(json.dumps(_perf_fields(root, work)))
    try:
        process = subprocess.Popen([SCRIPTAST, "emit", "--request", str(request)], env=env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   start_new_session=True)  # fmt: skip
        deadline = time.monotonic() + 30
        while not (work / "test_list.txt").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    finally:
        (repo / "jenkins/scripts/perf/local/submit.py").write_text(original)
    left_over = (work / "test_list.txt").exists() and not (work / "slurm_launch.sh").is_symlink()
    later = {**base_fields(root), "work_dir": str(work)}
    request.write_text(json.dumps(later))
    done = subprocess.run([SCRIPTAST, "emit", "--request", str(request)], env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    return (
        left_over
        and done.returncode == 0
        and (work / "slurm_launch.sh").is_symlink()
        and victim.read_text() == "the user's\n"
        and _listed_only(work, keep={"slurm_launch.sh"})
    )


ATTACKS: tuple[Callable[[Path, int], Tally], ...] = (
    attack_bad_inputs,
    attack_file_names,
    attack_images,
    attack_log_paths,
    attack_commands,
    attack_write_faults,
    attack_sweeps,
    attack_lying_values,
    attack_probe_outputs,
    attack_endless_inputs,
    attack_sweep_identities,
    attack_symlinks,
    attack_perf_sanity_values,
    attack_colliding_names,
    attack_shared_work_dir,
)


def run_all(scale: int = 1) -> list[Tally]:
    """Every attack class, each in a scratch folder of its own."""
    tallies = []
    for attack in ATTACKS:
        root = Path(tempfile.mkdtemp(prefix="scriptast-hostile-"))
        try:
            (root / "home").mkdir()
            tallies.append(attack(root, scale))
        finally:
            shutil.rmtree(root, ignore_errors=True)
    return tallies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=1, help="multiply the generated cases")
    scale = parser.parse_args().scale
    os.chdir(ROOT)
    print("| attack class | tried | handled |\n|---|---:|---:|")
    failed = False
    for tally in run_all(scale):
        print(f"| {tally.name} | {tally.tried:,} | {tally.handled:,} |")
        for failure in tally.failures:
            failed = True
            print(f"|   not handled: {failure} | | |")
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
