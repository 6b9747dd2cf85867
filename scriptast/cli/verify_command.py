"""`scriptast verify`: check scripts of any origin and print one line a finding (notes too), or
`PATH: ok` with what the check could not cover; typer-free, so a plain run starts fast."""

from __future__ import annotations

import sys
from pathlib import Path

from scriptast.readers.linter.lint import Finding, Report

NOT_CHECKED_SHOWN = 6


def run_verify(files: list[Path], slurm_env_file: Path | None) -> int:
    """Check `files` (against the cluster in `slurm_env_file` when given); the exit code."""
    from scriptast.common.text_files import read_text_file
    from scriptast.errors import ScriptastError
    from scriptast.readers.linter.lint import lint_text

    env = None
    if slurm_env_file is not None:
        from scriptast.cluster.read_slurm_env import load_slurm_env

        try:
            env = load_slurm_env(str(slurm_env_file), "verify").env
        except ScriptastError as error:
            from scriptast.cli.say import fail

            fail(str(error))
    plugins = env.plugin_options if env is not None else None
    failed = False
    out: list[str] = []
    err: list[str] = []
    for path in files:
        try:
            text = read_text_file(path, "script")
        except ScriptastError as error:
            failed = True
            err.append(f"error: {error}\n")
            continue
        report = lint_text(text, context=str(path), batch_script=True, plugins=plugins)
        findings = list(report.findings)
        for embedded in report.embedded:
            findings += embedded.report.findings
        if env is not None:
            from scriptast.readers.linter.cluster_check import check_against

            findings += check_against(report, env, str(path))
        err += [f"{f.where}: {f.message}\n" for f in findings]
        err += [f"{f.where}: note: {f.message}\n" for f in _notes(report)]
        failed = failed or bool(findings)
        if not findings:
            out.append(f"{path}: ok{_caveats(report, text)}\n")
        if len(out) + len(err) > FLUSH_EVERY:
            _flush(out, err)
    _flush(out, err)
    return 1 if failed else 0


FLUSH_EVERY = 256


def _flush(out: list[str], err: list[str]) -> None:
    sys.stdout.write("".join(out))
    sys.stdout.flush()
    sys.stderr.write("".join(err))
    out.clear()
    err.clear()


def _notes(report: Report) -> list[Finding]:
    return [*report.notes, *(note for e in report.embedded for note in e.report.notes)]


def _caveats(report: Report, text: str) -> str:
    """What an `ok` did not cover: the syntax judged by bash alone, values only the running
    script knows, a file that is not a whole batch script."""
    said = []
    if report.interpreter is not None:
        said.append(f"a {report.interpreter} script: only its #SBATCH lines were read")
    if report.bash_only is not None:
        said.append(f"syntax checked by bash -n; bashlex cannot read it: {report.bash_only}")
    if report.not_checked:
        shown = "; ".join(report.not_checked[:NOT_CHECKED_SHOWN])
        more = len(report.not_checked) - NOT_CHECKED_SHOWN
        shown += f"; and {more} more" if more > 0 else ""
        said.append(f"not checked, known only when it runs: {shown}")
    if not text.startswith("#!") and not report.directives:
        said.append("no #! line: a fragment to source or splice, not a script sbatch takes")
    return f" ({'. '.join(said)})" if said else ""
