"""The simple commands of any bash script, found without bashlex (which cannot read arrays,
arithmetic, `[[ ]]`, `case` or extglob): a scanner that knows quoting, substitutions,
here-documents, comments and control operators well enough to give each command's words and the
line it starts on. It does not judge syntax: bashlex or real `bash -n` does that."""

from __future__ import annotations

import bisect
import re

import msgspec


class HereDoc(msgspec.Struct, frozen=True):
    """A here-document: its body's first line (1-based), its text, whether its delimiter was
    quoted (then bash expands nothing in it)."""

    first_line: int
    text: str
    quoted: bool


class ScannedCommand(msgspec.Struct, frozen=True):
    """One simple command: the line it starts on (1-based) and its words as written (quotes
    kept), without its redirections and their targets; the file its output goes to (`> FILE`,
    as written), its here-documents, and the lines its words run over."""

    line: int
    words: tuple[str, ...]
    writes: str | None = None
    heredocs: tuple[HereDoc, ...] = ()
    inner_lines: tuple[int, ...] = ()
    """Lines inside a word that spans lines (a quoted string, `$(...)`), past its first."""


_OPERATORS = (";;&", ";;", ";&", "&&", "||", "|&", ";", "|", "&")
_REDIRECT = re.compile(r"\d*(?:&>>|&>|<<<|<<-|<<|<>|<&|>&|>>|>\||<|>)")
_ARRAY_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*(?:\[[^\]]*\])?\+?=\Z")
_PREFIXES = frozenset({"!", "if", "then", "else", "elif", "do", "while", "until", "{", "time"})
"""Words in front of a command that bash reads as part of the compound around it."""
_WRAPPERS = frozenset({"exec", "command", "nohup", "timeout"})
"""Commands that run the rest of their words as the command."""
_ENV_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*\+?=")


def scan_commands(text: str) -> list[ScannedCommand]:
    """Every simple command of `text` in source order."""
    return _Scanner(text).run()


def commands_named(text: str, name: str) -> list[ScannedCommand]:
    """The commands of `text` that run `name` (after `!`, `if`, `time`, `exec`, `VAR=value`
    and the like), from that word on."""
    return named_in(scan_commands(text), name)


def named_in(commands: list[ScannedCommand], name: str) -> list[ScannedCommand]:
    """The `commands` that run `name`, from that word on (see commands_named)."""
    found = []
    for command in commands:
        words = list(command.words)
        while words and (
            words[0] in _PREFIXES or words[0] in _WRAPPERS or _ENV_ASSIGNMENT.match(words[0])
        ):
            if words.pop(0) == "timeout":
                _drop_timeout_arguments(words)
        if words and words[0] == name:
            found.append(msgspec.structs.replace(command, words=tuple(words)))
    return found


