"""typer options for `scriptast emit` from the flag table, with partition and account completion."""

from __future__ import annotations

import inspect

import typer

from scriptast.cli.emit_flags import (
    CLUSTER,
    ENV_CHECK_FLAGS,
    OUTPUT,
    OUTPUT_FLAGS,
    REQUEST_FLAGS,
    flag,
    foreign_options,
    negated_flag,
)


def _slurm_env_names(ctx: typer.Context, key: str) -> list[str]:
    """Names from the slurm_env.json given earlier on the command line (or in --request)."""
    import json

    path = ctx.params.get("slurm_env_file")
    if not path and ctx.params.get("request"):
        try:
            with open(ctx.params["request"], encoding="utf-8") as stream:
                path = json.load(stream).get("slurm_env_file")
        except (OSError, ValueError, AttributeError):
            path = None
    if not path:
        return []
    try:
        with open(path, encoding="utf-8") as stream:
            data = json.load(stream)
    except (OSError, ValueError):
        return []
    if key == "partitions":
        return [str(p.get("name")) for p in data.get("partitions", []) if isinstance(p, dict)]
    return [str(a) for a in data.get(key, [])]


def complete_partition(ctx: typer.Context, incomplete: str) -> list[str]:
    """Partition names from --slurm-env-file."""
    return [n for n in _slurm_env_names(ctx, "partitions") if n.startswith(incomplete)]


def complete_account(ctx: typer.Context, incomplete: str) -> list[str]:
    """Account names from --slurm-env-file."""
    return [n for n in _slurm_env_names(ctx, "accounts") if n.startswith(incomplete)]


_COMPLETERS = {"partition": complete_partition, "account": complete_account}


def other_categories_options(name: str) -> tuple[str, ...]:
    """The request fields only other categories use: `emit <name> --help` hides them."""
    return tuple(foreign_options(name))


def _option(
    name: str, kind: type, help_text: str, panel: str, hidden: bool = False
) -> inspect.Parameter:
    declarations = [f"{flag(name)}/{negated_flag(name)}"] if kind is bool else [flag(name)]
    default = typer.Option(
        None,
        *declarations,
        help=help_text,
        rich_help_panel=panel,
        autocompletion=_COMPLETERS.get(name),
        hidden=hidden,
    )
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=kind | None
    )


def _output_option(name: str, kind: type, help_text: str, hidden: bool) -> inspect.Parameter:
    default = typer.Option(
        False if kind is bool else None,
        flag(name),
        help=help_text,
        rich_help_panel=OUTPUT,
        hidden=hidden,
    )
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=kind | None
    )


def emit_parameters(
    skip: tuple[str, ...] = (),
    hidden: tuple[str, ...] = (),
    helps: dict[str, str] | None = None,
) -> list[inspect.Parameter]:
    """typer parameters for the output switches and every request field not in `skip`; those
    in `hidden` are accepted but left out of --help; `helps` replaces a field's help."""
    found = [_output_option(n, k, h, n in hidden) for n, k, h in OUTPUT_FLAGS]
    found += [
        _option(n, k, (helps or {}).get(n, h), p, hidden=n in hidden)
        for n, k, h, p in REQUEST_FLAGS
        if n not in skip
    ]
    found += [_option(n, k, h, CLUSTER) for n, k, h in ENV_CHECK_FLAGS]
    return found
