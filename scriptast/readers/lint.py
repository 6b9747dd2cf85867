"""Check any bash/Slurm script, hand-written or not: it parses, its #SBATCH lines come before the
first command, and each srun's options (pyxis flags too) are well formed."""

from __future__ import annotations

import msgspec

from scriptast.errors import ScriptastError, VerifyError
from scriptast.model.slurm import SrunStep
from scriptast.model.slurm_options import SBATCH_OPTIONS_ANY
from scriptast.model.words import literal_text
from scriptast.readers.readback import literal_value, read_word, sbatch_tokens
from scriptast.readers.sbatch_header import scan_header
from scriptast.readers.srun_argv import parse_srun


class Finding(msgspec.Struct, frozen=True):
    """One problem: where (line or context) and what."""

    where: str
    message: str


class Directive(msgspec.Struct, frozen=True):
    """One `#SBATCH --name[=value]` read back as sbatch reads it."""

    line: int
    name: str
    value: str | None


class Report(msgspec.Struct, frozen=True):
    """What lint found, and what it read (for further checks against a cluster).
    `bash_only` says why only `bash -n` checked the syntax (bashlex could not read it), in
    which case srun steps were not read."""

    findings: tuple[Finding, ...]
    directives: tuple[Directive, ...]
    srun_steps: tuple[SrunStep, ...]
    bash_only: str | None = None


BASHLEX_MAX_LINES = 3000
"""Longer scripts are checked by `bash -n` alone: bashlex takes ~0.7 ms a line."""
BASH_SECONDS = 30


def lint_text(text: str, *, context: str = "script") -> Report:
    """Findings for `text`; an empty tuple means it passed."""
    from scriptast.readers.verify import parse_commands

    findings: list[Finding] = _bytes_sbatch_refuses(text, context)
    directives, header_findings = read_directives(text, context)
    findings += header_findings
    steps: list[SrunStep] = []
    lines = text.count("\n") + 1
    try:
        if lines > BASHLEX_MAX_LINES:
            raise VerifyError(f"{lines} lines are more than bashlex is asked to read")
        if "\0" in text:
            raise VerifyError("it holds a NUL byte")
        commands = parse_commands(text)
    except VerifyError as error:
        named = tuple(directives)
        problem = bash_syntax_problem(text)
        if problem is not None:
            return Report((*findings, Finding(context, f"bash -n: {problem}")), named, ())
        reason = str(error).removeprefix("emitted text does not parse: ")
        return Report(tuple(findings), named, (), bash_only=reason)
    for command in commands:
        if not command.words:
            continue
        try:
            head = literal_value(read_word(command.words[0]))
        except ScriptastError:
            continue
        if head != "srun":
            continue
        try:
            argv = [literal_value(read_word(word)) for word in command.words]
            step = parse_srun(argv)
        except ScriptastError as error:
            findings.append(Finding(f"{context}: srun", str(error)))
            continue
        steps.append(step)
        words = [literal_text(w) or "" for w in step.command]
        if len(words) >= 3 and words[0] == "bash" and words[1] == "-c":
            inner = lint_text(words[2], context=f"{context}: srun payload")
            findings.extend(inner.findings)
    return Report(tuple(findings), tuple(directives), tuple(steps))


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
                directives.append(Directive(number, _SHORT[token], tokens[index + 1]))
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
            ["bash", "-n"],
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
    return Directive(line, name, value if equals else None)
