"""slurm_env.json read and checked: its object as it was (embedded verbatim into job_spec.json)
and its typed view, refused when it contradicts itself."""

from __future__ import annotations

import json
from typing import Any

import msgspec

from scriptast.common.text_files import decode_utf8, file_bytes
from scriptast.contract.slurm_env import NOT_RUN, SlurmEnv
from scriptast.errors import InputError


class LoadedSlurmEnv(msgspec.Struct, frozen=True, kw_only=True):
    """The typed view and the verbatim object (embedded in job_spec.json as it was read)."""

    env: SlurmEnv
    raw: dict[str, Any]
    path: str


def load_slurm_env(path: str | None, scenario: str) -> LoadedSlurmEnv:
    """Read and type-check slurm_env.json; a missing or malformed file is the seed's error."""
    if not path:
        raise InputError(
            f"slurm_env_file is required for {scenario}: write it with `scriptast probe-slurm "
            f"-o slurm_env.json` (add --ssh-host HOST for a remote cluster) and pass "
            f"--slurm-env-file slurm_env.json ({NOT_RUN})"
        )
    try:
        data = file_bytes(path)
    except OSError as error:
        reason = error.strerror or "unreadable"
        raise InputError(
            f"slurm_env_file {path} is missing or unreadable ({reason}): write it with "
            f"`scriptast probe-slurm -o {path}` (add --ssh-host HOST for a remote cluster), or "
            f"pass the file it wrote ({NOT_RUN})"
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
