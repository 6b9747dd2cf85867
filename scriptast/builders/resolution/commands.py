"""A command string the user gave, typed as argv when it is plain (literal words, redirections)."""

from __future__ import annotations

from scriptast.plan.steps import UserCommand
from scriptast.readers.shellwords import as_simple, tokenize


def user_command(text: str, what: str) -> UserCommand:
    """`text` as a UserCommand: with argv when plain, else to run through `bash -c`."""
    simple = as_simple(tokenize(text, what))
    if simple is None:
        return UserCommand(text=text)
    return UserCommand(text=text, argv=simple.argv, redirects=simple.redirects)
