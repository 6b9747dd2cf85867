"""The console-script entry: `--version` and plain `emit`, `run`, `verify` and `results
list|show|compare` runs skip loading typer (bench/machinery.py: 68% of a warm emit); help and
everything else go through typer."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def main() -> None:
    """`scriptast`."""
    arguments = sys.argv[1:]
    if arguments == ["--version"]:
        from scriptast import __version__

        sys.stdout.write(f"scriptast {__version__}\n")
        return
    completing = any(k.startswith("_") and k.endswith("_COMPLETE") for k in os.environ)
    if arguments[:1] == ["emit"] and not completing:
        from scriptast.cli.fast_parse import parse_emit

        parsed = parse_emit(arguments[1:])
        if parsed is not None:
            from scriptast.cli.emit_command import run_emit

            try:
                run_emit(*parsed)
            except KeyboardInterrupt:
                sys.stderr.write("\nAborted!\n")
                raise SystemExit(1) from None
            return
    if arguments[:1] == ["results"] and not completing:
        from scriptast.cli.results_fast import parse_results

        asked = parse_results(arguments[1:])
        if asked is not None:
            from scriptast.cli.results_actions import guarded

            action, values = asked
            try:
                code = guarded(lambda: action(values))
            except KeyboardInterrupt:
                sys.stderr.write("\nAborted!\n")
                raise SystemExit(1) from None
            raise SystemExit(code)
    if arguments[:1] == ["run"] and not completing:
        from scriptast.cli.run_fast import parse_run

        asked_run = parse_run(arguments[1:])
        if asked_run is not None:
            from scriptast.cli.run_action import run_values

            run_values(asked_run)
    if arguments[:1] == ["verify"] and not completing:
        files = _plain_verify(arguments[1:])
        if files is not None:
            from scriptast.cli.verify_command import run_verify

            raise SystemExit(run_verify(*files))
    from scriptast.cli.app import main as cli_main

    cli_main()


def _plain_verify(arguments: list[str]) -> tuple[list[Path], Path | None] | None:
    """(files, slurm_env_file) of `verify FILE... [--slurm-env-file F]`; None for anything
    else (help, an unknown option, no file), which typer then reads and answers."""
    files: list[Path] = []
    env_file: Path | None = None
    words = iter(arguments)
    for word in words:
        if word == "--slurm-env-file":
            value = next(words, None)
            if value is None or env_file is not None:
                return None
            env_file = Path(value)
        elif word.startswith("--slurm-env-file="):
            if env_file is not None:
                return None
            env_file = Path(word.partition("=")[2])
        elif word.startswith("-"):
            return None
        else:
            files.append(Path(word))
    return (files, env_file) if files else None
