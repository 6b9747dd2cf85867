"""An srun command as a person writes it in a script, read statically: options written out are
checked as parse_srun checks them (short ones too), and what only the running script knows (an
array such as `"${srunArgs[@]}"`, a count such as `--ntasks=$N`) is named as not checked."""

from __future__ import annotations

import re

import msgspec

from scriptast.errors import ScriptastError, VerifyError
from scriptast.model.slurm import SrunStep
from scriptast.model.slurm_options import (
    INT_OPTIONS,
    SRUN_OPTIONS_ANY,
    SRUN_SHORT_FLAGS,
    SRUN_SHORT_WITH_VALUE,
)
from scriptast.model.words import Lit
from scriptast.readers.readback import literal_value, read_word
from scriptast.readers.srun_argv import VALUE_FREE, parse_srun


class SrunReading(msgspec.Struct, frozen=True):
    """What could be read of one srun command: the step (None when its options are wrong:
    `error` says why) and what only the running script knows, as written."""

    step: SrunStep | None
    not_checked: tuple[str, ...] = ()
    error: str | None = None
    payload: str | None = None
    """The text of `bash -c TEXT` when srun runs that with a literal TEXT."""


def _value(raw: str) -> str | None:
    """The word's text after quote removal, or None when it expands (a variable, an array,
    command substitution): then only the running script knows it."""
    try:
        parts = read_word(raw)
    except ScriptastError:
        return None
    if any(not isinstance(part, Lit) for part in parts):
        return None
    return literal_value(parts)


def read_srun_words(raw_words: tuple[str, ...]) -> SrunReading:
    """Read `srun ...` from its words as written (quotes kept)."""
    argv = ["srun"]
    not_checked: list[str] = []
    index = 1
    try:
        while index < len(raw_words):
            raw = raw_words[index]
            if _bare_expansion(raw):
                if not _options_may_follow(raw_words, index):
                    break
                not_checked.append(raw)
                index += 1
                continue
            text = _value(raw)
            if text is None:
                written = raw.lstrip("\"'")
                if not written.startswith("-"):
                    break  # the command, with a variable in it
                _check_name(written)
                not_checked.append(raw)
                index += 1
                continue
            if not text.startswith("-"):
                break
            index += 1
            name, value, takes_next = _option(text, raw_words, index)
            if takes_next:
                raw = f"{raw} {raw_words[index]}"
                value = _value(raw_words[index])
                index += 1
                if value is None:
                    not_checked.append(raw)
                    continue
            if name is None:
                continue
            if value is None:
                argv.append(f"--{name}")
                continue
            if name in INT_OPTIONS and value.startswith("-"):
                raise VerifyError(f"srun {raw}: a negative count")
            argv.append(f"--{name}={value}")
        command = raw_words[index:]
        if not command:
            raise VerifyError("srun has no command to run")
        argv += [_value(word) or word for word in command]
        step = parse_srun(argv, partial=bool(not_checked))
    except VerifyError as error:
        return SrunReading(None, tuple(not_checked), str(error))
    payload = None
    if len(command) >= 3 and [_value(word) for word in command[:2]] == ["bash", "-c"]:
        payload = _value(command[2])
        if payload is None:
            not_checked.append(f"bash -c {command[2]}")
    return SrunReading(step, tuple(not_checked), None, payload)


def _bare_expansion(raw: str) -> bool:
    """Whether the word starts with an expansion (`$ARGS`, `"${args[@]}"`, which may be
    options or the command), unlike `--ntasks=$N`, an option the script fills in."""
    return raw.lstrip("\"'").startswith(("$", "`"))


def _check_name(written: str) -> None:
    """Raise VerifyError unless the option word (its value aside) names an srun option."""
    if written.startswith("--"):
        name = written[2:].split("=", 1)[0]
        if name not in SRUN_OPTIONS_ANY:
            raise VerifyError(f"--{name} is not an srun or pyxis option")
    elif written[:2] not in SRUN_SHORT_WITH_VALUE and written[:2] not in SRUN_SHORT_FLAGS:
        raise VerifyError(f"srun has no option {written[:2]}")


def _options_may_follow(raw_words: tuple[str, ...], index: int) -> bool:
    """Whether the expansion at `index` stands for options rather than the command: an array
    (`"${srunArgs[@]}"`, how scripts gather srun's options) with words after it, or one
    followed by an option or another expansion (the last expansion is the command)."""
    if index + 1 >= len(raw_words):
        return False
    if re.search(r"\[[@*]\]\}", raw_words[index]):
        return True
    following = raw_words[index + 1]
    return _bare_expansion(following) or following.lstrip("\"'").startswith("-")


def _option(
    text: str, raw_words: tuple[str, ...], index: int
) -> tuple[str | None, str | None, bool]:
    """(long name, value written onto the option, whether the next word is its value) of the
    option word `text`; the name is None for a one-letter flag, which only has to exist.
    Raises VerifyError for an option srun does not have."""
    _check_name(text)
    if text.startswith("--"):
        name, equals, inline = text[2:].partition("=")
        if equals:
            return name, inline, False
        if name in VALUE_FREE or name == "exclusive":
            return name, None, False
        if index >= len(raw_words):
            raise VerifyError(f"srun --{name} needs a value")
        return name, None, True
    letter, attached = text[:2], text[2:]
    if letter == "-l":
        return "label", None, False
    if letter in SRUN_SHORT_FLAGS:
        return None, None, False
    if attached:
        return SRUN_SHORT_WITH_VALUE[letter], attached, False
    if index >= len(raw_words):
        raise VerifyError(f"srun {letter} needs a value")
    return SRUN_SHORT_WITH_VALUE[letter], None, True
