"""A command for the user's interactive shell: one quoter per shell (POSIX sh/bash/zsh, fish,
PowerShell), each with its own word quoting and line continuation.

Used to print the docker command on a terminal; the files scriptast writes are always bash.
"""

from __future__ import annotations

import re

from scriptast.emitters.quote import bash_word
from scriptast.errors import QuoteError

_SAFE = re.compile(r"[A-Za-z0-9_@%+=:,./-]+\Z")


class ShellQuoter:
    """POSIX shells (sh, bash, zsh, ksh): `'...'` with `'\\''` for a quote."""

    name = "bash"
    continuation = " \\"

    def word(self, value: str) -> str:
        return bash_word(value)

    def command(self, lines: list[list[str]]) -> str:
        """Words grouped into lines, joined with the shell's line continuation."""
        rendered = [" ".join(self.word(w) for w in line) for line in lines]
        return (self.continuation + "\n    ").join(rendered) + "\n"


class FishQuoter(ShellQuoter):
    """fish: inside single quotes only `\\` and `'` are special, each escaped with `\\`."""

    name = "fish"

    def word(self, value: str) -> str:
        _no_nul(value, "a fish word")
        if value and _SAFE.match(value):
            return value
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


class PwshQuoter(ShellQuoter):
    """PowerShell: single-quoted verbatim strings with `''` for a quote; backtick continuation.

    PowerShell also reads the typographic quotes U+2018..U+201B as single quotes, so those are
    doubled too. Native commands get the words as given on PowerShell 7.3+ (the default
    `$PSNativeCommandArgumentPassing = 'Standard'`)."""

    name = "pwsh"
    continuation = " `"
    _QUOTES = "'\u2018\u2019\u201a\u201b"

    _BARE = re.compile(r"[A-Za-z0-9_+=:./-]+\Z")  # no `,` (array operator) nor `@` (splat)

    def word(self, value: str) -> str:
        _no_nul(value, "a PowerShell word")
        if value and self._BARE.match(value) and value != "--%":
            return value
        return "'" + "".join(c + c if c in self._QUOTES else c for c in value) + "'"


def _no_nul(value: str, context: str) -> None:
    if "\0" in value:
        raise QuoteError(value, context, "a NUL byte cannot be passed", value.index("\0"))


QUOTERS: dict[str, type[ShellQuoter]] = {
    "bash": ShellQuoter,
    "sh": ShellQuoter,
    "zsh": ShellQuoter,
    "ksh": ShellQuoter,
    "dash": ShellQuoter,
    "fish": FishQuoter,
    "pwsh": PwshQuoter,
    "powershell": PwshQuoter,
}


def quoter_for(shell: str | None) -> ShellQuoter:
    """The quoter of a shell name; POSIX for unknown or undetected shells."""
    return QUOTERS.get((shell or "").lower(), ShellQuoter)()


def detect_shell() -> str | None:
    """The user's shell, by shellingham (None when it cannot tell)."""
    try:
        import shellingham

        name, _ = shellingham.detect_shell()
    except Exception:
        return None
    return str(name)