def _drop_timeout_arguments(words: list[str]) -> None:
    """`timeout [-k 60] [-s SIG] [--foreground] DURATION`: what comes before its command."""
    while words and words[0].startswith("-"):
        option = words.pop(0)
        if option in ("-k", "-s", "--kill-after", "--signal") and words:
            words.pop(0)
    if words:
        words.pop(0)


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.words: list[str] = []
        self.start = 0
        self.commands: list[ScannedCommand] = []
        self.heredocs: list[tuple[str, bool, bool, int]] = []
        self.writes: str | None = None
        self.inner: list[int] = []
        self.bodies: dict[int, list[HereDoc]] = {}
        self.newlines = [index for index, char in enumerate(text) if char == "\n"]

    def run(self) -> list[ScannedCommand]:
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char in " \t":
                self.pos += 1
            elif char == "\\" and text.startswith("\n", self.pos + 1):
                self.pos += 2
            elif char == "\n":
                self.end_command()
                self.pos += 1
                self.skip_heredoc_bodies()
            elif char == "#":
                newline = text.find("\n", self.pos)
                self.pos = len(text) if newline < 0 else newline
            elif char in "<>" and text.startswith("(", self.pos + 1):
                self.word()
            elif (redirect := _REDIRECT.match(text, self.pos)) is not None and (
                redirect.group()[0] in "<>&" or self.at_word_start()
            ):
                self.redirect(redirect.group())
            elif (operator := _operator_at(text, self.pos)) is not None:
                self.end_command()
                self.pos += len(operator)
            elif char in "()":
                self.end_command()
                self.pos += 1
            else:
                self.word()
        self.end_command()
        return [
            msgspec.structs.replace(command, heredocs=tuple(self.bodies[index]))
            if index in self.bodies
            else command
            for index, command in enumerate(self.commands)
        ]

    def at_word_start(self) -> bool:
        return self.pos == 0 or self.text[self.pos - 1] in " \t\n;&|()"

    def end_command(self) -> None:
        if self.words:
            line = bisect.bisect_left(self.newlines, self.start) + 1
            self.commands.append(
                ScannedCommand(
                    line=line,
                    words=tuple(self.words),
                    writes=self.writes,
                    inner_lines=tuple(self.inner),
                )
            )
        self.words = []
        self.writes = None
        self.inner = []

    def redirect(self, symbol: str) -> None:
        self.pos += len(symbol)
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1
        start = self.pos
        self.skip_word()
        target = self.text[start : self.pos]
        operator = symbol.lstrip("0123456789")
        if operator in ("<<", "<<-") and target:
            delimiter = re.sub(r"""\\(.)|['"]""", r"\1", target)
            quoted = delimiter != target
            self.heredocs.append((delimiter, symbol.endswith("-"), quoted, len(self.commands)))
        elif operator in (">", ">>", ">|", "&>", "&>>") and target:
            self.writes = target

    def word(self) -> None:
        if not self.words:
            self.start = self.pos
        start = self.pos
        self.skip_word()
        if self.pos == start:  # a character no rule takes: step over it
            self.pos += 1
        word = self.text[start : self.pos]
        self.words.append(word)
        if "\n" in word:
            first = bisect.bisect_left(self.newlines, start) + 1
            self.inner.extend(range(first + 1, first + word.count("\n") + 1))

    def skip_word(self) -> None:
        text = self.text
        start = self.pos
        while self.pos < len(text):
            char = text[self.pos]
            if char == "(" and self.opens_word_paren(start):
                self.pos = _after_parens(text, self.pos)
            elif char in " \t\n;&|()":
                return
            elif char in "<>":
                if self.pos == start and text.startswith("(", self.pos + 1):
                    self.pos = _after_parens(text, self.pos + 1)
                else:
                    return
            elif char == "\\":
                self.pos += 2
            elif char == "'":
                self.pos = _after_single(text, self.pos)
            elif char == '"':
                self.pos = _after_double(text, self.pos)
            elif char == "$":
                self.pos = _after_dollar(text, self.pos)
            elif char == "`":
                self.pos = _after_backquote(text, self.pos)
            else:
                self.pos += 1

    def opens_word_paren(self, start: int) -> bool:
        """A `(` that belongs to the word: an array after `NAME=` or `NAME+=`, or an extglob
        pattern after `?*+@!`."""
        before = self.text[start : self.pos]
        return bool(before) and (
            _ARRAY_ASSIGNMENT.match(before) is not None or before[-1] in "?*+@!"
        )

    def skip_heredoc_bodies(self) -> None:
        text = self.text
        for delimiter, strip_tabs, quoted, owner in self.heredocs:
            first_line = bisect.bisect_left(self.newlines, self.pos) + 1
            lines = []
            while self.pos < len(text):
                end = text.find("\n", self.pos)
                end = len(text) if end < 0 else end
                line = text[self.pos : end]
                self.pos = end + 1
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    break
                lines.append(line.lstrip("\t") if strip_tabs else line)
            body = HereDoc(
                first_line=first_line, text="".join(f"{x}\n" for x in lines), quoted=quoted
            )
            self.bodies.setdefault(owner, []).append(body)
        self.heredocs = []


def _operator_at(text: str, pos: int) -> str | None:
    return next((op for op in _OPERATORS if text.startswith(op, pos)), None)


def _after_single(text: str, pos: int) -> int:
    end = text.find("'", pos + 1)
    return len(text) if end < 0 else end + 1


def _after_double(text: str, pos: int) -> int:
    pos += 1
    while pos < len(text):
        char = text[pos]
        if char == "\\":
            pos += 2
        elif char == '"':
            return pos + 1
        elif char == "$":
            pos = _after_dollar(text, pos)
        elif char == "`":
            pos = _after_backquote(text, pos)
        else:
            pos += 1
    return pos


def _after_backquote(text: str, pos: int) -> int:
    pos += 1
    while pos < len(text) and text[pos] != "`":
        pos += 2 if text[pos] == "\\" else 1
    return pos + 1


def _after_dollar(text: str, pos: int) -> int:
    following = text[pos + 1 : pos + 2]
    if following == "(":
        return _after_parens(text, pos + 1)
    if following == "{":
        return _after_braces(text, pos + 1)
    if following == "'":
        pos += 2
        while pos < len(text) and text[pos] != "'":
            pos += 2 if text[pos] == "\\" else 1
        return pos + 1
    if following == '"':
        return _after_double(text, pos + 1)
    return pos + 1


def _after_parens(text: str, pos: int) -> int:
    """The position after the `)` that closes the `(` at `pos`."""
    return _after_group(text, pos, "(", ")")


def _after_braces(text: str, pos: int) -> int:
    """The position after the `}` that closes the `{` at `pos`."""
    return _after_group(text, pos, "{", "}")


def _after_group(text: str, pos: int, opening: str, closing: str) -> int:
    """The position after the `closing` that matches the `opening` at `pos`: nesting, quotes,
    substitutions known; inside parentheses, a comment too (an array, `$(...)`)."""
    depth = 0
    while pos < len(text):
        char = text[pos]
        if char == opening:
            depth += 1
            pos += 1
        elif char == closing:
            depth -= 1
            pos += 1
            if depth == 0:
                return pos
        elif char == "\\":
            pos += 2
        elif char == "'":
            pos = _after_single(text, pos)
        elif char == '"':
            pos = _after_double(text, pos)
        elif char == "`":
            pos = _after_backquote(text, pos)
        elif char == "$":
            pos = _after_dollar(text, pos)
        elif opening == "(" and char == "#" and text[pos - 1] in " \t\n(":
            # its quotes do not count: `# don't` in an array is a comment
            newline = text.find("\n", pos)
            pos = len(text) if newline < 0 else newline
        else:
            pos += 1
    return pos
