"""Runs the typer app with its command-line errors as one `error:` line and exit code 2: an
unknown option or command with its close match, a bad value, a bad choice, a missing argument,
instead of the framed multi-line box."""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

import typer
import typer.main

from scriptast.common.suggest import did_you_mean


def _exceptions() -> ModuleType:
    """The click exceptions module typer raises from (its own copy of click in recent typer,
    click's before)."""
    import importlib

    try:
        return importlib.import_module("typer._click.exceptions")
    except ImportError:
        return importlib.import_module("click.exceptions")


def usage_line(error: Any) -> str:
    """The error as one line: what is wrong and what to do."""
    errors = _exceptions()
    context = getattr(error, "ctx", None)
    where = f"`{context.command_path} --help`" if context is not None else "`scriptast --help`"
    if isinstance(error, errors.NoSuchOption):
        name = str(error.option_name)
        known = sorted(getattr(error, "possibilities", None) or ())
        if context is not None:
            known = sorted(
                {o for p in context.command.params for o in (*p.opts, *p.secondary_opts)}
            )
        hint = did_you_mean(name, known)
        return f"no such option {name}{hint}; {where} lists the options"
    message = " ".join(str(error.format_message()).split()).rstrip(".")
    if message.startswith("No such command"):
        group = getattr(context, "command", None)
        names = sorted(getattr(group, "commands", {}) or {})
        name = message.split("'")[1] if message.count("'") >= 2 else ""
        return f"no such command {name!r}{did_you_mean(name, names)}; {where} lists the commands"
    return f"{message[:1].lower()}{message[1:]}; {where} says more"


def run(app: typer.Typer, arguments: list[str] | None = None) -> None:
    """Run `app` on `arguments` (default sys.argv[1:]); a usage error is one line and exit 2."""
    errors = _exceptions()
    command: Any = typer.main.get_command(app)
    try:
        code = command.main(
            args=sys.argv[1:] if arguments is None else arguments,
            prog_name="scriptast",
            standalone_mode=False,
        )
    except errors.UsageError as error:
        sys.stderr.write(f"error: {usage_line(error)}\n")
        raise SystemExit(2) from None
    except errors.ClickException as error:
        sys.stderr.write(f"error: {' '.join(str(error.format_message()).split())}\n")
        raise SystemExit(error.exit_code) from None
    except typer.Abort:
        sys.stderr.write("Aborted!\n")
        raise SystemExit(1) from None
    if isinstance(code, int) and code:
        raise SystemExit(code)
