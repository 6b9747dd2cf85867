"""Parses plain `scriptast emit` command lines without typer; anything else is left to typer.

typer (with click and pydantic) costs more to start than the whole job it would run. This parser
accepts only command lines whose meaning is certain under click's rules (known `--flag value`,
`--flag=value` and switches after `emit` or `emit <workflow>`) and returns None for everything
else (help, completion, unknown or malformed options), which then goes through typer unchanged.
"""

from __future__ import annotations

import re
from typing import Any

from scriptast.cli.emit_flags import (
    ENV_CHECK_FLAGS,
    OUTPUT_FLAGS,
    REQUEST_FLAGS,
    flag,
    negated_flag,
    workflows,
)

_INTEGER = re.compile(r"-?[0-9]+")


def _tables() -> tuple[dict[str, tuple[str, type]], dict[str, tuple[str, bool]]]:
    valued: dict[str, tuple[str, type]] = {}
    switches: dict[str, tuple[str, bool]] = {}
    fields = [(n, k) for n, k, *_ in OUTPUT_FLAGS + REQUEST_FLAGS + ENV_CHECK_FLAGS]
    negatable = {n for n, k, *_ in REQUEST_FLAGS if k is bool}
    for name, kind in fields:
        if kind is bool:
            switches[flag(name)] = (name, True)
            if name in negatable:
                switches[negated_flag(name)] = (name, False)
        else:
            valued[flag(name)] = (name, kind)
    return valued, switches


_VALUED, _SWITCHES = _tables()


def parse_emit(arguments: list[str]) -> tuple[str | None, dict[str, Any]] | None:
    """(workflow, option values) of `scriptast emit <arguments>`, or None to let typer decide."""
    workflow = None
    named = workflows()
    if arguments and arguments[0] in named:
        workflow = named[arguments[0]][0]
        arguments = arguments[1:]
    values: dict[str, Any] = {}
    index = 0
    while index < len(arguments):
        spelling, equals, inline = arguments[index].partition("=")
        index += 1
        if spelling in _SWITCHES and not equals:
            name, state = _SWITCHES[spelling]
            values[name] = state
            continue
        if spelling not in _VALUED or (workflow and spelling == "--workflow-type"):
            return None
        if not equals:
            if index == len(arguments):
                return None
            inline = arguments[index]
            index += 1
        name, kind = _VALUED[spelling]
        if kind is int:
            if not _INTEGER.fullmatch(inline):
                return None
            values[name] = int(inline)
        else:
            values[name] = inline
    return workflow, values
