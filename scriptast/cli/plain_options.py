"""How click reads an option's value from a command line's words, for the parsers that read a
plain line without typer: after `=`, else the next word, which is no option."""

from __future__ import annotations

from collections.abc import Iterator


def option_value(equals: str, value: str, words: Iterator[str]) -> str | None:
    """The value of the option just read (`equals`, `value`: what followed its name, as
    str.partition("=") split it), taking the next of `words` when there was no `=`; None when
    there is none, or the next word is an option (typer then says what is wrong)."""
    if equals:
        return value
    following = next(words, None)
    if following is None or following.startswith("-"):
        return None
    return following


def is_count(text: str) -> bool:
    """ASCII digits only: what int() reads as click does (`²` and other Unicode digits pass
    str.isdigit but not int(), and are left to typer)."""
    return text.isascii() and text.isdigit()
