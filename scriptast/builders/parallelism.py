"""Parallelism and hard limits per workflow (the seed's Step 3), with the seed's error texts."""

from __future__ import annotations

import math
import posixpath

import msgspec

from scriptast.errors import ResolveError
from scriptast.readers.shellwords import flag_value, split_top_level, tokenize

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


def _int_flag(argv: list[str], name: str, default: int, what: str) -> Sourced:
    raw = flag_value(argv, name)
    if raw is None:
        return Sourced(default, "default")
    try:
        value = int(raw)
    except ValueError:
        raise ResolveError(f"{what} {name} {raw!r} is not an integer") from None
    if value < (0 if name == "--ep" else 1):
        raise ResolveError(f"{what} {name} must be >= 1, got {value}")
    return Sourced(value, f"derived from {name} {raw} in {what}")


def check_positive(value: int | None, name: str) -> None:
    """Device and node counts from the request must be >= 1."""
    if value is not None and value < 1:
        raise ResolveError(f"{name} must be >= 1, got {value}")


def last_bench_invocation(bench_cmd: str) -> list[str]:
    """The words of the LAST `trtllm-bench` invocation, up to the next operator."""
    tokens = tokenize(bench_cmd, "bench_cmd")
    starts = [
        i
        for i, t in enumerate(tokens)
        if t.kind == "word" and posixpath.basename(t.value) == "trtllm-bench"
    ]
    if not starts:
        raise ResolveError(f"bench_cmd has no trtllm-bench invocation: {bench_cmd!r}")
    found: list[str] = []
    for token in tokens[starts[-1] :]:
        if token.kind != "word":
            break
        found.append(token.value)
    return found


def split_bench(bench_cmd: str) -> tuple[str | None, str]:
    """(prepare step, run step) at the one top-level `&&`; no `&&` means no prepare step."""
    pieces = split_top_level(bench_cmd, "&&", "bench_cmd")
    if len(pieces) > 2:
        raise ResolveError(
            f"bench_cmd has {len(pieces) - 1} top-level '&&'; it must be one prepare command "
            "&& one run command (or just the run command)"
        )
    if any(not piece for piece in pieces):
        raise ResolveError(f"bench_cmd has an empty command around '&&': {bench_cmd!r}")
    if len(pieces) == 1:
        return None, pieces[0]
    _check_binds_to_the_and(pieces[1])
    return pieces[0], pieces[1]


def _check_binds_to_the_and(run: str) -> None:
    """The run step is what bash runs after the `&&` only when no list separator follows:
    in `prep && run; more`, bash runs `more` even when `prep` fails."""
    tokens = tokenize(run, "bench_cmd")
    for index, token in enumerate(tokens):
        if token.kind == "op" and token.value in (";", "\n", "||", "&", ";;"):
            if token.value == "\n" and all(t.value == "\n" for t in tokens[index:]):
                continue
            shown = "a newline" if token.value == "\n" else repr(token.value)
            raise ResolveError(
                f"bench_cmd has {shown} after its top-level '&&', so bash would not run all "
                "of the rest only after the prepare step: give `prepare && run` with one "
                "command (or pipeline) on each side"
            )


def _requested_devices(required_devices: int | None) -> Sourced:
    """The input required_devices, else 1."""
    if required_devices is not None:
        return Sourced(required_devices, "input required_devices")
    return Sourced(1, "default")


def _check_max(devices: Sourced, what: str) -> None:
    """The seed's hard limit of 8 GPUs, in its words."""
    if devices.value > MAX_DEVICES:
        raise ResolveError(
            f"required_devices = {devices.value} exceeds the maximum of {MAX_DEVICES} GPUs "
            f"for {what}."
        )


def _single_node_slurm(devices: int) -> tuple[int, int, int]:
    return 1, devices, devices


