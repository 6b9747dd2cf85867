"""The stage list (`jenkins/scripts/test_stage_configs.json`): one entry a stage family, each
generating the stages `<name>-<k>` for k in 1..splits; a stage name is found with its split."""

from __future__ import annotations

import difflib
import posixpath
import re
from typing import Annotated, Literal

import msgspec

from scriptast.common.text_files import regular_file_bytes
from scriptast.errors import InputError

STAGE_LIST = "jenkins/scripts/test_stage_configs.json"
_SPLIT = re.compile(r"(.+)-(\d+)\Z")
MOST_SPLITS = 1000
"""Splits a family may have: far past any stage CI runs (tens), far below what would fill a
disk with work dirs."""
MOST_COUNT = 4096
StageName = Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,199}$")]
"""A stage family's name is a name, never a path: letters, digits, `_ . + -`, no `/`."""


class StageConfig(msgspec.Struct, frozen=True, kw_only=True):
    """One family, as upstream's buildStageConfigsFromSpecs reads it: `gpuCount` and
    `nodeCount` default to 1, `runWithSbatch` to false."""

    name: StageName
    arch: Literal["x86", "SBSA"]
    slurm: bool
    platform: str
    testDB: StageName
    splits: Annotated[int, msgspec.Meta(ge=1, le=MOST_SPLITS)]
    gpuCount: Annotated[int, msgspec.Meta(ge=1, le=MOST_COUNT)] = 1
    nodeCount: Annotated[int, msgspec.Meta(ge=1, le=MOST_COUNT)] = 1
    runWithSbatch: bool = False
    target: str | None = None


class StageList(msgspec.Struct, frozen=True):
    configs: tuple[StageConfig, ...]


class Stage(msgspec.Struct, frozen=True, kw_only=True):
    """A stage: its name, its family's entry, and its split (1-based) of the family's."""

    name: str
    config: StageConfig
    split: int
    path: str


def read_stage_list(repo_root: str) -> tuple[tuple[StageConfig, ...], str]:
    """The stage list's entries and its path; InputError naming the file when it is missing
    or is not the list CI reads."""
    path = posixpath.join(repo_root, STAGE_LIST)
    try:
        data, _ = regular_file_bytes(path, 4 << 20)
    except FileNotFoundError:
        raise InputError(f"{path}: no stage list there: give the repo_root of a TensorRT-LLM "
                         "checkout that has jenkins/scripts/test_stage_configs.json",
                         field="ci_stage") from None  # fmt: skip
    except OSError as error:
        raise InputError(f"{path}: cannot read it: {error.strerror}", field="ci_stage") from None
    try:
        read = msgspec.json.decode(data, type=StageList)
    except (msgspec.DecodeError, msgspec.ValidationError) as error:
        raise InputError(
            f"{path}: not the stage list CI reads: {error}", field="ci_stage"
        ) from None
    return read.configs, path


def stage_names(configs: tuple[StageConfig, ...]) -> list[str]:
    """Every stage the list generates, in its order."""
    return [f"{c.name}-{k}" for c in configs for k in range(1, c.splits + 1)]


def find_stage(repo_root: str, name: str) -> Stage:
    """The stage `name` (`DGX_B200-4_GPUs-PyTorch-2`: the family and split 2 of 3); InputError
    with the closest names when the list generates no such stage."""
    configs, path = read_stage_list(repo_root)
    matched = _SPLIT.match(name)
    if matched:
        family_name, split = matched.group(1), int(matched.group(2))
        for config in configs:
            if config.name == family_name and 1 <= split <= config.splits:
                return Stage(name=name, config=config, split=split, path=path)
    family = next((c for c in configs if c.name == name), None)
    split_of = next((c for c in configs if matched and c.name == matched.group(1)), None)
    if family is not None:
        hint = f" (a family of {family.splits} split(s): name one, as {name}-1)"
    elif split_of is not None:
        hint = f" ({split_of.name} has {split_of.splits} split(s), 1 to {split_of.splits})"
    else:
        close = difflib.get_close_matches(name, stage_names(configs), n=3, cutoff=0.6)
        hint = f" (closest: {', '.join(close)})" if close else ""
    raise InputError(f"ci_stage {name!r} is not a stage of {path}{hint}", field="ci_stage")
