"""The typer-free `run`: its option table is the typer command's own, whatever it accepts the
typer command reads the same way (the same values handed on), the rest goes to typer, and a
plain run loads no typer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import typer
from hypothesis import given, strategies as st
from typer.testing import CliRunner

from scriptast.cli import app as cli, run_action
from scriptast.cli.run_action import RUN_DEFAULTS
from scriptast.cli.run_fast import RUN_OPTIONS, parse_run

runner = CliRunner()
SCRIPTAST = str(Path(sys.executable).parent / "scriptast")


def _run_params() -> dict[str, Any]:
    command = typer.main.get_command(cli.app).commands["run"]  # type: ignore[attr-defined]
    return {p.name: p for p in command.params}


def test_the_option_table_is_the_typer_commands_own() -> None:
    params = _run_params()
    spellings = {o for p in params.values() for o in (*p.opts, *p.secondary_opts)}
    assert spellings - {"work_dirs"} == set(RUN_OPTIONS)
    assert set(params) - {"work_dirs"} == set(RUN_DEFAULTS)
    for spelling, (dest, kind) in RUN_OPTIONS.items():
        param = params[dest]
        assert spelling in (*param.opts, *param.secondary_opts), spelling
        assert param.default == RUN_DEFAULTS[dest], spelling
        assert param.multiple == (kind is list), spelling
        if isinstance(kind, range):  # the fast parser leaves a value out of range to typer
            assert (param.min, param.max) == (kind.start, kind.stop - 1), spelling
        else:
            assert getattr(param, "min", None) is None and getattr(param, "max", None) is None
        if kind is bool or isinstance(kind, bool):
            assert param.is_flag, spelling


def typer_reading(arguments: list[str]) -> tuple[int, dict[str, Any] | None]:
    """Exit code of `scriptast run <arguments>` under typer, and the values it handed on."""
    seen: list[dict[str, Any]] = []
    with mock.patch.object(run_action, "run_values", seen.append):
        result = runner.invoke(cli.app, ["run", *arguments])
    return result.exit_code, (seen[0] if seen else None)


VALUES = ["", "5", "0", "11", "-1", "+3", " 4", "1.5", "nan", "inf", "90s", "5m", "02:00:00",
          "history", "5%", "x", "-x", "--json", "0-4", "a=b"]  # fmt: skip


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    arguments: list[str] = []
    for _ in range(draw(st.integers(0, 6))):
        shape = draw(st.sampled_from(["dir", "option", "equals", "bare", "unknown"]))
        spelling = draw(st.sampled_from(sorted(RUN_OPTIONS)))
        value = draw(st.one_of(st.sampled_from(VALUES), st.text(max_size=8)))
        if shape == "dir":
            arguments.append(draw(st.sampled_from(["w1", "w2", "-", "-w", "--"])))
        elif shape == "unknown":
            arguments.append(draw(st.sampled_from(["--bogus", "-h", "--help", "--json=1"])))
        elif shape == "bare":
            arguments.append(spelling)
        elif shape == "equals":
            arguments.append(f"{spelling}={value}")
        else:
            arguments += [spelling, value]
    return arguments


@given(command_lines())
def test_what_the_fast_parser_accepts_typer_reads_the_same_way(arguments: list[str]) -> None:
    fast = parse_run(arguments)
    code, reading = typer_reading(arguments)
    if fast is not None:
        assert code == 0 and reading == {**RUN_DEFAULTS, **fast}


@pytest.mark.parametrize(
    "arguments",
    [
        ["w1"],
        ["w1", "w2", "--json", "--no-store"],
        ["--dry-run", "w1", "--array-task", "0-4"],
        ["w1", "--retries=3", "--poll-max", "2.5", "--queue-timeout", "5m", "--persistent"],
        ["w1", "--no-persistent", "--fetch", "a*", "--fetch=b*", "--tolerance", "3%"],
        ["w1", "--baseline", "history", "--baseline-runs", "7", "--results", "sqlite:///x.db"],
        ["--ssh-host", "front", "--ssh-config=cfg", "--keep-connection", "--detach", "w1"],
        ["--", "-odd-name"],
    ],
)
def test_everyday_command_lines_take_the_fast_path(arguments: list[str]) -> None:
    fast = parse_run(arguments)
    assert fast is not None
    assert typer_reading(arguments) == (0, {**RUN_DEFAULTS, **fast})


@pytest.mark.parametrize(
    "arguments",
    [
        [],
        ["--help"],
        ["w1", "--help"],
        ["w1", "--bogus"],
        ["w1", "--retries", "11"],
        ["w1", "--baseline-runs", "0"],
        ["w1", "--queue-timeout", "soon"],
        ["w1", "--baseline", "median"],
        ["w1", "--tolerance", "lots"],
        ["w1", "--json=yes"],
        ["w1", "--reference"],
        ["w1", "--poll-max", "fast"],
        ["w1", "--retries", "\u00b2"],  # a digit to str.isdigit, not to int()
    ],
)
def test_anything_else_is_left_to_typer(arguments: list[str]) -> None:
    assert parse_run(arguments) is None


@pytest.mark.parametrize(
    "arguments",
    [["{tmp}/none"], ["{tmp}/none", "--json", "--no-store"], ["{tmp}/f", "--dry-run"]],
)
def test_console_script_and_typer_give_the_same_answer(
    tmp_path: Path, arguments: list[str]
) -> None:
    (tmp_path / "f").write_text("not a work dir\n")
    line = ["run", *(a.format(tmp=tmp_path) for a in arguments)]
    env = {**os.environ, "NO_COLOR": "1"}
    fast = subprocess.run([SCRIPTAST, *line], capture_output=True, text=True, env=env)
    typed = runner.invoke(cli.app, line, env={"NO_COLOR": "1"})
    assert fast.returncode == 2 and fast.stderr.startswith("error: ")
    assert (fast.returncode, fast.stdout, fast.stderr) == (
        typed.exit_code,
        typed.stdout,
        typed.stderr,
    )


def test_a_plain_run_loads_no_typer(tmp_path: Path) -> None:
    code = (
        "import json, sys\n"
        f"sys.argv = ['scriptast', 'run', '--no-store', {str(tmp_path / 'none')!r}]\n"
        "from scriptast.cli.entry import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as stop:\n"
        "    assert stop.code == 2, stop.code\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)  # fmt: skip
    loaded: set[Any] = set(json.loads(done.stdout.strip().splitlines()[-1]))
    assert "scriptast" in loaded
    assert not loaded & {"typer", "click", "rich", "pydantic"}
