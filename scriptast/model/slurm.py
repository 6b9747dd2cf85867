"""The Slurm pieces of a script: `#SBATCH` directives, pyxis containers and mounts, srun steps."""

from __future__ import annotations

import posixpath
import re
from typing import Literal

from scriptast.errors import ModelError
from scriptast.model.image_ref import SQUASHFS, image_problem
from scriptast.model.node import IDENTIFIER, Node, check_single_line
from scriptast.model.slurm_options import (
    FLAG_OPTIONS,
    INT_OPTIONS,
    PYXIS_OPTIONS,
    SBATCH_OPTIONS_ANY,
    SRUN_OPTIONS_ANY,
    check_gres,
    check_mpi_plugin,
    check_positive,
)
from scriptast.model.slurm_time import parse_time_limit
from scriptast.model.statements import Payload
from scriptast.model.words import Word

ARRAY_INDICES = re.compile(r"\d+(-\d+)?(,\d+(-\d+)?)*(%[1-9]\d*)?")
"""sbatch's `--array` value as scriptast writes it: indices and ranges, then `%LIMIT`."""

MOUNT_FLAGS = frozenset(
    [
        "ro",
        "rw",
        "x-create=dir",
        "x-create=file",
        "x-create=auto",
        "x-detach",
        "rbind",
        "bind",
        "nosuid",
        "nodev",
        "noexec",
        "private",
        "rprivate",
        "slave",
        "rslave",
        "shared",
        "rshared",
    ]
)
PYXIS_PATH_CHARACTERS = {" ": "a space", ",": "a comma", ":": "a colon"}
"""What `--container-mounts` has no escape for (it splits on `,` and `:`)."""


# `\s` matches exactly what str.isspace() calls whitespace.
def filename_literal(text: str) -> str:
    """`text` as literal text of an sbatch `--output`/`--error` file-name pattern: `%` is
    written `%%`. A backslash is refused: Slurm reads one as "expand no pattern at all", which
    would leave `%j` unexpanded and the log somewhere nobody looks."""
    if "\\" in text:
        raise ModelError(
            f"{text!r} holds a backslash, which turns off Slurm's %-patterns (%j too) in "
            "--output/--error; use a path without a backslash",
            field="output",
        )
    return text.replace("%", "%%")


_PYXIS_PATH_UNSAFE = re.compile(r"[,:\s\x00-\x1f\x7f]")


def pyxis_path_problem(path: str) -> tuple[int, str] | None:
    """(offset, what) of the first character pyxis cannot express in a mount path, or None."""
    found = _PYXIS_PATH_UNSAFE.search(path)
    if found is None:
        return None
    char = found.group()
    return found.start(), PYXIS_PATH_CHARACTERS.get(char, "whitespace or a control character")


def _check_option_value(option: str, value: str | int | None, where: str) -> None:
    if option in FLAG_OPTIONS:
        if value is not None:
            raise ModelError(f"{where} --{option} is a flag and takes no value", field=option)
        return
    if option in INT_OPTIONS:
        if not isinstance(value, int):
            raise ModelError(
                f"{where} --{option} needs an integer >= 1, got {value!r}", field=option
            )
        check_positive(value, f"{where} --{option}")
        return
    if value is None:
        if option == "exclusive":
            return
        raise ModelError(f"{where} --{option} needs a value", field=option)
    text = str(value)
    check_single_line(text, f"{where} --{option} value")
    if option == "time":
        parse_time_limit(text)
    elif option == "gres":
        check_gres(text)
    elif option == "mpi":
        check_mpi_plugin(text)
    elif option == "array" and not ARRAY_INDICES.fullmatch(text):
        raise ModelError(
            f"{where} --array={text} is not a list of indices and ranges (0-11, 0,3,5-7) with "
            "an optional %LIMIT",
            field=option,
        )


class SbatchDirective(Node, frozen=True, kw_only=True, tag="sbatch"):
    """One `#SBATCH --option[=value]` line; the option is checked against sbatch's own list.

    Integers (`nodes`, `ntasks`, ...) must be >= 1, `time` a Slurm time limit, `gres`
    `name[:type]:N`.
    """

    option: str
    value: str | int | None = None

    def __post_init__(self) -> None:
        if self.option not in SBATCH_OPTIONS_ANY:
            raise ModelError(f"--{self.option} is not an sbatch option", field="option")
        if isinstance(self.value, str) and "hetjob" in self.value:
            raise ModelError(
                f"#SBATCH --{self.option} value must not contain 'hetjob'", field="value"
            )
        _check_option_value(self.option, self.value, "#SBATCH")


class SrunOption(Node, frozen=True, kw_only=True, tag="srun_option"):
    """Any other srun option, `--name[=value]`, checked against srun's option list."""

    name: str
    value: str | int | None = None

    def __post_init__(self) -> None:
        if self.name not in SRUN_OPTIONS_ANY or self.name in PYXIS_OPTIONS:
            raise ModelError(
                f"--{self.name} is not an srun option here"
                + (" (use the step's container)" if self.name in PYXIS_OPTIONS else ""),
                field="name",
            )
        if self.name in _TYPED_SRUN_FIELDS:
            raise ModelError(
                f"--{self.name} is a typed field of SrunStep; set it there", field="name"
            )
        _check_option_value(self.name, self.value, "srun")


