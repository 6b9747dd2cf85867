"""`scriptast results list|show|compare` read without typer when the command line's meaning is
certain: known options with their values (as click reads them), the positional arguments each
command takes; anything else (help, an unknown or malformed option, a count below 1) goes to
typer, which answers it. Typer and its imports are most of a query's time at 100,000 runs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scriptast.cli.plain_options import is_count, option_value
from scriptast.cli.results_actions import OPTIONS

Action = Callable[[dict[str, Any]], int]


def parse_results(arguments: list[str]) -> tuple[Action, dict[str, Any]] | None:
    """(the action, the values typer would hand it) for `results ARGUMENTS`; None: typer's."""
    if not arguments or arguments[0] not in OPTIONS:
        return None
    command, table = arguments[0], OPTIONS[arguments[0]]
    values: dict[str, Any] = {}
    positional: list[str] = []
    words = iter(arguments[1:])
    for word in words:
        if not word.startswith("-"):
            positional.append(word)
            continue
        name, equals, value = word.partition("=")
        if name not in table:
            return None
        dest, kind = table[name]
        if kind is bool:
            if equals:
                return None
            values[dest] = True
            continue
        given = option_value(equals, value, words)
        if given is None:
            return None
        value = given
        if kind is int:
            if not is_count(value) or int(value) < 1:
                return None
            values[dest] = int(value)
        elif kind is list:
            values.setdefault(dest, []).append(value)
        else:
            values[dest] = value
    return _with_positional(command, values, positional)


def _with_positional(command: str, values: dict[str, Any], positional: list[str]
                     ) -> tuple[Action, dict[str, Any]] | None:  # fmt: skip
    from scriptast.cli import results_actions as actions

    if command == "show":
        if len(positional) != 1 or not is_count(positional[0]):
            return None
        return actions.show_action, {**values, "run_id": int(positional[0])}
    if command == "compare":
        return actions.compare_action, {**values, "sides": positional}
    return (actions.list_action, values) if not positional else None
