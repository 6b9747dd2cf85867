"""slurm_env.json as types: what the cluster probe (trtllm-case-executor's) found."""

from __future__ import annotations

import json
from typing import Any

import msgspec

from scriptast.common.text_files import decode_utf8, file_bytes
from scriptast.errors import InputError

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


class SlurmEnv(msgspec.Struct, frozen=True, kw_only=True):
    """The seed's slurm_env schema. Unknown keys are allowed; the raw object keeps them."""

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
    probe: Probe | None = None

    def partition(self, name: str) -> Partition | None:
        """The partition called `name`, if any."""
        return next((p for p in self.partitions if p.name == name), None)

    @property
    def client_tools_missing(self) -> bool:
        """True when the probe ran on a host without sinfo/scontrol."""
        return any(NO_CLIENT_TOOLS.lower() in error.lower() for error in self.errors)


class LoadedSlurmEnv(msgspec.Struct, frozen=True, kw_only=True):
    """The typed view and the verbatim object (embedded in job_spec.json as it was read)."""

    env: SlurmEnv
    raw: dict[str, Any]
    path: str


def load_slurm_env(path: str | None, scenario: str) -> LoadedSlurmEnv:
    """Read and type-check slurm_env.json; a missing or malformed file is the seed's error."""
    if not path:
        raise InputError(f"slurm_env_file is required for {scenario}: {NOT_RUN}")
    try:
        data = file_bytes(path)
    except OSError as error:
        reason = error.strerror or "unreadable"
        raise InputError(
            f"slurm_env_file {path} is missing or unreadable ({reason}): {NOT_RUN}"
        ) from None
    text = decode_utf8(data, f"slurm_env_file {path}")
    try:
        raw = json.loads(text)
    except ValueError as error:
        raise InputError(f"slurm_env_file {path} is not JSON: {error}") from None
    except RecursionError:
        raise InputError(f"slurm_env_file {path} nests too deeply to be slurm_env") from None
    if not isinstance(raw, dict):
        raise InputError(f"slurm_env_file {path} must hold a JSON object")
    try:
        env = msgspec.convert(raw, type=SlurmEnv)
    except msgspec.ValidationError as error:
        raise InputError(f"slurm_env_file {path} has the wrong shape: {error}") from None
    found = contradictions(env)
    if found:
        raise InputError(
            f"slurm_env_file {path} contradicts itself: {found[0]}; probe the cluster again "
            "(scriptast probe-slurm) or correct the file"
        )
    return LoadedSlurmEnv(env=env, raw=raw, path=path)


def contradictions(env: SlurmEnv) -> list[str]:
    """What a slurm_env says that cannot be true of one cluster (a job sized by it could not
    run): a partition listed twice, no GPUs where GPUs are counted, a preferred MPI plugin
    srun does not offer."""
    from scriptast.model.slurm_options import gres_gpus

    found = []
    seen: set[str] = set()
    for partition in env.partitions:
        if partition.name in seen:
            found.append(f"partition {partition.name!r} is listed twice")
        seen.add(partition.name)
        if partition.gpus_per_node is not None and partition.gpus_per_node <= 0:
            found.append(
                f"partition {partition.name!r} has gpus_per_node {partition.gpus_per_node}"
            )
        if gres_gpus(partition.gres) == 0:
            found.append(f"partition {partition.name!r} has gres {partition.gres} (no GPU)")
    preferred, offered = env.pmix.preferred, env.pmix.available
    if preferred and offered and preferred not in offered:
        found.append(
            f"pmix.preferred {preferred!r} is not in pmix.available ({', '.join(offered)})"
        )
    return found
