"""Quoting, one encoder per context: bash words, #SBATCH values, pyxis lists, docker --mount.

Every encoder returns text that its reader turns back into exactly the value given, or raises
QuoteError naming the value, the context and the offset of the first character it cannot
represent. Only emitters call these.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from scriptast.common.bashlex_limits import confuses_bashlex
from scriptast.errors import QuoteError
from scriptast.model.node import RESERVED_WORDS
from scriptast.model.slurm import Mount, pyxis_path_problem

_BASH_SAFE = re.compile(r"[A-Za-z0-9_@%+=:,./-][A-Za-z0-9_@%+=:,./#-]*\Z")
_DOUBLE_QUOTE_UNSAFE = frozenset('"$`\\!')
_ASSIGNMENT_LIKE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_TEST_OPERATORS = frozenset({"[", "]", "!=", "==", "-ne", "-eq"})
"""Words of `[ ... ]` that bash reads literally unquoted (a lone `[` or `]` is no glob)."""
_ANSI_ESCAPES = {
    "\\": "\\\\", "'": "\\'", "\n": "\\n", "\t": "\\t", "\r": "\\r", "$": "\\x24", "`": "\\x60",
}  # fmt: skip


_CONTROL_BUT_NEWLINE_TAB = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _is_control(char: str) -> bool:
    code = ord(char)
    return code < 0x20 or code == 0x7F


def bash_word(value: str, *, command_position: bool = False) -> str:
    """Quote `value` as one bash word: bare when safe, else '...', else $'...' for controls.

    >>> bash_word("a b"), bash_word("it's"), bash_word("x\\x01")
    ("'a b'", '"it\\'s"', "$'x\\\\x01'")
    """
    if "\0" in value:
        raise QuoteError(value, "a bash word", "bash cannot pass a NUL byte", value.index("\0"))
    _check_encodable(value, "a bash word")
    if (
        value
        and _BASH_SAFE.match(value)
        and not (command_position and (_ASSIGNMENT_LIKE.match(value) or value in RESERVED_WORDS))
    ):
        return value
    if value in _TEST_OPERATORS:
        return value
    if _CONTROL_BUT_NEWLINE_TAB.search(value):
        return "$'" + "".join(_ansi_char(c) for c in value) + "'"
    if "'" in value and not _DOUBLE_QUOTE_UNSAFE.intersection(value):
        return '"' + value + '"'
    if confuses_bashlex(value):
        return _escape_expansion_chars(value)
    return _single_quoted(value)


def _single_quoted(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


def _escape_expansion_chars(value: str) -> str:
    """Single-quote the runs between `$`, backquote and process-substitution `(` characters,
    backslash-escape those."""
    pieces = []
    for run in re.split(r"([$`]|(?<=[<>])\()", value):
        if run in ("$", "`", "("):
            pieces.append("\\" + run)
        elif run:
            pieces.append(run if _BASH_SAFE.match(run) and run[0] != "#" else _single_quoted(run))
    return "".join(pieces)


def _ansi_char(char: str) -> str:
    if char in _ANSI_ESCAPES:
        return _ANSI_ESCAPES[char]
    if _is_control(char):
        return f"\\x{ord(char):02x}"
    return char


def _check_encodable(value: str, context: str) -> None:
    if value.isascii():
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise QuoteError(value, context, "not encodable as UTF-8", error.start) from None


_SBATCH_SAFE = re.compile(r"[A-Za-z0-9_@%+=:,./#-]+\Z")


@functools.lru_cache(maxsize=1024)
def sbatch_value(value: str) -> str:
    """Encode an #SBATCH option value for sbatch's own tokenizer.

    sbatch splits a directive line on whitespace, groups quoted text, lets a backslash escape the
    next character even inside quotes, and ends the line at an unquoted `#`. Values with anything
    but safe characters go inside double quotes with `\\` and `"` escaped.
    """
    for bad, reason in (
        ("\n", "a directive is one line"),
        ("\r", "a directive is one line"),
        ("\0", "sbatch cannot read a NUL byte"),
    ):
        if bad in value:
            raise QuoteError(value, "an #SBATCH value", reason, value.index(bad))
    if "hetjob" in value:
        raise QuoteError(
            value, "an #SBATCH value", "sbatch splits the job at 'hetjob'", value.index("hetjob")
        )
    _check_encodable(value, "an #SBATCH value")
    if value and _SBATCH_SAFE.match(value) and "#" not in value:
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def pyxis_path(path: str, what: str) -> str:
    """A path as pyxis reads it in `--container-mounts`; it has no escape at all."""
    problem = pyxis_path_problem(path)
    if problem is not None:
        offset, name = problem
        raise QuoteError(
            path,
            f"a pyxis {what}",
            f"pyxis cannot express a path with {name}; "
            "use a path (or symlink) without spaces, commas or colons",
            offset,
        )
    return path


def pyxis_mounts(mounts: Iterable[Mount]) -> str:
    """`src:dst[:flag+flag],...` for `--container-mounts`."""
    entries = []
    for mount in mounts:
        entry = (
            f"{pyxis_path(mount.source, 'mount source')}:{pyxis_path(mount.target, 'mount target')}"
        )
        if mount.flags:
            entry += ":" + "+".join(mount.flags)
        entries.append(entry)
    return ",".join(entries)


def pyxis_names(names: tuple[str, ...]) -> str:
    """A comma-separated list of variable names for `--container-env`."""
    return ",".join(names)


def dup_target(value: str) -> str:
    """The target of `>&`: bash reads `>&-x` as `>&-` (close) and then the word `x`, so a target
    that starts with `-` is quoted unless it is the lone `-` that closes the descriptor."""
    if value != "-" and value.startswith("-"):
        _check_encodable(value, "a redirection target")
        return _single_quoted(value)
    return bash_word(value)


def docker_mount_field(key: str, value: str) -> str:
    """One `key=value` field of `docker run --mount`, which docker reads as a CSV record."""
    if "\n" in value or "\r" in value:
        raise QuoteError(value, "a docker --mount field", "docker cannot read a newline here")
    if "\0" in value:
        raise QuoteError(value, "a docker --mount field", "NUL byte", value.index("\0"))
    field = f"{key}={value}"
    if any(c in field for c in ',"') or field != field.strip():
        return '"' + field.replace('"', '""') + '"'
    return field


def docker_mount(source: str, target: str, readonly: bool) -> str:
    """`type=bind,source=...,target=...[,readonly]`."""
    fields = [
        "type=bind",
        docker_mount_field("source", source),
        docker_mount_field("target", target),
    ]
    if readonly:
        fields.append("readonly")
    return ",".join(fields)
