"""Shell-aware reading of user command strings: words, top-level operators, and whether a
command is plain enough to become typed argv (only literal words and simple redirections).

"Plain" is decided conservatively, so that typed argv runs exactly as `bash -c CMD` would: a
word with anything bash would expand or treat specially unquoted (`$`, backquotes, `~`, glob
and brace characters, a backslash-newline or a trailing backslash), a reserved word in command
position, a newline, a redirection with a descriptor above 9, `>&-...` or an all-digit
descriptor that is not canonical makes the command pass through as shell text instead."""

from __future__ import annotations

import functools

import msgspec

from scriptast.errors import InputError
from scriptast.model.node import RESERVED_WORDS
from scriptast.readers.roundtrip.readback import Unterminated, scan_word

_OPERATORS = ("&&", "||", ";;", ";", "|", "&", "\n")
_BLANKS = " \t"
"""What separates words: bash's parser splits on space and tab (and ends a command at a
newline), never on other (Unicode) white space."""
_REDIRECTS = (">>", ">&", "<", ">")
_OPERATOR_STARTS = frozenset("&|;\n()")
_DIGITS = frozenset("0123456789")


class Token(msgspec.Struct, frozen=True):
    """A word (its value after quote removal) or an operator/redirection symbol."""

    value: str
    kind: str  # "word", "op" or "redirect"
    expands: bool = False  # bash may expand or specially read part of it: not a plain word
    start: int = 0
    end: int = 0
    raw: str = ""  # the word as written, quotes included


def tokenize(text: str, what: str = "command") -> list[Token]:
    """Split `text` as bash would into words and operators (no expansion is performed).
    A job reads its command several times (parallelism, the bench split, the model name, the
    typed argv): the last texts' tokens are remembered (tokens are frozen)."""
    return list(_tokens(text, what))


@functools.lru_cache(maxsize=256)
def _tokens(text: str, what: str) -> tuple[Token, ...]:
    tokens: list[Token] = []
    index = 0
    length = len(text)
    while index < length:
        char = text[index]
        if char in _BLANKS:
            index += 1
            continue
        if char == "#":
            newline = text.find("\n", index)
            index = length if newline < 0 else newline
            continue
        digits = _digits_at(text, index) if char in _DIGITS else 0
        if digits and _redirect_at(text, index + digits) and _word_boundary(text, index):
            symbol = _redirect_at(text, index + digits)
            assert symbol is not None
            end = index + digits + len(symbol)
            # bash opens descriptors above 9 too; the model's Redirect holds 0..9
            tokens.append(Token(text[index:end], "redirect", digits > 1, index, end))
            index = end
            continue
        symbol = _redirect_at(text, index) if char in "<>" else None
        if symbol:
            tokens.append(Token(symbol, "redirect", start=index, end=index + len(symbol)))
            index += len(symbol)
            continue
        if char in _OPERATOR_STARTS:
            operator = next((op for op in _OPERATORS if text.startswith(op, index)), char)
            tokens.append(Token(operator, "op", start=index, end=index + len(operator)))
            index += len(operator)
            continue
        start = index
        try:
            value, expands, index = scan_word(text, index)
        except Unterminated as open_quote:
            message = f"{what} has an unterminated {open_quote.quote} quote: {text!r}"
            raise InputError(message) from None
        tokens.append(Token(value, "word", expands, start, index, text[start:index]))
    return tuple(tokens)


def _word_boundary(text: str, index: int) -> bool:
    return index == 0 or text[index - 1] in " \t\n;&|()<>"


def _digits_at(text: str, index: int) -> int:
    end = index
    while end < len(text) and text[end] in _DIGITS:
        end += 1
    return end - index


def _redirect_at(text: str, index: int) -> str | None:
    return next((r for r in _REDIRECTS if text.startswith(r, index)), None)


class SimpleCommand(msgspec.Struct, frozen=True):
    """A command that can be typed: literal argv, and redirections as (symbol, target)."""

    argv: tuple[str, ...]
    redirects: tuple[tuple[str, str], ...] = ()


def as_simple(tokens: list[Token]) -> SimpleCommand | None:
    """The typed form of one command's tokens, or None if it needs the shell to run it."""
    argv: list[str] = []
    redirects: list[tuple[str, str]] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token.kind == "op" or token.expands:
            return None
        if token.kind == "redirect":
            target = tokens[index + 1] if index + 1 < len(tokens) else None
            if target is None or target.kind != "word" or target.expands:
                return None
            if token.value.endswith("&") and not _plain_dup_target(target):
                return None
            redirects.append((token.value, target.value))
            index += 2
            continue
        if not argv and token.raw in RESERVED_WORDS:
            return None
        argv.append(token.value)
        index += 1
    if not argv or ("=" in argv[0] and argv[0].split("=")[0].isidentifier()):
        return None
    return SimpleCommand(tuple(argv), tuple(redirects))


def _plain_dup_target(target: Token) -> bool:
    """A `>&` target read the same way typed: not `-...` (bash reads `>&-x` as `>&-` then
    `x`), and digits only in their canonical spelling (bash reads `>&01` as descriptor 1)."""
    value = target.value
    if value.startswith("-"):
        return value == "-" and target.raw == "-"
    if value.isdecimal():
        return value == str(int(value)) and target.raw == value
    return True


def split_top_level(text: str, operator: str, what: str) -> list[str]:
    """Split `text` at each top-level `operator` (one inside quotes does not count)."""
    pieces: list[str] = []
    start = 0
    for token in tokenize(text, what):
        if token.kind == "op" and token.value == operator:
            pieces.append(text[start : token.start].strip(_BLANKS + "\n"))
            start = token.end
    pieces.append(text[start:].strip(_BLANKS + "\n"))
    return pieces


def words(text: str, what: str = "command") -> list[str]:
    """The word values of a command string, operators dropped."""
    return [t.value for t in tokenize(text, what) if t.kind == "word"]


def whole_flag(argv: list[str] | tuple[str, ...], *names: str) -> int | None:
    """The LAST `--name N` as a whole number (None: absent, or not a plain count)."""
    value = flag_value(argv, *names)
    return int(value) if value is not None and value.isdigit() else None


def flag_value(argv: list[str] | tuple[str, ...], *names: str) -> str | None:
    """The value of the LAST `--name N` or `--name=N` among `argv`."""
    found: str | None = None
    for index, word in enumerate(argv):
        for name in names:
            if word == name and index + 1 < len(argv):
                found = argv[index + 1]
            elif word.startswith(name + "="):
                found = word[len(name) + 1 :]
    return found
