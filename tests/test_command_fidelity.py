"""A user command runs exactly as `bash -c CMD` would: the emitted step (typed argv when the
tokenizer calls it plain, `bash -c` text otherwise) and `bash -c CMD` are run in two copies of
one folder under an argv-recording stand-in, and must record, print, write and exit alike."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import example, given, settings, strategies as st

from scriptast.builders.categories.bench.work import split_bench
from scriptast.builders.resolution.commands import user_command
from scriptast.emitters.bash import BashEmitter
from scriptast.errors import ScriptastError
from scriptast.schedulers.shell import payload, run_command
from tests.profiles import scaled

RECORDER = (
    '#!/bin/bash\nprintf "%s\\0" "$@" >>"$REC_LOG"\nprintf "\\n" >>"$REC_LOG"\necho "rec $#"\n'
)

WORDS = [
    "rec", "rec", "rec", "a", "a", "b.py", "--tp=2", "'q s'", "é", "-x", "'it''s'", "1", "b.py", "*.py", "?.py", "[ab].py", "{a,b}", "{1..3}", "x{y}",
    "cfg=~/x", "~", "~/y", "x=1", "--tp=2", "'q s'", '"d $HOME"', "$HOME", '"$HOME"', "a\\ b",
    "#c", "a#b", "if", "time", "!", "-e", "é", "\u00a0", "a\u00a0", "\x0b", "\x0c", "\u2028",
    "'\u00a0'", "\\*", '"*"', "'*'", "a\\", "\\", '""', "''", "\\n", "\\$x",
]  # fmt: skip
REDIRECTS = [
    ">out", "2>err", "10>/dev/null", "3>three", ">>app", "<in", "2>&1", ">&2", ">&-", "1>&-e",
    ">&01", "0<in", "> 'sp ace'", ">\u00a0",
]  # fmt: skip
SEPARATORS = [" ", " ", " ", "\t", "\n", " \\\n", "; ", " && ", " || ", " # note\n"]


@st.composite
def commands(draw: st.DrawFn) -> str:
    pieces = ["rec"]
    for _ in range(draw(st.integers(1, 6))):
        pieces.append(draw(st.sampled_from(SEPARATORS)))
        pieces.append(draw(st.sampled_from(WORDS + REDIRECTS)))
    if draw(st.booleans()):
        pieces.append(draw(st.sampled_from(["", " ", "\\", "\u00a0", "\x0b", "\x0c", "\u2028"])))
    return "".join(pieces)


def _folder(root: Path, name: str) -> Path:
    folder = root / name
    folder.mkdir()
    for file in ("a.py", "b.py", "in", "x.py"):
        (folder / file).write_text(f"{file}\n")
    return folder


def _state(folder: Path, log: Path) -> tuple[object, ...]:
    files = {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }
    return (files, log.read_bytes() if log.exists() else b"")


def _run(argv: list[str], folder: Path, bin_dir: Path, log: Path) -> tuple[object, ...]:
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "HOME": "/nonexistent/home",  # the same for both runs: `~` expands alike
        "REC_LOG": str(log),
        "LC_ALL": "C.UTF-8",
    }
    result = subprocess.run(argv, cwd=folder, env=env, capture_output=True, timeout=20)
    return (result.returncode, result.stdout, *_state(folder, log))


def _emitted(command: str) -> str | None:
    """The payload text scriptast runs for `command` as a custom command, or None when it
    refuses the command."""
    try:
        step = payload(run_command(user_command(command, "custom_cmd")))
        return BashEmitter().payload_text(step)
    except ScriptastError:
        return None


def _bench_steps(command: str) -> list[str] | None:
    """The payloads of the bench prepare and run steps for `command` (split at its top-level
    `&&`), or None when it refuses the command."""
    try:
        prepare, run = split_bench(command)
        pieces = [run] if prepare is None else [prepare, run]
        return [
            BashEmitter().payload_text(payload(run_command(user_command(p, "bench_cmd"))))
            for p in pieces
        ]
    except ScriptastError:
        return None


@pytest.fixture(scope="module")
def bin_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bin")
    recorder = folder / "rec"
    recorder.write_text(RECORDER)
    recorder.chmod(0o755)
    return folder


def check_same(command: str, bin_dir: Path, root: Path) -> None:
    """As a custom command and as a bench command (steps in sequence, the next only after
    the one before succeeded, as under the script's `set -e`)."""
    forms: list[list[str]] = []
    text = _emitted(command)
    if text is not None:  # else refused with one error line: allowed
        forms.append(["bash", "-c", text])
    steps = _bench_steps(command)
    if steps is not None:
        chained = " && ".join("bash -c " + shlex.quote(step) for step in steps)
        forms.append(["bash", "-c", chained])
    for form in forms:
        if root.exists():
            shutil.rmtree(root)
        root.mkdir()
        want = _run(["bash", "-c", command], _folder(root, "want"), bin_dir, root / "want.log")
        got = _run(form, _folder(root, "got"), bin_dir, root / "got.log")
        assert got == want, (command, form)


REPORTED = [
    "rec a\nrec b",
    "rec *.py",
    "rec {a,b}",
    "rec cfg=~/x",
    "rec 10>/dev/null",
    "rec a \\",
    "rec a\u00a0",
    "rec a \x0b",
    "rec a\x0c",
    "rec a\u2028",
    "rec prepare && rec run 2\u00a0",
    "rec prepare\x0c && rec run",
]


@pytest.mark.parametrize("command", REPORTED)
def test_the_reported_commands_run_as_bash_runs_them(
    command: str, bin_dir: Path, tmp_path: Path
) -> None:
    check_same(command, bin_dir, tmp_path / "run")
    assert _emitted(command) is not None


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("runs")


@settings(max_examples=scaled(300))
@given(command=commands())
@example(command="rec x >&-e")
@example(command="rec x >&01")
@example(command="time rec x")
@example(command='rec "a\\\nb"')
@example(command="rec x 2>&1 >out")
# `&&` binds to the next pipeline only: what follows a newline runs even if the prepare fails
@example(command="rec\nx=1 # note\n\\* && a\\ b # note\ntime")
@example(command="rec a && rec b || rec c")
def test_any_command_runs_as_bash_runs_it(command: str, bin_dir: Path, scratch: Path) -> None:
    check_same(command, bin_dir, scratch / "run")
