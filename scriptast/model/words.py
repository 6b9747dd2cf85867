"""Shell words: literals, parameter expansions, concatenations, and the raw-shell escape hatch.

A word is one argument as bash sees it after quote removal. `Word` is the tagged union of
`Lit`, `Param`, `Concat` and `RawShell`; `WordPart` is what a `Concat` may hold.
"""

from __future__ import annotations

import re
from typing import Literal

from scriptast.errors import ModelError
from scriptast.model.node import IDENTIFIER, Node

SPECIAL_PARAMETERS = frozenset({"?", "#", "@", "*", "$", "!", "-", "0"})
_DEFAULT_SAFE = re.compile(r"[A-Za-z0-9_@%+=:,./-]*\Z")


class Lit(Node, frozen=True, kw_only=True, tag="lit"):
    """A literal string, stored unquoted; the emitter quotes it."""

    value: str


class Param(Node, frozen=True, kw_only=True, tag="param"):
    """A parameter expansion, always emitted inside double quotes.

    forms: `plain` is `"${NAME}"`, `default` is `"${NAME:-default}"`, `prefix_names` is
    `"${!NAME@}"` (the names of all variables that start with NAME, one word each).
    """

    name: str
    form: Literal["plain", "default", "prefix_names"] = "plain"
    default: str = ""

    def __post_init__(self) -> None:
        special = self.name in SPECIAL_PARAMETERS or self.name.isdigit()
        if not special and not IDENTIFIER.match(self.name):
            raise ModelError(
                f"parameter name {self.name!r} is not a shell identifier", field="name"
            )
        if special and self.form != "plain":
            raise ModelError(
                f"special parameter ${self.name} only has the plain form", field="form"
            )
        if self.form != "default" and self.default:
            raise ModelError(
                f"parameter {self.name}: a default needs form='default'", field="default"
            )
        if self.form == "default" and not _DEFAULT_SAFE.match(self.default):
            raise ModelError(
                f"parameter {self.name}: default {self.default!r} may only hold "
                "[A-Za-z0-9_@%+=:,./-]",
                field="default",
            )


class RawShell(Node, frozen=True, kw_only=True, tag="raw_shell"):
    """UNCHECKED shell text, emitted verbatim. The escape hatch: grep for it in review."""

    text: str

    def __post_init__(self) -> None:
        if not self.text:
            raise ModelError("RawShell text must not be empty", field="text")


WordPart = Lit | Param | RawShell


class Concat(Node, frozen=True, kw_only=True, tag="concat"):
    """Parts joined into one word with no space between them: `--out="${HOME}"/x`."""

    parts: tuple[WordPart, ...]

    def __post_init__(self) -> None:
        if not self.parts:
            raise ModelError("Concat needs at least one part", field="parts")


Word = Lit | Param | Concat | RawShell
"""One shell word: `Lit` | `Param` | `Concat` | `RawShell`."""

WordLike = Word | str


def as_word(value: WordLike) -> Word:
    """Turn a plain string into a `Lit`; words pass through."""
    return Lit(value=value) if isinstance(value, str) else value


def word_parts(word: Word) -> tuple[WordPart, ...]:
    """The parts of a word, a single part for anything but a `Concat`."""
    return word.parts if isinstance(word, Concat) else (word,)


def concat(*pieces: WordLike) -> Word:
    """Join pieces into one word; strings become literals, adjacent literals merge.

    >>> concat("--output=", Param(name="HOME"), "/x")  # doctest: +NORMALIZE_WHITESPACE
    Concat(parts=(Lit(value='--output='), Param(name='HOME', form='plain', default=''),
                  Lit(value='/x')))
    """
    parts: list[WordPart] = []
    for piece in pieces:
        for part in word_parts(as_word(piece)):
            if isinstance(part, Lit) and parts and isinstance(parts[-1], Lit):
                parts[-1] = Lit(value=parts[-1].value + part.value)
            else:
                parts.append(part)
    if len(parts) == 1:
        return parts[0]
    return Concat(parts=tuple(parts))


def literal_text(word: Word) -> str | None:
    """The value of a word made only of literals, else None."""
    parts = word_parts(word)
    if all(isinstance(part, Lit) for part in parts):
        return "".join(part.value for part in parts if isinstance(part, Lit))
    return None
