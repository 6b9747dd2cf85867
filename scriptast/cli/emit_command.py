"""`scriptast emit` run from parsed option values, without typer: request, pipeline, output."""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING, Any

from scriptast.cli.emit_flags import split_flags
from scriptast.cli.say import fail, one_line, warn

if TYPE_CHECKING:
    from scriptast.pipeline.emit_job import Output
    from scriptast.pipeline.sweep_arrays import Emitted


def run_emit(workflow: str | None, values: dict[str, Any]) -> None:
    from scriptast.builders.read_request import build_request, read_request_file
    from scriptast.errors import ScriptastError

    debug = bool(values.get("debug"))
    if values.get("requests"):
        run_sweep_file(workflow, values)
        return
    if values.get("array") or values.get("array_limit") is not None:
        fail("--array groups the jobs of a sweep into job arrays: give the sweep with --requests")
    try:
        file_fields = None
        origin = "the flags"
        if values.get("request"):
            path = values["request"]
            data = _read_stdin() if path == "-" else None
            file_fields = read_request_file(path if path != "-" else "stdin", data)
            origin = f"request file {path}"
        flags = split_flags(values)
        if workflow is not None:
            given = flags.get("workflow_type") or (file_fields or {}).get("workflow_type")
            if given and given != workflow:
                fail(f"workflow_type {given!r} contradicts `scriptast emit {workflow}`", 2)
            flags["workflow_type"] = workflow
        _refuse_foreign_flags(flags, file_fields)
        if values.get("rerun_failed") is not None:
            from scriptast.cli.rerun_failed import rerun_fields

            for said in rerun_fields(flags, file_fields, values["rerun_failed"],
                                     values.get("results")):  # fmt: skip
                warn(said)
        elif values.get("results"):
            fail("--results names the store --rerun-failed reads: add --rerun-failed RUN or "
                 "drop --results", 2)  # fmt: skip
        request = build_request(file_fields, flags, origin=origin)
        _check_shell(values, str(request.execution_scenario))
        from scriptast.pipeline.emit_job import generate, write_outputs
        from scriptast.pipeline.stage_splits import split_requests

        splits = split_requests(request)
        if splits is not None:
            _emit_splits(splits, values)
            return
        output = generate(request, write_nothing=bool(values.get("stdout")))
        if values.get("explain"):
            sys.stderr.write(output.job.explain())
        for warning in output.job.warnings:
            warn(warning)
        if values.get("stdout"):
            _print(_stdout_text(output, values.get("shell")), "nothing was written")
            return
        write_outputs(output)
        done = f"the files were written into {output.job.work_dir}"
        _print(_json_result(output) if values.get("json") else output.summary, done)
    except ScriptastError as error:
        if debug:
            raise
        fail(str(error))
    except OSError as error:  # a file that could not be read on the way, say
        if debug:
            raise
        where = f" {error.filename}" if error.filename else ""
        fail(f"cannot read or write{where}: {error.strerror or error}")


def _refuse_foreign_flags(flags: dict[str, Any], file_fields: dict[str, Any] | None) -> None:
    """A flag of another workflow's (`emit bench --eval-cmd`) is a usage error: it would not
    be used."""
    from scriptast.builders.categories import CATEGORIES
    from scriptast.cli.emit_flags import flag, foreign_options

    workflow = flags.get("workflow_type") or (file_fields or {}).get("workflow_type")
    if not isinstance(workflow, str) or workflow not in CATEGORIES:
        return
    foreign = foreign_options(workflow)
    for name in flags:
        if name in foreign:
            owner = foreign[name]
            fail(
                f"{flag(name)} is not an option of {workflow} (it is {owner}'s): drop it, or "
                f"run `scriptast emit {owner}`",
                2,
            )


def _check_shell(values: dict[str, Any], scenario: str) -> None:
    """--shell names a shell scriptast quotes for, with --stdout, for a job that prints a docker
    command; anything else is a usage error."""
    shell = values.get("shell")
    if shell is None:
        return
    from scriptast.common.suggest import did_you_mean
    from scriptast.emitters.shells import QUOTERS

    if shell.lower() not in QUOTERS:
        fail(
            f"unknown --shell {shell!r}{did_you_mean(shell.lower(), QUOTERS)}; known: "
            f"{', '.join(sorted(QUOTERS))}",
            2,
        )
    if not values.get("stdout"):
        fail("--shell quotes the docker command --stdout prints: add --stdout or drop --shell", 2)
    if scenario != "local_docker":
        fail(
            f"--shell quotes a docker command, and a {scenario} job prints a Slurm script, "
            "which bash runs: drop --shell",
            2,
        )


