"""`scriptast emit` run from parsed option values, without typer: request, pipeline, output."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from scriptast.cli_fields import split_flags

if TYPE_CHECKING:
    from scriptast.pipeline import Output


def _colour(text: str, code: str) -> str:
    """ANSI colour on a terminal, unless NO_COLOR is set."""
    import os

    if os.environ.get("NO_COLOR") or not sys.stderr.isatty():
        return text
    return f"\x1b[{code}m{text}\x1b[0m"


def fail(message: str, code: int = 1) -> NoReturn:
    """`error: <message>` on stderr and exit."""
    sys.stderr.write(f"{_colour('error:', '1;31')} {message}\n")
    raise SystemExit(code)


def warn(message: str) -> None:
    """`warning: <message>` on stderr."""
    sys.stderr.write(f"{_colour('warning:', '1;33')} {message}\n")


def run_emit(workflow: str | None, values: dict[str, Any]) -> None:
    from scriptast.builders.request import build_request, read_request_file
    from scriptast.errors import ScriptastError

    debug = bool(values.get("debug"))
    if values.get("requests"):
        run_sweep_file(workflow, values)
        return
    try:
        file_fields = None
        origin = "the flags"
        if values.get("request"):
            path = values["request"]
            text = sys.stdin.read() if path == "-" else None
            file_fields = read_request_file(path if path != "-" else "stdin.json", text)
            origin = f"request file {path}"
        flags = split_flags(values)
        if workflow is not None:
            given = flags.get("workflow_type") or (file_fields or {}).get("workflow_type")
            if given and given != workflow:
                fail(f"workflow_type {given!r} contradicts `scriptast emit {workflow}`", 2)
            flags["workflow_type"] = workflow
        request = build_request(file_fields, flags, origin=origin)
        from scriptast.pipeline import generate, write_outputs

        output = generate(request)
        if values.get("explain"):
            sys.stderr.write(output.job.explain())
        for warning in output.job.warnings:
            warn(warning)
        if values.get("stdout"):
            sys.stdout.write(_stdout_text(output, values.get("shell")))
            return
        write_outputs(output)
        if values.get("json"):
            sys.stdout.write(_json_result(output))
        else:
            sys.stdout.write(output.summary)
    except ScriptastError as error:
        if debug:
            raise
        fail(str(error))


def _stdout_text(output: Output, shell: str | None) -> str:
    """The main script; a docker job on a terminal (or with --shell) as a command for the shell."""
    main = next(f for f in output.files if f.path == output.main_script)
    if not output.job.is_docker or (shell is None and not sys.stdout.isatty()):
        return str(main.text)
    from scriptast.emitters.shells import QUOTERS, detect_shell, quoter_for

    if shell is not None and shell.lower() not in QUOTERS:
        fail(f"unknown --shell {shell!r}; known: {', '.join(sorted(QUOTERS))}", 2)
    from scriptast.emitters.bash import BashEmitter
    from scriptast.words import literal_text

    assert output.docker_run is not None
    lines = BashEmitter().docker_lines(output.docker_run)
    words = [[literal_text(w) or "" for w in line] for line in lines]
    return quoter_for(shell or detect_shell()).command(words)


def _json_result(output: Output) -> str:
    """The machine-readable result of an emit: files written, main script, job_spec, warnings."""
    import json

    import msgspec

    result = {
        "files": [f.path for f in output.files],
        "script": output.main_script,
        "job_spec": msgspec.to_builtins(output.job_spec),
        "warnings": list(output.job.warnings),
    }
    return json.dumps(result, indent=2) + "\n"


def run_sweep_file(workflow: str | None, values: dict[str, Any]) -> None:
    """Emit every request of a JSON-lines file; flags apply to each; one error line per failure."""
    from scriptast.sweep import run_sweep

    path = values["requests"]
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        fail(f"cannot read {path}: {error.strerror}")
    flags = split_flags(values)
    if workflow is not None:
        flags["workflow_type"] = workflow
    jobs = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    progress = sys.stderr.isatty()
    failures = 0
    for done, (number, message) in enumerate(run_sweep(path, jobs, flags), start=1):
        if message is not None:
            failures += 1
            sys.stderr.write(
                ("\r" if progress else "") + f"error: {path} line {number}: {message}\n"
            )
        if progress:
            bar = "#" * (30 * done // len(jobs))
            sys.stderr.write(f"\r[{bar:<30}] {done}/{len(jobs)}")
    if progress:
        sys.stderr.write("\n")
    sys.stdout.write(f"Generated {len(jobs) - failures} of {len(jobs)} jobs from {path}\n")
    if failures:
        raise SystemExit(1)
