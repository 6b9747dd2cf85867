"""Check any bash/Slurm script, hand-written or not: it parses, its #SBATCH lines come before the
first command, and each srun's options (pyxis flags too) are well formed."""

from __future__ import annotations

import re
import unicodedata

import msgspec

from scriptast.contract.slurm_env import PluginOption
from scriptast.errors import VerifyError
from scriptast.readers.linter.option_words import literal_words, read_options
from scriptast.readers.linter.script_commands import (
    HereDoc,
    ScannedCommand,
    named_in,
    scan_commands,
)
from scriptast.readers.linter.slurm_cli import table
from scriptast.readers.linter.srun_words import SrunUse, read_srun_words, word_text
from scriptast.readers.roundtrip.readback import sbatch_tokens
from scriptast.readers.roundtrip.sbatch_header import scan_header


class Finding(msgspec.Struct, frozen=True):
    """One problem: where (line or context) and what; `refused` when sbatch there would refuse
    the script outright (an option its release does not have)."""

    where: str
    message: str
    refused: bool = False
    note: bool = False


class Directive(msgspec.Struct, frozen=True):
    """One `#SBATCH --name[=value]` read back as sbatch reads it; `component`: the part of a
    heterogeneous job it belongs to (0, then one more after each `#SBATCH hetjob`)."""

    line: int
    name: str
    value: str | None
    component: int = 0


class Report(msgspec.Struct, frozen=True):
    """What lint found, and what it read (for further checks against a cluster).
    `notes`: what may still be right (an option a site's plugin may add); `bash_only` says
    why only `bash -n` checked the syntax (bashlex could not read it); `not_checked` names what
    only the running script knows (`"${args[@]}"`, `--ntasks=$N`), each with its line;
    `embedded`: the batch scripts the text writes or submits from here-documents."""

    findings: tuple[Finding, ...]
    directives: tuple[Directive, ...]
    srun_steps: tuple[SrunUse, ...]
    bash_only: str | None = None
    not_checked: tuple[str, ...] = ()
    notes: tuple[Finding, ...] = ()
    embedded: tuple[Embedded, ...] = ()
    interpreter: str | None = None
    """The program of a `#!` line that is no shell (python3): only `#SBATCH` lines are read."""


class Embedded(msgspec.Struct, frozen=True):
    """A batch script held in a here-document (`cat > job.sh <<EOF`, `sbatch <<EOF`): the name
    it is reported under, the line its text starts on in the outer file, and its own report
    (its lines numbered from 1)."""

    name: str
    first_line: int
    report: Report


BASHLEX_MAX_LINES = 3000
"""Longer scripts are checked by `bash -n` alone: bashlex takes ~0.7 ms a line."""
BASH_SECONDS = 30


def lint_text(
    text: str,
    *,
    context: str = "script",
    batch_script: bool = False,
    plugins: tuple[PluginOption, ...] | None = None,
    dollar_expanded: bool = False,
) -> Report:
    """Findings for `text`; an empty tuple means it passed. `batch_script`: the text is a
    file that sbatch may be given, so it must start with `#!` when it has `#SBATCH` lines.
    `plugins`: the cluster's SPANK options (None: pyxis', and an option nobody has is a note).
    `dollar_expanded`: the text was written by an unquoted here-document, so its `$` were
    expanded then and a value holding one is not judged."""
    findings: list[Finding] = _bytes_sbatch_refuses(text, context)
    findings += _interpreter_line_problem(text, context)
    other = other_interpreter(text)
    shell = other is None and len(text) <= SCAN_MAX_CHARACTERS
    commands = scan_commands(text) if shell else []
    bodies = [(command, body) for command in commands for body in command.heredocs]
    bodies += [found for command in commands for found in _substituted_heredocs(command)]
    bodies.sort(key=lambda pair: pair[1].first_line)
    inside = frozenset(
        number
        for _, body in bodies
        for number in range(body.first_line, body.first_line + body.text.count("\n") + 1)
    ) | frozenset(number for command in commands for number in command.inner_lines)
    directives, header_findings = read_directives(
        text, context, plugins=plugins, late_lines=inside, dollar_expanded=dollar_expanded
    )
    notes = [finding for finding in header_findings if finding.note]
    findings += [finding for finding in header_findings if not finding.note]
    findings += _log_folder_made_later(directives, commands, context)
    if batch_script and directives and not text.startswith("#!"):
        findings.append(
            Finding(
                f"{context}:1",
                "no #! line: sbatch refuses a script whose first line is not #! and an "
                "interpreter; add #!/bin/bash",
            )
        )
    embedded = tuple(
        _embedded(command, body, context, plugins)
        for command, body in bodies
        if _is_batch_script(command, body)
    )
    if other is not None:
        return Report(tuple(findings), tuple(directives), (), notes=tuple(notes), interpreter=other)
    bash_only = _syntax_unread_by_bashlex(text)
    if bash_only is not None:
        problem = bash_syntax_problem(text)
        if problem is not None:
            named = tuple(directives)
            failed = Finding(context, f"bash -n: {problem}")
            return Report((*findings, failed), named, (), notes=tuple(notes), embedded=embedded)
    steps: list[SrunUse] = []
    not_checked: list[str] = []
    for command in named_in(commands, "srun"):
        reading = read_srun_words(command.words, plugins=plugins, dollar_expanded=dollar_expanded)
        where = f"{context}:{command.line}"
        not_checked += [f"line {command.line}: {word}" for word in reading.not_checked]
        notes += [Finding(f"{where}: srun", note, note=True) for note in reading.notes]
        if reading.step is None:
            findings.append(Finding(f"{where}: srun", str(reading.error)))
            continue
        steps.append(reading.step)
        if reading.payload is not None:
            inner = lint_text(reading.payload, context=f"{where}: srun payload", plugins=plugins)
            findings.extend(inner.findings)
            notes.extend(inner.notes)
            not_checked += [f"line {command.line} payload {n}" for n in inner.not_checked]
    return Report(
        tuple(findings),
        tuple(directives),
        tuple(steps),
        bash_only,
        tuple(not_checked),
        tuple(notes),
        embedded,
    )


