"""The console-script entry: `--version`, piped help and plain `emit` runs skip loading typer."""

from __future__ import annotations

import os
import sys


def main() -> None:
    """`scriptast`."""
    arguments = sys.argv[1:]
    if arguments == ["--version"]:
        from scriptast import __version__

        sys.stdout.write(f"scriptast {__version__}\n")
        return
    completing = any(k.startswith("_") and k.endswith("_COMPLETE") for k in os.environ)
    if ("--help" in arguments or not arguments) and not completing:
        from scriptast.cli.help_pages import stored_page

        page = stored_page(arguments)
        if page is not None:
            sys.stdout.write(page)
            return
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
    from scriptast.cli.app import main as cli_main

    cli_main()
