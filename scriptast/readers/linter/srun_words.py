"""An srun command as a person writes it in a script, read statically: its options as srun's
getopt_long reads them (Slurm's table, pyxis' and a cluster's plugins), pyxis' values as pyxis
parses them, the program it runs (whose own options are its own), and what only the running
script knows (`"${srunArgs[@]}"`, `--ntasks=$N`), named as not checked."""

from __future__ import annotations

import msgspec

from scriptast.contract.slurm_env import PluginOption
from scriptast.errors import ScriptastError
from scriptast.model.words import Lit
from scriptast.readers.linter.option_words import OptionWord, read_options
from scriptast.readers.linter.slurm_cli import table
from scriptast.readers.roundtrip.readback import literal_value, read_word


class SrunUse(msgspec.Struct, frozen=True):
    """One srun as written: its options by their own names, with their values (None: none, or
    known only when it runs), and the words of the program it runs."""

    options: tuple[tuple[str, str | None], ...]
    command: tuple[str, ...]

    def value(self, name: str) -> str | None:
        """The last value given to `--name` (srun keeps the last)."""
        found = None
        for option, value in self.options:
            if option == name:
                found = value
        return found

    @property
    def gres(self) -> str | None:
        return self.value("gres")

    @property
    def mpi(self) -> str | None:
        return self.value("mpi")


class SrunReading(msgspec.Struct, frozen=True):
    """What could be read of one srun command: the use (None when srun or pyxis refuses its
    options: `error` says why), notes (an option a site plugin may add), what only the running
    script knows, and the text of `bash -c TEXT` when srun runs that with a literal TEXT."""

    step: SrunUse | None
    not_checked: tuple[str, ...] = ()
    error: str | None = None
    payload: str | None = None
    notes: tuple[str, ...] = ()


def word_text(raw: str) -> str | None:
    """The word's text after quote removal, or None when it expands (a variable, an array,
    command substitution): then only the running script knows it."""
    try:
        parts = read_word(raw)
    except ScriptastError:
        return None
    if any(not isinstance(part, Lit) for part in parts):
        return None
    return literal_value(parts)


def read_srun_words(
    raw_words: tuple[str, ...],
    *,
    plugins: tuple[PluginOption, ...] | None = None,
    dollar_expanded: bool = False,
) -> SrunReading:
    """Read `srun ...` from its words as written (quotes kept). `plugins`: the cluster's own
    SPANK options (None: pyxis', and an unknown option is a note)."""
    words = [OptionWord(raw, word_text(raw)) for raw in raw_words[1:]]
    reading = read_options(
        table("srun", plugins),
        words,
        stop_at_operand=True,
        plugins_declared=plugins is not None,
        dollar_expanded=dollar_expanded,
    )
    not_checked = tuple(reading.not_checked)
    notes = tuple(reading.notes)
    command = tuple(raw_words[1 + reading.operands_at :])
    error = reading.errors[0] if reading.errors else None
    if error is None and not command:
        error = "srun has no command to run"
    if error is None:
        error = _pyxis_problem(reading.options, partial=bool(not_checked))
    if error is not None:
        return SrunReading(None, not_checked, error, notes=notes)
    texts = [word_text(word) for word in command]
    shown = tuple(raw if text is None else text for text, raw in zip(texts, command, strict=True))
    use = SrunUse(tuple(reading.options), shown)
    payload = None
    if len(command) >= 3 and texts[:2] == ["bash", "-c"]:
        payload = texts[2]
        if payload is None:
            not_checked += (f"bash -c {command[2]}",)
    return SrunReading(use, not_checked, None, payload, notes)


CONTAINER_GIVEN = frozenset({"container-image", "container-name"})
NEEDS_CONTAINER = (
    "container-mounts", "container-workdir", "container-mount-home", "no-container-mount-home",
    "container-remap-root", "no-container-remap-root",
)  # fmt: skip
"""pyxis ignores these (with an error line) when neither an image nor a name is given."""


def _pyxis_problem(options: list[tuple[str, str | None]], *, partial: bool) -> str | None:
    """What pyxis refuses or ignores in `options`: an empty value, a mount entry its parser
    rejects (`SRC[:DST[:FLAGS]]`, neither empty), options of a container that is not asked for.
    `partial`: some options only the running script knows."""
    names = {name for name, _ in options}
    for name, value in options:
        if name.startswith("container-") and value == "":
            return f"--{name} is empty; pyxis refuses it (argument required)"
        if name == "container-mounts" and value is not None:
            for entry in value.split(","):
                source, colon, rest = entry.partition(":")
                target = rest.split(":", 1)[0] if colon else source
                if not source or not target:
                    return (
                        f"--container-mounts entry {entry!r} is not SRC[:DST[:FLAGS]]; pyxis "
                        "refuses it"
                    )
    if not partial and not names & CONTAINER_GIVEN:
        ignored = [f"--{name}" for name in NEEDS_CONTAINER if name in names]
        if ignored:
            return (
                f"{', '.join(ignored)} without --container-image or --container-name: pyxis "
                "ignores it and runs the step outside any container"
            )
    return None
