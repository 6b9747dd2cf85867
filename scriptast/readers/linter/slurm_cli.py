"""The options sbatch and srun take, as Slurm's slurm_opt.c and pyxis' SPANK table define them
(slurm_cli_options.json) plus a cluster's declared plugin options, and getopt_long's reading of
one option word: an exact name, an unambiguous prefix of one, an old spelling, a letter."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import msgspec

from scriptast.contract.slurm_env import PluginOption

TABLE = Path(__file__).with_name("slurm_cli_options.json")


class CliOption(msgspec.Struct, frozen=True):
    """One long option of a command: its name, the option it is (`canonical`: an old spelling's
    new one), its argument (`no`, `required`, `optional`), its letter, the release that added it
    (`since`; `22.05+` when Slurm's NEWS does not name it) or the series that dropped it
    (`until`), and the SPANK plugin that adds it (None: Slurm's own)."""

    name: str
    canonical: str
    arg: str
    short: str | None = None
    since: str | None = None
    until: str | None = None
    plugin: str | None = None


class Ambiguous(msgspec.Struct, frozen=True):
    """A prefix of two or more options that differ (their names): getopt_long refuses it."""

    matches: tuple[str, ...]


class Table(msgspec.Struct, frozen=True):
    """A command's long options in table order, and its letters."""

    command: str
    longs: tuple[CliOption, ...]
    shorts: dict[str, CliOption]


@functools.cache
def _data() -> dict[str, object]:
    loaded: dict[str, object] = json.loads(TABLE.read_text(encoding="utf-8"))
    return loaded


@functools.cache
def table(command: str, plugins: tuple[PluginOption, ...] | None = None) -> Table:
    """`command`'s options (sbatch or srun): Slurm's, pyxis', and `plugins` (a cluster's own);
    with `plugins` None, pyxis' are taken as the cluster's (most GPU clusters run it)."""
    data = _data()
    longs: list[CliOption] = []
    for entry in data["options"]:  # type: ignore[attr-defined]
        if command not in entry["on"]:
            continue
        longs.append(
            CliOption(
                name=entry["name"],
                canonical=entry.get("alias_of", entry["name"]),
                arg=entry["arg"],
                short=entry.get("short"),
                since=entry.get("since"),
                until=entry.get("until"),
            )
        )
    spank = [PluginOption(p["name"], p["arg"]) for p in data["pyxis"]]  # type: ignore[attr-defined]
    source = "pyxis"
    if plugins is not None:
        spank, source = list(plugins), "site"
    known = {option.name for option in longs}
    for option in spank:
        if option.name not in known:
            longs.append(CliOption(option.name, option.name, option.arg, plugin=source))
    shorts = {o.short: o for o in longs if o.short}
    return Table(command, tuple(longs), shorts)


def long_option(options: Table, spelled: str) -> CliOption | Ambiguous | None:
    """The option `--spelled` is to getopt_long: the exact name, else the one option it is a
    prefix of (or several that are one option: `--cpu` is `--cpu-bind`, whose old spelling
    `--cpu_bind` also matches); Ambiguous when it prefixes different ones; None when nothing."""
    for option in options.longs:
        if option.name == spelled:
            return option
    found = [option for option in options.longs if option.name.startswith(spelled)]
    if not found:
        return None
    first = found[0]
    if all((o.canonical, o.arg) == (first.canonical, first.arg) for o in found):
        return first
    return Ambiguous(tuple(o.name for o in found))


def option_named(command: str, name: str) -> CliOption | None:
    """Slurm's own option `--name` of `command` (its canonical spelling), or None."""
    return next((o for o in table(command).longs if o.name == name and not o.plugin), None)