def _emit_splits(requests: list[Any], values: dict[str, Any]) -> None:
    """Every split generated before any is written (a bad one writes none); then each."""
    from scriptast.errors import InputError
    from scriptast.pipeline.emit_job import generate, write_outputs

    if values.get("stdout"):
        raise InputError("--all-splits writes a work dir a split: drop --stdout")
    outputs = [generate(request) for request in requests]
    for output in outputs:
        if values.get("explain"):
            sys.stderr.write(output.job.explain())
        for warning in output.job.warnings:
            warn(warning)
    for output in outputs:
        write_outputs(output)
    dirs = [output.job.work_dir for output in outputs]
    _print("".join(f"{d}\n" for d in dirs) + f"{len(dirs)} split(s) written: run them all "
           f"with 'scriptast run {' '.join(dirs)}'\n", "the splits were written")  # fmt: skip


def _print(text: str, done: str) -> None:
    """Write `text` to stdout; a closed or full stdout is an error line that says what was
    done already (and stdout is then pointed at /dev/null, so exit prints nothing more)."""
    try:
        if sys.stdout is None:
            raise OSError(9, "Bad file descriptor")
        sys.stdout.write(text)
        sys.stdout.flush()
    except (OSError, ValueError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        import os

        with contextlib.suppress(OSError, ValueError, AttributeError):
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, sys.stdout.fileno())
        fail(f"{done}, but standard output failed: {reason}")


def _read_stdin() -> bytes:
    """Standard input's bytes; a closed or unreadable one is an error line."""
    from scriptast.common.text_files import MOST_INPUT_BYTES
    from scriptast.errors import InputError

    stream = getattr(sys.stdin, "buffer", None)
    try:
        if stream is None:
            raise OSError(9, "Bad file descriptor")
        data = bytes(stream.read(MOST_INPUT_BYTES + 1))
        if len(data) > MOST_INPUT_BYTES:
            raise OSError(27, f"more than the {MOST_INPUT_BYTES // 2**20} MiB a request may be")
        return data
    except (OSError, ValueError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise InputError(f"cannot read the request from standard input: {reason}") from None


def _stdout_text(output: Output, shell: str | None) -> str:
    """The main script; a docker job on a terminal (or with --shell) as a command for the shell."""
    main = next(f for f in output.files if f.path == output.main_script)
    if output.docker_run is None or (shell is None and not sys.stdout.isatty()):
        return str(main.text)
    from scriptast.emitters.bash import BashEmitter
    from scriptast.emitters.shells import detect_shell, quoter_for
    from scriptast.model.words import literal_text

    assert output.docker_run is not None
    lines = BashEmitter().docker_lines(output.docker_run)
    words = [[literal_text(w) or "" for w in line] for line in lines]
    return quoter_for(shell or detect_shell()).command(words)


def _json_result(output: Output) -> str:
    """The machine-readable result of an emit: files written, main script, job_spec, warnings."""
    import json

    spec = next(f for f in output.files if f.path.endswith("/job_spec.json"))
    result = {
        "files": [f.path for f in output.files],
        "script": output.main_script,
        "job_spec": json.loads(spec.text),
        "warnings": list(output.job.warnings),
    }
    return json.dumps(result, indent=2) + "\n"


def run_sweep_file(workflow: str | None, values: dict[str, Any]) -> None:
    """Emit every request of a JSON-lines file; flags apply to each; `FILE line N: error: ...`
    for each line that failed, every good line written, exit 1 if any failed."""
    from scriptast.common.text_files import file_bytes
    from scriptast.pipeline.sweep import read_lines, run_sweep

    path = values["requests"]
    as_tasks = bool(values.get("array"))
    limit = values.get("array_limit")
    if limit is not None and not as_tasks:
        fail("--array-limit limits the tasks of a job array: add --array, or drop it")
    if limit is not None and limit < 1:
        fail(
            f"--array-limit {limit}: give how many tasks of an array may run at once (1 or "
            "more), or leave it out for no limit"
        )
    try:
        data = file_bytes(path)
    except OSError as error:
        fail(f"cannot read {path}: {error.strerror}")
    flags = split_flags(values)
    if workflow is not None:
        flags["workflow_type"] = workflow
    lines = read_lines(data)
    total = len(lines)
    progress = sys.stderr.isatty()
    failures = 0
    tasks: list[tuple[int, Emitted]] = []
    for done, (number, message) in enumerate(run_sweep(path, lines, flags, as_tasks), start=1):
        if message is not None and not isinstance(message, str):
            tasks.append((number, message))
        elif message is not None:
            failures += 1
            line = f"{path} line {number}: error: {message}"
            sys.stderr.write(("\r" if progress else "") + one_line(line) + "\n")
        if progress:
            bar = "#" * (30 * done // total)
            sys.stderr.write(f"\r[{bar:<30}] {done}/{total}")
    if progress:
        sys.stderr.write("\n")
    sys.stdout.write(
        f"Generated {total - failures} of {total} jobs from {path}; {failures} failed\n"
    )
    if as_tasks:
        from scriptast.errors import ScriptastError
        from scriptast.pipeline.sweep_arrays import write_arrays

        try:
            said = write_arrays(path, data, tasks, limit)
        except ScriptastError as error:
            fail(str(error))
        sys.stdout.write("".join(line + "\n" for line in said))
    if failures:
        raise SystemExit(1)
