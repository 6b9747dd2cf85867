"""Parallelism values and the limits every category shares (the seed's Step 3 and its texts)."""

from __future__ import annotations

import msgspec

from scriptast.errors import ResolveError
from scriptast.readers.shellwords import flag_value

MAX_DEVICES = 8


class Sourced(msgspec.Struct, frozen=True):
    """An int and where it came from."""

    value: int
    source: str


class Parallelism(msgspec.Struct, frozen=True):
    """What the Slurm header and the steps need."""

    required_devices: Sourced
    world_size: int
    tp: Sourced
    pp: Sourced
    ep: Sourced
    nodes: int
    ntasks: int
    ntasks_per_node: int
    multi_node_eval: bool = False
    ranks_source: str | None = None


def int_flag(argv: list[str], name: str, default: int, what: str) -> Sourced:
    raw = flag_value(argv, name)
    if raw is None:
        return Sourced(default, "default")
    try:
        value = int(raw)
    except ValueError:
        raise ResolveError(f"{what} {name} {raw!r} is not an integer", field=what) from None
    if value < (0 if name == "--ep" else 1):
        raise ResolveError(f"{what} {name} must be >= 1, got {value}", field=what)
    return Sourced(value, f"derived from {name} {raw} in {what}")


def requested_devices(required_devices: int | None) -> Sourced:
    """The input required_devices, else 1."""
    if required_devices is not None:
        return Sourced(required_devices, "input required_devices")
    return Sourced(1, "default")


def check_max(devices: Sourced, what: str) -> None:
    """The seed's hard limit of 8 GPUs, in its words."""
    if devices.value > MAX_DEVICES:
        raise ResolveError(
            f"required_devices = {devices.value} exceeds the maximum of {MAX_DEVICES} GPUs "
            f"for {what}.",
            field="required_devices",
        )


def single_node(devices: int) -> tuple[int, int, int]:
    """(nodes, ntasks, ntasks_per_node) of a job with one task a GPU on one node."""
    return 1, devices, devices
