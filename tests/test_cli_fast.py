"""The typer-free `emit` parser: whatever it accepts, typer reads the same way; the rest goes to typer."""

from __future__ import annotations

import os
import subprocess
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, strategies as st
from typer.testing import CliRunner

from scriptast.cli import app as cli
from scriptast.cli.emit_flags import ENV_CHECK_FLAGS, OUTPUT_FLAGS, REQUEST_FLAGS, flag, workflows
from scriptast.cli.fast_parse import parse_emit
from tests.site import Site
from tests.test_cli import BAD_INPUTS, console_script, flags

runner = CliRunner()
OUTPUT_SWITCHES = {n for n, k, _ in OUTPUT_FLAGS if k is bool}
FIELDS = [(n, k) for n, k, *_ in OUTPUT_FLAGS + REQUEST_FLAGS + ENV_CHECK_FLAGS]
TEXT = st.text(st.characters(exclude_characters="\x00", exclude_categories=["Cs"]))
SPELLINGS = [flag(n) for n, _ in FIELDS] + ["--no-install", "--no-persistent-mode"]


def typer_reading(arguments: list[str]) -> tuple[int, tuple[str | None, dict[str, Any]] | None]:
    """Exit code of `scriptast emit <arguments>` under typer, and what it handed to run_emit."""
    seen: list[tuple[str | None, dict[str, Any]]] = []
    with mock.patch.object(cli, "run_emit", lambda w, v: seen.append((w, v))):
        result = runner.invoke(cli.app, ["emit", *arguments])
    if not seen:
        return result.exit_code, None
    workflow, values = seen[0]
    given_values = {
        k: v
        for k, v in values.items()
        if v is not None and not (k in OUTPUT_SWITCHES and v is False)
    }
    return result.exit_code, (workflow, given_values)


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    arguments: list[str] = []
    if draw(st.booleans()):
        arguments.append(draw(st.sampled_from([*workflows(), "bogus"])))
    for _ in range(draw(st.integers(0, 6))):
        name, kind = draw(st.sampled_from(FIELDS))
        spelling = flag(name)
        shape = draw(st.sampled_from(["separate", "equals", "bare", "negated", "unknown"]))
        if shape == "unknown":
            arguments.append(draw(st.sampled_from(["--bogus", "-x", "--", "--help", "--stdout=1"])))
        elif shape == "negated":
            arguments.append("--no-" + spelling[2:])
        elif shape == "bare" or (kind is bool and draw(st.booleans())):
            arguments.append(spelling)
        else:
            value = draw(
                st.one_of(
                    st.integers(-5, 20).map(str),
                    st.sampled_from(["", "two", " 3", "+4", "1_0", "--stdout", "-x", "a=b"]),
                    TEXT,
                )
            )
            arguments += [f"{spelling}={value}"] if shape == "equals" else [spelling, value]
    return arguments


@given(command_lines())
def test_what_the_fast_parser_accepts_typer_reads_the_same_way(arguments: list[str]) -> None:
    fast = parse_emit(arguments)
    code, reading = typer_reading(arguments)
    if fast is not None:
        assert code == 0 and reading == fast


@pytest.mark.parametrize(
    "arguments",
    [
        ["--request", "r.json"],
        ["--request=r.json", "--stdout", "--shell", "fish"],
        ["bench", "--bench-cmd", "trtllm-bench -m x throughput", "--required-devices", "4"],
        ["pytest", "--test-cmd", "-k not slow", "--no-install", "--gpus-per-node=8"],
        ["custom", "--custom-cmd", "--stdout", "--json", "--explain", "--debug"],
        ["--requests", "sweep.jsonl", "--partition", "batch"],
    ],
)
def test_everyday_command_lines_take_the_fast_path(arguments: list[str]) -> None:
    fast = parse_emit(arguments)
    assert fast is not None
    assert typer_reading(arguments) == (0, fast)


@pytest.mark.parametrize(
    "arguments",
    [
        ["--help"],
        ["bench", "--help"],
        ["--stdout", "bench"],
        ["bench", "--workflow-type", "bench"],
        ["--required-devices", "two"],
        ["--required-devices"],
        ["--stdout=yes"],
        ["--no-stdout"],
        ["--bogus"],
        ["--", "x"],
        ["bench", "extra"],
    ],
)
def test_anything_else_is_left_to_typer(arguments: list[str]) -> None:
    assert parse_emit(arguments) is None


CASES = [("custom", {"custom_cmd": "echo 'hi' $HOME"}), ("bench", {"bench_cmd": None})] + [
    (workflow, fields) for workflow, fields, _ in BAD_INPUTS[::3]
]


@pytest.mark.parametrize(("workflow", "fields"), CASES, ids=[str(c) for c in range(len(CASES))])
def test_console_script_and_typer_give_the_same_answer(
    site: Site, workflow: str, fields: dict[str, Any]
) -> None:
    defaults = {"bench": {"bench_cmd": "trtllm-bench --model m throughput"}}.get(workflow, {})
    merged = {k: v for k, v in {**defaults, **fields}.items() if v != "@empty"}
    arguments = ["emit", workflow, *flags(site.fields(**merged)), "--stdout"]
    env = {**os.environ, "HOME": str(site.home), "NO_COLOR": "1"}
    fast = subprocess.run([console_script(), *arguments], capture_output=True, text=True, env=env)
    typed = runner.invoke(cli.app, arguments, env={"HOME": str(site.home), "NO_COLOR": "1"})
    assert (fast.returncode, fast.stdout, fast.stderr) == (
        typed.exit_code,
        typed.stdout,
        typed.stderr,
    )
