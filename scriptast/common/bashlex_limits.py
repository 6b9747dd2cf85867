"""What bashlex 0.18 misreads: the writer avoids such text, and the reader knows where it goes
another way."""

from __future__ import annotations

import re

_SIMPLE_BRACED = re.compile(r"\$\{[A-Za-z0-9_#?@*!:/%\[\]-]*\}")


_PROCESS_SUBSTITUTION = re.compile(r"[<>]\(")


def confuses_bashlex(value: str) -> bool:
    """bashlex 0.18 parses `$(`, backquotes and unbalanced `${` even inside single quotes of a
    word that mixes quoting styles (it fails or loops), and `<(`/`>(` inside the single quotes of
    an assignment value, so such text is written another way."""
    if "`" in value or "$(" in value or _PROCESS_SUBSTITUTION.search(value):
        return True
    return "${" in _SIMPLE_BRACED.sub("", value)
