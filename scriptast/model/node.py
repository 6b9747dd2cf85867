"""The base of every model node: a frozen, tagged msgspec Struct, and the checks nodes share."""

from __future__ import annotations

import re

import msgspec

from scriptast.errors import ModelError

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
RESERVED_WORDS = frozenset(
    {
        "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until",
        "do", "done", "in", "function", "time", "coproc", "{", "}", "!", "[[", "]]",
    }
)  # fmt: skip
"""Words bash reads as its own syntax when unquoted in command position."""


class Node(msgspec.Struct, frozen=True, kw_only=True, tag_field="kind"):
    """Base of all model nodes. Subclasses repeat `kw_only=True` (msgspec does not inherit it)."""


def check_identifier(name: str, what: str) -> None:
    """Raise ModelError unless `name` is a shell identifier."""
    if not IDENTIFIER.match(name):
        raise ModelError(
            f"{what} {name!r} is not a shell identifier ([A-Za-z_][A-Za-z0-9_]*)", field=what
        )


def check_single_line(text: str, what: str) -> None:
    """Raise ModelError if `text` holds a newline, carriage return or NUL."""
    for bad in ("\n", "\r", "\0"):
        if bad in text:
            raise ModelError(f"{what} {text!r} must be one line without {bad!r}", field=what)