_TYPED_SRUN_FIELDS = frozenset(
    {"nodes", "ntasks", "ntasks-per-node", "mpi", "gres", "kill-on-bad-exit", "label"}
)


def split_mount(entry: str) -> tuple[str, str, tuple[str, ...]] | None:
    """(source, target, flags) of one `SRC[:DST[:FLAGS]]` entry as pyxis reads it (a lone SRC
    is mounted at itself; empty FLAGS are none), or None when it is not of that form."""
    pieces = entry.split(":")
    if len(pieces) == 1:
        pieces = [pieces[0], pieces[0]]
    if len(pieces) not in (2, 3) or not all(pieces[:2]):
        return None
    flags = tuple(pieces[2].split("+")) if len(pieces) == 3 and pieces[2] else ()
    return pieces[0], pieces[1], flags


class Mount(Node, frozen=True, kw_only=True, tag="mount"):
    """A pyxis bind mount `source:target[:flag+flag]`; both paths absolute."""

    source: str
    target: str
    flags: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for what, path in (("source", self.source), ("target", self.target)):
            if not posixpath.isabs(path):
                raise ModelError(f"mount {what} {path!r} must be an absolute path", field=what)
        for flag in self.flags:
            if flag not in MOUNT_FLAGS:
                raise ModelError(
                    f"mount flag {flag!r} is not one of {sorted(MOUNT_FLAGS)}", field="flags"
                )

    def covers(self, path: str) -> bool:
        """True when `path` on the host lies inside this mount's source."""
        source = self.source.rstrip("/") or "/"
        return path == source or path.startswith(source + "/") or source == "/"


class PyxisContainer(Node, frozen=True, kw_only=True, tag="pyxis"):
    """The pyxis options of one srun step.

    `image` is written as given (the builders pass enroot's `registry#path:tag` form);
    `env` holds variable NAMES that pyxis passes into the container.
    """

    image: str
    mounts: tuple[Mount, ...] = ()
    name: str | None = None
    name_flag: Literal["auto", "create", "exec", "no_exec"] | None = None
    workdir: str | None = None
    env: tuple[str, ...] = ()
    mount_home: bool | None = None
    remap_root: bool | None = None
    writable: bool | None = None
    entrypoint: bool | None = None
    save: str | None = None

    def __post_init__(self) -> None:
        if not SQUASHFS.match(self.image) and (problem := image_problem(self.image)):
            raise ModelError(
                f"container image {self.image!r} is not an image reference: {problem}",
                field="image",
            )
        if self.name is not None and (not self.name or set(self.name) & set(":, \t\n")):
            raise ModelError(
                f"container name {self.name!r} must be non-empty, without : , or space",
                field="name",
            )
        if self.name_flag is not None and self.name is None:
            raise ModelError("a container name flag needs a container name", field="name")
        if self.workdir is not None and not posixpath.isabs(self.workdir):
            raise ModelError(
                f"container workdir {self.workdir!r} must be an absolute path", field="workdir"
            )
        for name in self.env:
            if not IDENTIFIER.match(name):
                raise ModelError(
                    f"container env entry {name!r} must be a variable NAME", field="env"
                )
        if self.save is not None and not posixpath.isabs(self.save):
            raise ModelError(f"container save path {self.save!r} must be absolute", field="save")


class SrunStep(Node, frozen=True, kw_only=True, tag="srun"):
    """One `srun` job step: typed options, an optional pyxis container, and what it runs.

    Exactly one of `payload` (run as `bash -c '<payload>'`) and `command` (argv) is set.
    """

    payload: Payload | None = None
    command: tuple[Word, ...] = ()
    label: bool = True
    nodes: int | None = None
    ntasks: int | None = None
    ntasks_per_node: int | None = None
    gres: str | None = None
    mpi: str | None = None
    kill_on_bad_exit: bool | None = None
    extra: tuple[SrunOption, ...] = ()
    container: PyxisContainer | None = None

    def __post_init__(self) -> None:
        if (self.payload is None) == (not self.command):
            raise ModelError(
                "an srun step runs exactly one of a payload or a command", field="payload"
            )
        for what, number in (
            ("--nodes", self.nodes),
            ("--ntasks", self.ntasks),
            ("--ntasks-per-node", self.ntasks_per_node),
        ):
            if number is not None:
                check_positive(number, f"srun {what}")
        if self.gres is not None:
            check_gres(self.gres)
        if self.mpi is not None:
            check_mpi_plugin(self.mpi)
        names = [option.name for option in self.extra]
        if len(names) != len(set(names)):
            raise ModelError(f"srun options repeat: {names}", field="options")
