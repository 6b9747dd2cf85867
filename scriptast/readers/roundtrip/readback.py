"""Read emitted text back: bash words to literals and expansions, #SBATCH lines to argv.

These readers are independent of the encoders in `quote`: they implement the shell's and
sbatch's rules, so a quoting mistake shows up as a difference, not as a shared blind spot.
"""

from __future__ import annotations

import functools
import re

from scriptast.errors import VerifyError
from scriptast.model.words import (
    SPECIAL_PARAMETERS,
    Lit,
    Param,
    RawShell,
    Word,
    WordPart,
    word_parts,
)

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ANSI_SIMPLE = {
    "n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v",
    "e": "\x1b", "E": "\x1b", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip


_STOPS = frozenset(" \t\n;&|<>()")
"""What ends a word in a command line: bash's blanks, newline and metacharacters."""
_NEEDS_SHELL = frozenset("$`~*?[]{}")
"""Unquoted characters that bash may expand: parameters, commands, tildes, globs, braces."""
_SCANNED_RUN = re.compile(r"[^ \t\n;&|<>()\\'\"$`]+")
"""A run of characters a scanned word takes as they are (no stop, quote, escape or `$`)."""


class Unterminated(Exception):
    """A quote the text does not close; `quote` is `single` or `double`."""

    def __init__(self, quote: str, offset: int) -> None:
        super().__init__(quote)
        self.quote = quote
        self.offset = offset


class WordReader:
    """The one reader of bash quoting (backslashes, single and double quotes, `$'...'`).

    Strict (`read_word`): one emitted word whole, its expansions as Param parts; anything it
    cannot read exactly (substitutions, an unquoted metacharacter) is a VerifyError.
    Scanning (`scan_word`): a word of a user's command line from `pos` to the next blank or
    metacharacter, quotes removed and expansions left as written, with `expands` set when
    bash could read any part differently from its literal text."""

    def __init__(self, text: str, pos: int = 0, *, scanning: bool = False) -> None:
        self.text = text
        self.pos = pos
        self.scanning = scanning
        self.expands = False
        self.parts: list[WordPart] = []
        self.literal: list[str] = []

    def fail(self, reason: str) -> VerifyError:
        return VerifyError(f"cannot read back word {self.text!r}: {reason} at offset {self.pos}")

    def flush(self) -> None:
        value = "".join(self.literal)
        if value:
            self.parts.append(Lit(value=value))
        self.literal = []

    def read(self) -> tuple[WordPart, ...]:
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if self.scanning and char in _STOPS:
                break
            if char == "\\":
                self._backslash()
            elif char == "'":
                end = text.find("'", self.pos + 1)
                if end < 0:
                    if self.scanning:
                        raise Unterminated("single", self.pos)
                    raise self.fail("unterminated single quote")
                self.literal.append(text[self.pos + 1 : end])
                self.pos = end + 1
            elif char == "$" and not self.scanning and text.startswith("$'", self.pos):
                self.pos += 2
                self._ansi_c()
            elif char == '"':
                self.pos += 1
                self._double_quoted()
            elif char in "$`":
                self._expansion(char)
            elif self.scanning:
                run = _SCANNED_RUN.match(text, self.pos)
                assert run is not None  # `char` itself is in the class
                self.expands = self.expands or not _NEEDS_SHELL.isdisjoint(run.group())
                self.literal.append(run.group())
                self.pos = run.end()
            elif char.isspace() or char in ";&|<>()":
                raise self.fail(f"unquoted {char!r}")
            else:
                self.literal.append(char)
                self.pos += 1
        self.flush()
        return tuple(self.parts)

    def _backslash(self) -> None:
        """An escaped character; a backslash-newline joins lines (and a trailing backslash
        has nothing to escape): a scanned word needs the shell then."""
        text = self.text
        if self.pos + 1 >= len(text):
            if not self.scanning:
                raise self.fail("trailing backslash")
            self.expands = True
        elif text[self.pos + 1] != "\n":
            self.literal.append(text[self.pos + 1])
        else:
            self.expands = self.expands or self.scanning
        self.pos += 2

    def _expansion(self, char: str) -> None:
        """`$` or a backquote: read as a parameter (strict), or kept as written (scanning)."""
        if self.scanning:
            self.expands = True
            self.literal.append(char)
            self.pos += 1
        elif char == "$":
            self._dollar()
        else:
            raise self.fail("backquote substitution")

    def _ansi_c(self) -> None:
        text = self.text
        while True:
            if self.pos >= len(text):
                raise self.fail("unterminated $'...'")
            char = text[self.pos]
            if char == "'":
                self.pos += 1
                return
            if char != "\\":
                self.literal.append(char)
                self.pos += 1
                continue
            escape = text[self.pos + 1 : self.pos + 2]
            if escape in _ANSI_SIMPLE:
                self.literal.append(_ANSI_SIMPLE[escape])
                self.pos += 2
            elif escape == "x":
                digits = re.match(r"[0-9A-Fa-f]{1,2}", text[self.pos + 2 :])
                if not digits:
                    raise self.fail("\\x without hex digits")
                self.literal.append(chr(int(digits.group(), 16)))
                self.pos += 2 + len(digits.group())
            else:
                raise self.fail(f"unsupported escape \\{escape}")

    def _double_quoted(self) -> None:
        text = self.text
        while True:
            if self.pos >= len(text):
                if self.scanning:
                    raise Unterminated("double", self.pos)
                raise self.fail("unterminated double quote")
            char = text[self.pos]
            if char == '"':
                self.pos += 1
                return
            if char == "\\" and text[self.pos + 1 : self.pos + 2] in ("$", "`", '"', "\\", "\n"):
                if text[self.pos + 1] != "\n":
                    self.literal.append(text[self.pos + 1])
                elif self.scanning:  # kept as written: the word goes to the shell anyway
                    self.expands = True
                    self.literal.append("\n")
                self.pos += 2
            elif char in "$`":
                self._expansion(char)
            else:
                self.literal.append(char)
                self.pos += 1

    def _dollar(self) -> None:
        text = self.text
        following = text[self.pos + 1 : self.pos + 2]
        if following == "{":
            end = text.find("}", self.pos + 2)
            if end < 0:
                raise self.fail("unterminated ${")
            self.flush()
            self.parts.append(_param(text[self.pos + 2 : end], self))
            self.pos = end + 1
        elif following == "(":
            raise self.fail("command substitution")
        elif following and (following in SPECIAL_PARAMETERS or following.isdigit()):
            self.flush()
            self.parts.append(Param(name=following))
            self.pos += 2
        else:
            match = _NAME.match(text, self.pos + 1)
            if match:
                self.flush()
                self.parts.append(Param(name=match.group()))
                self.pos = match.end()
            else:
                self.literal.append("$")
                self.pos += 1


def _param(inner: str, reader: WordReader) -> Param:
    if inner.startswith("!") and inner.endswith("@") and _NAME.fullmatch(inner[1:-1]):
        return Param(name=inner[1:-1], form="prefix_names")
    if ":-" in inner:
        name, default = inner.split(":-", 1)
        return Param(name=name, form="default", default=default)
    if _NAME.fullmatch(inner) or inner in SPECIAL_PARAMETERS or inner.isdigit():
        return Param(name=inner)
    raise reader.fail(f"unsupported expansion ${{{inner}}}")


_LITERAL_WORD = re.compile(r"(?:'[^']*'|\\[^\n]|[^\s'\"\\$`;&|<>()])+\Z")
_LITERAL_PIECE = re.compile(r"'([^']*)'|\\([^\n])|([^\s'\"\\$`;&|<>()]+)")


@functools.lru_cache(maxsize=4096)
def read_word(text: str) -> tuple[WordPart, ...]:
    """The parts bash makes of one word's raw text: literals (quotes removed) and expansions.

    A word of single-quoted, escaped and plain pieces alone is read by pattern (the same
    reading as the character reader's, which takes every other word). Remembered by the
    text (the parts are frozen): the jobs of a sweep repeat most of their words."""
    if _LITERAL_WORD.match(text):
        value = "".join(
            next(group for group in piece.groups() if group is not None)
            for piece in _LITERAL_PIECE.finditer(text)
        )
        return (Lit(value=value),) if value else ()
    return WordReader(text).read()


def normalize(word: Word) -> tuple[WordPart, ...]:
    """A model word as `read_word` would give it: empty literals dropped, neighbours merged."""
    parts: list[WordPart] = []
    for part in word_parts(word):
        if isinstance(part, Lit):
            if not part.value:
                continue
            if parts and isinstance(parts[-1], Lit):
                parts[-1] = Lit(value=parts[-1].value + part.value)
                continue
        parts.append(part)
    return tuple(parts)


def has_raw_shell(word: Word) -> bool:
    """True when a word holds unchecked raw shell text."""
    return any(isinstance(part, RawShell) for part in word_parts(word))


def literal_value(parts: tuple[WordPart, ...]) -> str:
    """The text of read-back parts that are all literal (expansions read back as `$NAME`)."""
    out = []
    for part in parts:
        if isinstance(part, Lit):
            out.append(part.value)
        elif isinstance(part, Param):
            out.append(f"${{{part.name}}}")
        else:
            out.append(part.text)
    return "".join(out)


def sbatch_tokens(line: str) -> list[str]:
    """Split the text after `#SBATCH` as sbatch does: whitespace separates, quotes group, a
    backslash escapes the next character (inside quotes too), an unquoted `#` ends the line."""
    if not any(char in line for char in "\\'\"#"):
        return line.split()
    tokens: list[str] = []
    current: list[str] = []
    in_token = False
    quote: str | None = None
    index = 0
    while index < len(line):
        char = line[index]
        if char == "\\" and index + 1 < len(line):
            current.append(line[index + 1])
            in_token = True
            index += 2
            continue
        if quote:
            if char == quote:
                quote = None
            else:
                current.append(char)
        elif char in "\"'":
            quote = char
            in_token = True
        elif char == "#":
            break
        elif char.isspace():
            if in_token:
                tokens.append("".join(current))
                current, in_token = [], False
        else:
            current.append(char)
            in_token = True
        index += 1
    if quote:
        raise VerifyError(f"#SBATCH line {line!r} has an unterminated quote")
    if in_token:
        tokens.append("".join(current))
    return tokens


def scan_word(text: str, pos: int) -> tuple[str, bool, int]:
    """(value, expands, end) of the command-line word at `pos` (see WordReader); raises
    Unterminated for an unclosed quote."""
    run = _SCANNED_RUN.match(text, pos)
    if run is not None and (run.end() == len(text) or text[run.end()] in _STOPS):
        return run.group(), not _NEEDS_SHELL.isdisjoint(run.group()), run.end()
    reader = WordReader(text, pos, scanning=True)
    reader.read()
    return (
        "".join(part.value for part in reader.parts if isinstance(part, Lit)),
        reader.expands,
        reader.pos,
    )
