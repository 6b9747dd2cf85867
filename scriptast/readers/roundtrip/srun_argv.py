"""Parse an srun argv back into a typed SrunStep, to compare emitted steps with the model."""

from __future__ import annotations

from typing import Any

from scriptast.errors import ModelError, VerifyError
from scriptast.model.slurm import Mount, PyxisContainer, SrunOption, SrunStep, split_mount
from scriptast.model.slurm_options import (
    FLAG_OPTIONS,
    INT_OPTIONS,
    PYXIS_OPTIONS,
    SRUN_OPTIONS_ANY,
    SRUN_SHORT_WITH_VALUE,
)
from scriptast.model.words import Lit

_SHORT: dict[str, tuple[str, bool | None]] = {
    "-l": ("label", None),
    **{letter: (SRUN_SHORT_WITH_VALUE[letter], True) for letter in ("-N", "-n")},
}
"""The one-letter options scriptast writes and reads back (`srun -l`, `-N`, `-n`)."""
_SWITCHES = {
    "container-mount-home": ("mount_home", True),
    "no-container-mount-home": ("mount_home", False),
    "container-remap-root": ("remap_root", True),
    "no-container-remap-root": ("remap_root", False),
    "container-entrypoint": ("entrypoint", True),
    "no-container-entrypoint": ("entrypoint", False),
    "container-writable": ("writable", True),
    "container-readonly": ("writable", False),
}
VALUE_FREE = FLAG_OPTIONS | set(_SWITCHES)


def parse_mounts(text: str) -> tuple[Mount, ...]:
    """`src:dst[:flags],...` as pyxis reads it."""
    mounts = []
    for entry in text.split(","):
        parts = split_mount(entry)
        if parts is None:
            raise VerifyError(f"--container-mounts entry {entry!r} is not SRC:DST[:FLAGS]")
        source, target, flags = parts
        mounts.append(Mount(source=source, target=target, flags=flags))
    return tuple(mounts)


def parse_srun(argv: list[str], *, partial: bool = False) -> SrunStep:
    """The SrunStep an srun argv stands for; its trailing command is kept as literal words.
    `partial`: some options were left out (only the running script knows them), so pyxis
    options without `--container-image` are not wrong."""
    if not argv or argv[0] != "srun":
        raise VerifyError(f"not an srun command: {argv[:1]}")
    fields: dict[str, Any] = {"label": False}
    container: dict[str, Any] = {}
    extra: list[SrunOption] = []
    index = 1
    try:
        while index < len(argv) and argv[index].startswith("-"):
            word = argv[index]
            index += 1
            if word in _SHORT:
                name, takes_value = _SHORT[word]
                if takes_value is not None:
                    if index >= len(argv):
                        raise VerifyError(f"srun {word} needs a value")
                    fields[name] = _count(word, argv[index])
                    index += 1
                else:
                    fields[name] = True
                continue
            if not word.startswith("--"):
                raise VerifyError(f"srun option {word!r} is not one scriptast reads back")
            name, equals, inline = word[2:].partition("=")
            if name not in SRUN_OPTIONS_ANY:
                raise VerifyError(f"--{name} is not an srun or pyxis option")
            value: str | None = inline if equals else None
            if value is None and name not in VALUE_FREE and name != "exclusive":
                if index >= len(argv):
                    raise VerifyError(f"srun --{name} needs a value")
                value = argv[index]
                index += 1
            _apply(name, value, fields, container, extra)
        if index >= len(argv):
            raise VerifyError("srun has no command to run")
        if "image" not in container and container and not partial:
            raise VerifyError("pyxis options given without --container-image")
        if container and "image" in container:
            fields["container"] = PyxisContainer(**container)
        return SrunStep(
            command=tuple(Lit(value=w) for w in argv[index:]), extra=tuple(extra), **fields
        )
    except (ModelError, ValueError) as error:
        raise VerifyError(f"srun options do not read back: {error}") from None


def _count(option: str, value: str) -> int:
    """An option's count, or VerifyError saying the value is not one (srun refuses it)."""
    if not value.isdigit():
        raise VerifyError(f"srun {option} {value!r}: not a count, and srun refuses it")
    return int(value)


def _apply(
    name: str,
    value: str | None,
    fields: dict[str, Any],
    container: dict[str, Any],
    extra: list[SrunOption],
) -> None:
    if name in _SWITCHES:
        key, flag = _SWITCHES[name]
        container[key] = flag
    elif name in PYXIS_OPTIONS:
        if value is None:
            raise VerifyError(f"--{name} needs a value")
        if name == "container-image":
            container["image"] = value
        elif name == "container-name":
            base, _, name_flag = value.partition(":")
            container["name"] = base
            if name_flag:
                container["name_flag"] = name_flag
        elif name == "container-mounts":
            container["mounts"] = parse_mounts(value)
        elif name == "container-workdir":
            container["workdir"] = value
        elif name == "container-env":
            container["env"] = tuple(value.split(","))
        elif name == "container-save":
            container["save"] = value
    elif name in ("nodes", "ntasks", "ntasks-per-node"):
        fields[name.replace("-", "_")] = _count(f"--{name}", value or "")
    elif name in ("gres", "mpi"):
        fields[name] = value
    elif name == "kill-on-bad-exit":
        fields["kill_on_bad_exit"] = value != "0"
    elif name == "label":
        fields["label"] = True
    else:
        parsed: str | int | None = value
        if name in INT_OPTIONS and value is not None:
            parsed = _count(f"--{name}", value)
        extra.append(SrunOption(name=name, value=parsed))
