"""Compute-node architecture: this machine for local_docker, the partition's for Slurm, with the
seed's fallbacks when the probe could not tell."""

from __future__ import annotations

import os

import msgspec

from scriptast.contract.axes import SLURM, Placement
from scriptast.contract.slurm_env import Partition, SlurmEnv

ARCH_ALIASES = {"arm64": "aarch64", "aarch64": "aarch64", "x86_64": "x86_64", "amd64": "x86_64"}


class Arch(msgspec.Struct, frozen=True):
    """The architecture, where it came from, and whether slurm_env's pmix.preferred may be used."""

    name: str
    source: str
    pmix_trusted: bool


def normalize_arch(value: str) -> str:
    """`arm64` means aarch64, `amd64` means x86_64; anything else is kept lowercased."""
    lowered = value.strip().lower()
    return ARCH_ALIASES.get(lowered, lowered)


def resolve_arch(
    where: Placement,
    partition: Partition | None,
    slurm_env: SlurmEnv | None,
    machine: str | None = None,
) -> Arch:
    """The seed's Step 1 arch rules."""
    here = normalize_arch(machine or os.uname().machine)
    if where.scheduler != SLURM:
        return Arch(here, "this machine (uname -m)", True)
    missing_tools = slurm_env is not None and slurm_env.client_tools_missing
    if partition is not None and partition.arch and not missing_tools:
        return Arch(normalize_arch(partition.arch), f"slurm_env partition {partition.name!r}", True)
    why = "slurm_env: SLURM client tools not found" if missing_tools else "partition arch is null"
    if not where.remote:
        return Arch(here, f"this machine (uname -m), {why}", False)
    return Arch("x86_64", f"default for remote_slurm, {why}", False)
