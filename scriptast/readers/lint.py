"""Check any bash/Slurm script, hand-written or not: it parses, its #SBATCH lines come before the
first command, and each srun's options (pyxis flags too) are well formed."""

from __future__ import annotations

import re

import msgspec

from scriptast.errors import VerifyError
from scriptast.model.slurm import SrunStep
from scriptast.model.slurm_options import INT_OPTIONS, SBATCH_OPTIONS_ANY
from scriptast.readers.readback import sbatch_tokens
from scriptast.readers.sbatch_header import scan_header
from scriptast.readers.script_commands import commands_named
from scriptast.readers.srun_words import read_srun_words


class Finding(msgspec.Struct, frozen=True):
    """One problem: where (line or context) and what; `refused` when sbatch there would refuse
    the script outright (an option its release does not have)."""

    where: str
    message: str
    refused: bool = False


class Directive(msgspec.Struct, frozen=True):
    """One `#SBATCH --name[=value]` read back as sbatch reads it."""

    line: int
    name: str
    value: str | None


class Report(msgspec.Struct, frozen=True):
    """What lint found, and what it read (for further checks against a cluster).
    `bash_only` says why only `bash -n` checked the syntax (bashlex could not read it);
    `not_checked` names what only the running script knows (`"${args[@]}"`, `--ntasks=$N`),
    each with its line."""

    findings: tuple[Finding, ...]
    directives: tuple[Directive, ...]
    srun_steps: tuple[SrunStep, ...]
    bash_only: str | None = None
    not_checked: tuple[str, ...] = ()


BASHLEX_MAX_LINES = 3000
"""Longer scripts are checked by `bash -n` alone: bashlex takes ~0.7 ms a line."""
BASH_SECONDS = 30


def lint_text(text: str, *, context: str = "script", batch_script: bool = False) -> Report:
    """Findings for `text`; an empty tuple means it passed. `batch_script`: the text is a
    file that sbatch may be given, so it must start with `#!` when it has `#SBATCH` lines."""
    findings: list[Finding] = _bytes_sbatch_refuses(text, context)
    directives, header_findings = read_directives(text, context)
    findings += header_findings
    if batch_script and directives and not text.startswith("#!"):
        findings.append(
            Finding(
                f"{context}:1",
                "no #! line: sbatch refuses a script whose first line is not #! and an "
                "interpreter; add #!/bin/bash",
            )
        )
    bash_only = _syntax_unread_by_bashlex(text)
    if bash_only is not None:
        problem = bash_syntax_problem(text)
        if problem is not None:
            named = tuple(directives)
            return Report((*findings, Finding(context, f"bash -n: {problem}")), named, ())
    steps: list[SrunStep] = []
    not_checked: list[str] = []
    if bash_only is None or len(text) <= SCAN_MAX_CHARACTERS:
        for command in commands_named(text, "srun"):
            reading = read_srun_words(command.words)
            where = f"{context}:{command.line}"
            not_checked += [f"line {command.line}: {word}" for word in reading.not_checked]
            if reading.step is None:
                findings.append(Finding(f"{where}: srun", str(reading.error)))
                continue
            steps.append(reading.step)
            if reading.payload is not None:
                inner = lint_text(reading.payload, context=f"{where}: srun payload")
                findings.extend(inner.findings)
                not_checked += [f"line {command.line} payload {n}" for n in inner.not_checked]
    return Report(tuple(findings), tuple(directives), tuple(steps), bash_only, tuple(not_checked))


SCAN_MAX_CHARACTERS = 4 * 1024 * 1024
"""Scripts longer than this have their srun commands left unread."""


def _syntax_unread_by_bashlex(text: str) -> str | None:
    """None when bashlex reads `text`; else why not (then `bash -n` judges it)."""
    from scriptast.readers.verify import parse_commands

    lines = text.count("\n") + 1
    try:
        if lines > BASHLEX_MAX_LINES:
            raise VerifyError(f"{lines} lines are more than bashlex is asked to read")
        if "\0" in text:
            raise VerifyError("it holds a NUL byte")
        parse_commands(text)
    except VerifyError as error:
        return str(error).removeprefix("emitted text does not parse: ")
    return None