SCAN_MAX_CHARACTERS = 4 * 1024 * 1024
"""Scripts longer than this have their srun commands left unread."""


def _syntax_unread_by_bashlex(text: str) -> str | None:
    """None when bashlex reads `text`; else why not (then `bash -n` judges it)."""
    from scriptast.readers.roundtrip.verify import parse_commands

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


def read_directives(
    text: str,
    context: str = "script",
    *,
    plugins: tuple[PluginOption, ...] | None = None,
    late_lines: frozenset[int] = frozenset(),
    dollar_expanded: bool = False,
) -> tuple[list[Directive], list[Finding]]:
    """The `#SBATCH` options sbatch reads (those before the first command), each by its own name
    (an old spelling or an unambiguous prefix resolved as getopt_long resolves it), and findings:
    an option sbatch refuses, a value it cannot read, a word that is no option, an `#SBATCH`
    line it ignores. An option neither Slurm nor pyxis has is a note (a site's SPANK plugin may
    add it), unless `plugins` lists the cluster's own. `late_lines`: lines that are another
    script's text (a here-document, a string), never this one's directives; `dollar_expanded`:
    the text's `$` were expanded when it was written, so a value holding one is not judged."""
    findings: list[Finding] = []
    directives: list[Directive] = []
    header = scan_header(text)
    options = table("sbatch", plugins)
    component = 0
    for number, stripped in header.directives:
        where = f"{context}:{number}"
        try:
            tokens = sbatch_tokens(stripped[len("#SBATCH") :])
        except VerifyError as error:
            findings.append(Finding(where, str(error)))
            continue
        if [token.lower() for token in tokens] in (["hetjob"], ["packjob"]):
            component += 1  # the next component of a heterogeneous job starts here
            continue
        reading = read_options(
            options,
            literal_words(tokens),
            stop_at_operand=False,
            plugins_declared=plugins is not None,
            dollar_expanded=dollar_expanded,
        )
        findings += [Finding(where, message) for message in reading.errors]
        findings += [Finding(where, message, note=True) for message in reading.notes]
        if reading.operands:
            findings.append(
                Finding(
                    where,
                    f"{reading.operands[0]!r} is not an option: sbatch refuses the script "
                    "(Invalid directive found in batch script)",
                )
            )
        directives += [Directive(number, name, value, component) for name, value in reading.options]
    for number in header.late:
        if number in late_lines:
            continue
        message = (
            f"#SBATCH after the first command (line {header.first_command}); sbatch ignores it"
        )
        findings.append(Finding(f"{context}:{number}", message))
    return directives, findings


SHELLS = frozenset({"sh", "bash", "dash", "ksh", "zsh"})


def other_interpreter(text: str) -> str | None:
    """The program a `#!` line names when it is not a shell (`python3` in
    `#!/usr/bin/env python3`), else None."""
    if not text.startswith("#!"):
        return None
    words = text[2 : text.find("\n") if "\n" in text else len(text)].split()
    if not words:
        return None
    program = words[0].rsplit("/", 1)[-1]
    if program == "env":
        rest = [word for word in words[1:] if not word.startswith("-")]
        program = rest[0] if rest else program
    return None if program in SHELLS or program == "env" else program


def _interpreter_line_problem(text: str, context: str) -> list[Finding]:
    """A `#!` line with a character outside ASCII (an en dash, U+2013, written for the `-` of
    `#!/bin/sh -l`): the kernel hands it to the interpreter as it is, which takes it for a file
    to run."""
    if not text.startswith("#!"):
        return []
    first = text.split("\n", 1)[0]
    for column, char in enumerate(first, start=1):
        if not char.isascii():
            name = unicodedata.name(char, "an unnamed character")
            return [
                Finding(
                    f"{context}:1",
                    f"the #! line holds U+{ord(char):04X} ({name}) at column {column}: the "
                    "interpreter gets it as written and the job fails at once; write it in "
                    "ASCII (a '-' for a dash)",
                )
            ]
    return []


