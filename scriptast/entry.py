"""The console-script entry: answers `--version` before importing the CLI (and typer)."""

from __future__ import annotations

import sys


def main() -> None:
    """`scriptast`."""
    if sys.argv[1:] == ["--version"]:
        from scriptast import __version__

        sys.stdout.write(f"scriptast {__version__}\n")
        return
    from scriptast.cli import main as cli_main

    cli_main()
