"""slurm_env.json as types: what the cluster probe (trtllm-case-executor's, or `scriptast
probe-slurm`) found. Unknown keys are allowed: emit embeds the file's own object verbatim."""

from __future__ import annotations

from typing import Literal

import msgspec

NOT_RUN = "trtllm-case-executor did not run Step 2.5 before invoking the script builder"
NO_CLIENT_TOOLS = "SLURM client tools not found"


class Partition(msgspec.Struct, frozen=True, kw_only=True):
    """One partition; `arch`, `gpus_per_node` may be null, `gres` may be `(null)`."""

    name: str
    state: str | None = None
    time_limit: str | None = None
    nodes: str | int | None = None
    arch: str | None = None
    gres: str | None = None
    gpus_per_node: int | None = None
    requires_gres: bool | None = None


class Pmix(msgspec.Struct, frozen=True, kw_only=True):
    """The MPI plugins srun offers, and the one to use."""

    available: tuple[str, ...] = ()
    preferred: str | None = None


class Probe(msgspec.Struct, frozen=True, kw_only=True):
    """Where slurm_env.json was probed: the host and the Slurm release it runs."""

    host: str | None = None
    slurm_version: str | None = None


class PluginOption(msgspec.Struct, frozen=True):
    """An option a cluster's SPANK plugin adds to srun and sbatch (pyxis' `--container-image`,
    a site's `--image`), as `srun --help` lists it under "Options provided by plugins", and its
    argument: `required`, or `no` for a switch."""

    name: str
    arg: Literal["required", "no", "optional"] = "required"


class SlurmEnv(msgspec.Struct, frozen=True, kw_only=True):
    """The seed's slurm_env schema, with the keys scriptast adds (`home`, `cluster_name`,
    `probe`, `ssh_host`, the cluster's front door for `scriptast run`, and `plugin_options`,
    the options its SPANK plugins add; None: not probed, so an option Slurm lacks is only a
    note to verify)."""

    user: str | None = None
    default_account: str | None = None
    accounts: tuple[str, ...] = ()
    default_partition: str | None = None
    partitions: tuple[Partition, ...] = ()
    pmix: Pmix = msgspec.field(default_factory=Pmix)
    errors: tuple[str, ...] = ()
    mounts: tuple[str, ...] | None = None
    remote_cwd: str | None = None
    home: str | None = None
    cluster_name: str | None = None
    ssh_host: str | None = None
    probe: Probe | None = None
    plugin_options: tuple[PluginOption, ...] | None = None
    max_array_size: int | None = None
    """`MaxArraySize` of `scontrol show config`: a job array's indices are below it (0: the
    cluster takes no arrays). None: not probed, and Slurm's default, 1001, is assumed."""

    def partition(self, name: str) -> Partition | None:
        """The partition called `name`, if any."""
        return next((p for p in self.partitions if p.name == name), None)

    @property
    def client_tools_missing(self) -> bool:
        """True when the probe ran on a host without sinfo/scontrol."""
        return any(NO_CLIENT_TOOLS.lower() in error.lower() for error in self.errors)

    @property
    def front_door(self) -> str | None:
        """The ssh host that reaches the cluster: `ssh_host`, else the host it was probed on."""
        return self.ssh_host or (self.probe.host if self.probe else None)