def pytest_parallelism(
    file_devices: Sourced | None,
    required_devices: int | None,
    node_count: int | None,
    gpus_per_node: Sourced | None,
    mpi_ranks: Sourced | None = None,
) -> Parallelism:
    """pytest: devices from the test file, else the input, else 1; one node; one task, or
    one per MPI rank a `skip_less_mpi_world_size(N)` test needs (each rank a GPU)."""
    devices = file_devices or _requested_devices(required_devices)
    ranks = mpi_ranks.value if mpi_ranks is not None and mpi_ranks.value > 1 else 1
    if ranks > devices.value:
        devices = Sourced(ranks, f"{mpi_ranks.source if mpi_ranks else ''} (one GPU a rank)")
    _check_max(devices, "pytest")
    if gpus_per_node is not None and devices.value > gpus_per_node.value:
        raise ResolveError(
            f"required_devices = {devices.value} exceeds gpus_per_node = {gpus_per_node.value} "
            f"({gpus_per_node.source}); pytest does not support multi-node execution."
        )
    if node_count is not None and node_count > 1:
        raise ResolveError(
            f"node_count = {node_count}: pytest is always single-node (node_count must be 1)."
        )
    one = Sourced(1, "default")
    source = mpi_ranks.source if ranks > 1 and mpi_ranks else None
    return Parallelism(
        devices, ranks, one, one, Sourced(0, "default"), 1, ranks, ranks, ranks_source=source
    )


def eval_parallelism(
    eval_cmd: str, gpus_per_node: Sourced | None
) -> tuple[Parallelism, Sourced | None]:
    """eval: world_size = --tp_size * --pp_size; `--gpus_per_node` overrides the cluster's."""
    argv = [t.value for t in tokenize(eval_cmd, "eval_cmd") if t.kind == "word"]
    tp = _int_flag(argv, "--tp_size", 1, "eval_cmd")
    pp = _int_flag(argv, "--pp_size", 1, "eval_cmd")
    override = _int_flag(argv, "--gpus_per_node", 0, "eval_cmd")
    per_node = override if override.value else gpus_per_node
    world = tp.value * pp.value
    devices = Sourced(world, f"tp_size * pp_size = {tp.value} * {pp.value}")
    multi = per_node is not None and world > per_node.value
    nodes = math.ceil(world / per_node.value) if multi and per_node else 1
    result = Parallelism(
        devices, world, tp, pp, Sourced(0, "default"), nodes, world, math.ceil(world / nodes), multi
    )
    return result, per_node


def bench_parallelism(bench_cmd: str, gpus_per_node: Sourced | None) -> Parallelism:
    """bench: --tp/--pp/--ep of the last trtllm-bench invocation; single node only."""
    argv = last_bench_invocation(bench_cmd)
    tp = _int_flag(argv, "--tp", 1, "bench_cmd")
    pp = _int_flag(argv, "--pp", 1, "bench_cmd")
    ep = _int_flag(argv, "--ep", 0, "bench_cmd")
    world = tp.value * pp.value
    if gpus_per_node is not None and world > gpus_per_node.value:
        raise ResolveError(
            f"world_size = {world} (tp {tp.value} * pp {pp.value}) exceeds gpus_per_node = "
            f"{gpus_per_node.value} ({gpus_per_node.source}); "
            "multi-node trtllm-bench is not supported."
        )
    devices = Sourced(world, f"tp * pp = {tp.value} * {pp.value}")
    return Parallelism(devices, world, tp, pp, ep, *_single_node_slurm(world))


def custom_parallelism(
    required_devices: int | None, node_count: int | None, gpus_per_node: Sourced | None
) -> Parallelism:
    """custom: required_devices (1); at most 8 and one node."""
    devices = _requested_devices(required_devices)
    _check_max(devices, "custom commands")
    if gpus_per_node is None:
        raise ResolveError(
            "gpus_per_node is unknown: the partition has no gpus_per_node or gpu gres, and "
            "env_check.gpus_per_node is not given; pass env_check.gpus_per_node"
        )
    nodes = math.ceil(devices.value / gpus_per_node.value)
    if nodes > 1 or (node_count is not None and node_count > 1):
        nodes = max(nodes, node_count or 1)
        raise ResolveError(
            f"required_devices = {devices.value} requires {nodes} nodes (gpus_per_node = "
            f"{gpus_per_node.value}), but custom commands are limited to 1 node. "
            f"Reduce required_devices to at most {gpus_per_node.value}."
        )
    one = Sourced(1, "default")
    return Parallelism(
        devices, devices.value, one, one, Sourced(0, "default"), *_single_node_slurm(devices.value)
    )
