"""Help pages as typer renders them for a pipe, stored, so that piped `--help` needs no typer.

`docs/build.py` renders every page through the typer app and writes `help_pages.json`; a test
keeps it current. A stored page is printed only when typer would print exactly it: the program
is `scriptast`, stdout is not a terminal and takes UTF-8, and none of the variables that change
typer's or rich's rendering is set. Anything else goes through typer.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

PAGES_FILE = Path(__file__).with_name("help_pages.json")


def help_requests() -> tuple[tuple[str, ...], ...]:
    """The command lines whose output is stored: `scriptast` alone and each command's `--help`
    (`emit <category>` for each registered category)."""
    from scriptast.cli.fields import workflows

    commands = [(), ("emit",), *(("emit", name) for name in workflows())]
    commands += [("schema",), ("verify",), ("probe-slurm",)]
    return ((), *((*command, "--help") for command in commands))


RENDERING_VARIABLES = (
    "COLUMNS",
    "LINES",
    "TERMINAL_WIDTH",
    "FORCE_COLOR",
    "NO_COLOR",
    "PY_COLORS",
    "GITHUB_ACTIONS",
    "TYPER_USE_RICH",
    "_TYPER_FORCE_DISABLE_TERMINAL",
    "TTY_COMPATIBLE",
    "TTY_INTERACTIVE",
    "JUPYTER_COLUMNS",
    "JUPYTER_LINES",
    "DATABRICKS_RUNTIME_VERSION",
)


def page_key(arguments: tuple[str, ...]) -> str:
    return " ".join(arguments)


def piped_output(
    arguments: tuple[str, ...], *, through: str = "scriptast.cli.app", **settings: str
) -> str:
    """What `scriptast <arguments>` writes to a pipe when run by `through`'s main (typer's by
    default), with none of the rendering variables set but `settings`: how pages are made."""
    import subprocess

    env = {k: v for k, v in os.environ.items() if k not in RENDERING_VARIABLES}
    code = f"import sys; sys.argv[0] = 'scriptast'; from {through} import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *arguments],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env={**env, **settings},
        check=True,
    ).stdout


def stored_page(arguments: list[str]) -> str | None:
    """The stored output of `scriptast <arguments>`, or None to let typer render it."""
    if arguments and arguments[-1] != "--help":
        return None
    if os.path.basename(sys.argv[0]) != "scriptast":
        return None
    if any(name in os.environ for name in RENDERING_VARIABLES) or sys.stdout.isatty():
        return None
    if (sys.stdout.encoding or "").lower().replace("-", "") != "utf8":
        return None
    try:
        pages: dict[str, str] = json.loads(PAGES_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return pages.get(page_key(tuple(arguments)))