def read_directives(text: str, context: str = "script") -> tuple[list[Directive], list[Finding]]:
    """The `#SBATCH` options sbatch reads (those before the first command), and findings:
    an unknown option, an unterminated quote, an `#SBATCH` line sbatch ignores."""
    findings: list[Finding] = []
    directives: list[Directive] = []
    header = scan_header(text)
    for number, stripped in header.directives:
        where = f"{context}:{number}"
        try:
            tokens = sbatch_tokens(stripped[len("#SBATCH") :])
        except VerifyError as error:
            findings.append(Finding(where, str(error)))
            continue
        index = 0
        while index < len(tokens):
            token = tokens[index]
            if token in _SHORT and index + 1 < len(tokens):
                name, value = _SHORT[token], tokens[index + 1]
                problem = value_problem(name, value)
                if problem is not None:
                    findings.append(Finding(where, problem))
                directives.append(Directive(number, name, value))
                index += 2
                continue
            directive = _directive(token, number, context, findings)
            if directive.name:
                directives.append(directive)
            index += 1
    for number in header.late:
        message = (
            f"#SBATCH after the first command (line {header.first_command}); sbatch ignores it"
        )
        findings.append(Finding(f"{context}:{number}", message))
    return directives, findings


def _bytes_sbatch_refuses(text: str, context: str) -> list[Finding]:
    """sbatch refuses a script with DOS line breaks or a NUL byte."""
    found = []
    if "\r\n" in text:
        line = text[: text.index("\r\n")].count("\n") + 1
        found.append(
            Finding(
                f"{context}:{line}",
                "DOS line breaks (CRLF): sbatch refuses the script; convert it with dos2unix",
            )
        )
    if "\0" in text:
        offset = text.index("\0")
        line = text[:offset].count("\n") + 1
        found.append(
            Finding(f"{context}:{line}", f"NUL byte at offset {offset}: sbatch refuses the script")
        )
    return found


def bash_syntax_problem(text: str) -> str | None:
    """What real `bash -n` says is wrong with `text`, or None when it reads it."""
    import subprocess

    try:
        result = subprocess.run(
            ["bash", *_shell_options(text), "-n"],
            input=text.encode("utf-8", "surrogateescape"),
            capture_output=True,
            timeout=BASH_SECONDS,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"could not run bash -n: {error}"
    if result.returncode == 0:
        return None
    message = result.stderr.decode("utf-8", "replace").strip().splitlines()
    return " ".join(message[:2]) if message else f"exit code {result.returncode}"


def _shell_options(text: str) -> list[str]:
    """Parser options the script turns on for itself (`shopt -s extglob`), which `bash -n`
    does not run but must know to read the lines after it."""
    return ["-O", "extglob"] if _EXTGLOB_ON.search(text) else []


_EXTGLOB_ON = re.compile(r"^[ \t]*shopt[ \t]+-s[ \t]+(?:[\w \t]*[ \t])?extglob\b", re.MULTILINE)


_SHORT = {
    "-p": "partition", "-A": "account", "-t": "time", "-N": "nodes", "-n": "ntasks",
    "-J": "job-name", "-o": "output", "-e": "error", "-G": "gpus",
}  # fmt: skip


def _directive(token: str, line: int, context: str, findings: list[Finding]) -> Directive:
    if not token.startswith("--"):
        return Directive(line, "", token)
    name, equals, value = token[2:].partition("=")
    if name not in SBATCH_OPTIONS_ANY:
        findings.append(Finding(f"{context}:{line}", f"--{name} is not an sbatch option"))
    elif equals:
        problem = value_problem(name, value)
        if problem is not None:
            findings.append(Finding(f"{context}:{line}", problem))
    return Directive(line, name, value if equals else None)


COUNT_OPTIONS = INT_OPTIONS | {"gpus", "gpus-per-node", "gpus-per-task", "cpus-per-gpu"}
"""Options whose value is a count (the GPU ones may name a type first: `h100:4`)."""


def value_problem(name: str, value: str) -> str | None:
    """What sbatch makes of an `#SBATCH --name=value` that is not what its writer meant."""
    if "$" in value:
        return (
            f"--{name}={value}: sbatch does not expand variables in #SBATCH lines; "
            "write the value, or pass it on the sbatch command line"
        )
    if name in COUNT_OPTIONS and re.match(r"(?:\w+:)?-\d", value):
        return f"--{name}={value}: a negative count; sbatch refuses it"
    if name == "gres" and re.search(r":-\d", value):
        return f"--gres={value}: a negative count; sbatch refuses it"
    return None
