"""The typer-free `results list|show|compare`: its option table is the typer commands' own,
whatever it accepts the typer command reads the same way (same exit code, stdout and stderr),
the rest goes to typer, and a plain query loads no typer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer

from scriptast.cli.results_actions import DEFAULTS, OPTIONS
from scriptast.cli.results_command import results_app
from scriptast.cli.results_fast import parse_results
from scriptast.contract.measured import FailedTest, PytestResults
from scriptast.results.store.database import Store
from scriptast.results.store.location import locate
from tests.test_results_store import LLAMA, a_run, day

SCRIPTAST = str(Path(sys.executable).parent / "scriptast")


def _options(command: str) -> dict[str, Any]:
    group = typer.main.get_command(results_app)
    params = group.commands[command].params  # type: ignore[attr-defined]
    return {p.opts[0]: p for p in params if p.opts[0].startswith("--")}


@pytest.mark.parametrize("command", sorted(OPTIONS))
def test_the_option_table_is_the_typer_commands_own(command: str) -> None:
    options = _options(command)
    assert sorted(options) == sorted(OPTIONS[command])
    for spelling, (dest, kind) in OPTIONS[command].items():
        param = options[spelling]
        assert param.name == dest
        annotation = param.type_descriptor.annotation
        assert annotation == (list[str] if kind is list else kind), spelling
        assert param.multiple == (kind is list), spelling
        assert param.default == DEFAULTS[command].get(dest, [] if kind is list else None)
        if kind is int:  # the fast parser leaves a count below 1 to typer's own message
            assert param.min == 1, spelling


@pytest.fixture
def stored(tmp_path: Path) -> str:
    path = tmp_path / "store" / "results.db"
    path.parent.mkdir()
    failing = PytestResults(source="r.xml", tests=2, failures=1, errors=0, skipped=0,
                            failed=(FailedTest(id="a/test_x.py::t", outcome="failed"),))  # fmt: skip
    with Store.open(locate(str(path)), create=True) as store:
        for n in range(1, 8):
            store.append(a_run(n, finished=day(n), value=1000.0 - 30 * n, gpus=4 if n % 2 else 8))
        store.append(a_run(8, finished=day(9), workflow="pytest", verdict="FAILED",
                           tests=failing))  # fmt: skip
    return str(path)


LINES = [
    ["list"],
    ["list", "--limit", "3"],
    ["list", "--limit=2", "--gpus", "4", "--verdict", "passed"],
    ["list", "--model", LLAMA, "--since", "2026-11-03", "--until", "2026-11-06"],
    ["list", "--verdict", "bogus"],
    ["list", "--since", "yesterday-ish"],
    ["list", "--tp", "0"],
    ["list", "--limit", "x"],
    ["list", "extra"],
    ["list", "--bogus"],
    ["list", "--limit"],
    ["show", "1"],
    ["show", "8", "--json"],
    ["show", "99"],
    ["show", "x"],
    ["show", "\u00b2"],
    ["list", "--limit", "\u00b2"],
    ["show", "1", "2"],
    ["show"],
    ["show", "--json=1", "1"],
    ["compare"],
    ["compare", "--depth", "3", "--tolerance", "1%"],
    ["compare", "1", "7"],
    ["compare", "history", "7"],
    ["compare", "--base", "until 2026-11-04", "--target", "since 2026-11-04", "--json"],
    ["compare", "--base", "until 2026-11-04", "--target", "since 2026-11-04", "--group-by",
     "model", "--group-by", "workflow", "--aggregate", "mean"],
    ["compare", "--aggregate", "mode"],
    ["compare", "--figure", "output_thruput"],
    ["compare", "--model", "nobody"],
    ["compare", "--base", "since 1d"],
    ["compare", "1"],
]  # fmt: skip


@pytest.mark.parametrize("line", LINES, ids=[" ".join(line) for line in LINES])
def test_console_script_and_typer_give_the_same_answer(stored: str, line: list[str]) -> None:
    argv = [*line, "--results", stored]
    done = subprocess.run([SCRIPTAST, "results", *argv], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "COLUMNS": "100"})  # fmt: skip
    through_typer = (
        "import sys; from scriptast.cli.app import main; sys.argv[0] = 'scriptast'; main()"
    )
    typed = subprocess.run([sys.executable, "-c", through_typer, "results", *argv],
                           capture_output=True, text=True, timeout=60,
                           env={**os.environ, "COLUMNS": "100"})  # fmt: skip
    assert (done.returncode, done.stdout, done.stderr) == (
        typed.returncode, typed.stdout, typed.stderr)  # fmt: skip


@pytest.mark.parametrize(
    ("line", "taken"),
    [
        (["list"], True), (["list", "--gpus", "4", "--since", "7d"], True),
        (["show", "3", "--json"], True), (["compare", "1", "2", "--json"], True),
        (["compare", "--group-by", "tp", "--group-by", "model"], True),
        (["list", "--help"], False), (["list", "--gpus", "0"], False),
        (["list", "--model", "--since"], False), (["show", "x"], False),
        (["show", "\u00b2"], False), (["list", "--limit", "\u00b2"], False), (["export"], False), (["list", "--json"], False), ([], False),
    ],
)  # fmt: skip
def test_what_is_certain_takes_the_fast_path_and_the_rest_is_typers(
    line: list[str], taken: bool
) -> None:
    assert (parse_results(line) is not None) == taken


def test_a_plain_query_loads_no_typer(stored: str) -> None:
    code = (
        "import sys, io, json\n"
        f"sys.argv = ['scriptast', 'results', 'list', '--results', {stored!r}]\n"
        "from scriptast.cli.entry import main\n"
        "sys.stdout = io.StringIO()\n"
        "try:\n    main()\nexcept SystemExit as done:\n    assert done.code == 0, done.code\n"
        "out = sys.stdout.getvalue()\n"
        "sys.stdout = sys.__stdout__\n"
        "assert out.startswith('ID '), out\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)  # fmt: skip
    loaded: set[Any] = set(json.loads(done.stdout.strip().splitlines()[-1]))
    assert not loaded & {"typer", "click", "rich", "pydantic"}