def _log_folder_made_later(
    directives: list[Directive], commands: list[ScannedCommand], context: str
) -> list[Finding]:
    """`--output`/`--error` in a folder the script itself creates (`mkdir -p logs`): Slurm opens
    the log before the script runs, so on a fresh checkout the job fails with no log."""
    made: dict[str, int] = {}
    for command in named_in(commands, "mkdir"):
        for raw in command.words[1:]:
            text = word_text(raw)
            if text and not text.startswith("-"):
                made.setdefault(_folder(text), command.line)
    found = []
    for directive in directives:
        if directive.name not in ("output", "error") or not directive.value:
            continue
        folder = _folder(directive.value.rpartition("/")[0]) if "/" in directive.value else ""
        if not folder:
            continue
        line = next(
            (n for path, n in made.items() if path == folder or path.startswith(f"{folder}/")),
            None,
        )
        if line is not None:
            found.append(
                Finding(
                    f"{context}:{directive.line}",
                    f"--{directive.name}={directive.value}: its folder {folder} is made by the "
                    f"script itself (mkdir, line {line}), but Slurm opens the log before the "
                    "script runs: on a fresh checkout the job fails with no log; create the "
                    "folder before sbatch, or write the log elsewhere",
                )
            )
    return found


def _folder(path: str) -> str:
    while path.startswith("./"):
        path = path[2:]
    return path.rstrip("/") or path


def _substituted_heredocs(command: ScannedCommand) -> list[tuple[ScannedCommand, HereDoc]]:
    """Here-documents inside a command substitution of `command`'s words, the way a generator
    submits a job and keeps its id (`jid=$(sbatch --parsable <<EOF ... EOF)`), their lines
    counted in the outer file (from the command's line and the line breaks of the words
    before; a line continued with a backslash between words is not counted)."""
    found: list[tuple[ScannedCommand, HereDoc]] = []
    line = command.line
    for word in command.words:
        start = word.find("$(")
        if start >= 0 and "<<" in word and word.endswith(")"):
            opened = line + word[:start].count("\n")
            for inner in scan_commands(word[start + 2 : -1]):
                for body in inner.heredocs:
                    shifted = msgspec.structs.replace(body, first_line=body.first_line + opened - 1)
                    found.append((inner, shifted))
        line += word.count("\n")
    return found


def _program(command: ScannedCommand) -> str:
    """The program a command runs, past `VAR=value`, `exec` and the like: sbatch, cat, tee or
    another."""
    for name in ("sbatch", "cat", "tee"):
        if named_in([command], name):
            return name
    return ""


def _is_batch_script(command: ScannedCommand, body: HereDoc) -> bool:
    """Whether a here-document is a batch script: submitted by sbatch, or written out by
    cat/tee with a `#!` line and `#SBATCH` lines."""
    program = _program(command)
    if program == "sbatch":
        return True
    if program not in ("cat", "tee"):
        return False
    return body.text.startswith("#!") and "#SBATCH" in body.text


def _embedded(
    command: ScannedCommand, body: HereDoc, context: str, plugins: tuple[PluginOption, ...] | None
) -> Embedded:
    """The report of a batch script held in a here-document, under the name of the file it is
    written to (or as sbatch's input), its lines numbered in the outer file."""
    program = _program(command)
    if program == "sbatch":
        name = "the script sbatch reads from this here-document"
    else:
        target = command.writes
        if program == "tee":
            words = named_in([command], "tee")[0].words[1:]
            target = next((w for w in words if not w.startswith("-")), target)
        shown = word_text(target) if target else None
        name = f"{shown or target or 'the file it writes'} (here-document)"
    text = body.text if body.quoted else _as_written(body.text)
    inner = lint_text(
        text,
        context=context,
        batch_script=True,
        plugins=plugins,
        dollar_expanded=not body.quoted,
    )
    shift = body.first_line - 1
    report = msgspec.structs.replace(
        inner,
        findings=tuple(_moved(f, context, shift, name) for f in inner.findings),
        notes=tuple(_moved(f, context, shift, name) for f in inner.notes),
    )
    return Embedded(name, body.first_line, report)


def _moved(finding: Finding, context: str, shift: int, name: str) -> Finding:
    """A here-document's finding at its line in the outer file, saying whose it is."""
    where = finding.where
    match = re.match(rf"{re.escape(context)}:(\d+)", where)
    if match is not None:
        where = f"{context}:{int(match.group(1)) + shift}{where[match.end() :]}"
    return msgspec.structs.replace(finding, where=where, message=f"in {name}: {finding.message}")


def _as_written(body: str) -> str:
    """An unquoted here-document's text as bash writes it: `\\$`, `\\``, `\\\\` unescaped and
    backslash-newline joined; expansions stay as written (only the running script knows them)."""
    return re.sub(r"\\([$`\\])|\\\n", lambda m: m.group(1) or "", body)


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
