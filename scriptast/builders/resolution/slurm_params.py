"""Slurm parameters from the request and slurm_env: partition, account, time limit, GPUs per node,
`--gres`, and the MPI plugin."""

from __future__ import annotations

from scriptast.builders.request.fields import EnvCheck
from scriptast.builders.resolution.parallelism import Sourced
from scriptast.common.suggest import did_you_mean
from scriptast.contract.slurm_env import NOT_RUN, Partition, SlurmEnv
from scriptast.errors import ModelError, ResolveError
from scriptast.model.slurm_options import gres_gpus
from scriptast.model.slurm_time import parse_time_limit

DEFAULT_TIME_LIMIT = "02:00:00"


def require(value: str | None, field: str, scenario: str) -> str:
    """partition and account are never defaulted for Slurm scenarios."""
    if not value:
        flag = "--" + field.replace("_", "-")
        raise ResolveError(
            f"{field} is required for {scenario}: pass {flag} (`scriptast probe-slurm -o "
            f"slurm_env.json` lists the cluster's {field}s); scriptast never defaults it "
            f"({NOT_RUN})",
            field=field,
        )
    return value


def find_partition(env: SlurmEnv, name: str) -> Partition:
    """The partition entry; an unknown name lists the known ones."""
    found = env.partition(name)
    if found is None:
        known = [p.name for p in env.partitions]
        raise ResolveError(
            f"partition {name!r} is not in slurm_env.json (known: {', '.join(known) or 'none'})"
            f"{did_you_mean(name, known)}",
            field="partition",
        )
    return found


def check_account(env: SlurmEnv, account: str) -> None:
    """When slurm_env lists accounts, the account must be one of them."""
    if env.accounts and account not in env.accounts:
        raise ResolveError(
            f"account {account!r} is not in slurm_env.json accounts "
            f"(known: {', '.join(env.accounts)}){did_you_mean(account, env.accounts)}",
            field="account",
        )


def uses_gres(partition: Partition | None) -> bool:
    """A partition gres list with a `gpu:N` entry (first or not: `craynetwork:4,gpu:4`) means
    `--gres=gpu:N`; `(null)` or unknown means none."""
    return partition is not None and bool(gres_gpus(partition.gres))


def gpus_per_node(partition: Partition | None, env_check: EnvCheck | None) -> Sourced | None:
    """The partition's gpus_per_node (or its gres count), else env_check's: the docker host's
    gpus_per_node, bounded by its available_gpus."""
    if partition is not None:
        if partition.gpus_per_node:
            return Sourced(partition.gpus_per_node, f"slurm_env partition {partition.name!r}")
        counted = gres_gpus(partition.gres)
        if counted:
            return Sourced(counted, f"slurm_env partition {partition.name!r} gres {partition.gres}")
    if env_check is not None:
        per_node, available = env_check.gpus_per_node, env_check.available_gpus
        if per_node and available and available < per_node:
            # a docker host's free GPUs bound the job, whatever the machine holds
            return Sourced(
                available, f"env_check.available_gpus (fewer than gpus_per_node {per_node})"
            )
        if per_node:
            return Sourced(per_node, "env_check.gpus_per_node")
        if available:
            return Sourced(available, "env_check.available_gpus")
    return None


def time_limit(value: str | None, partition: Partition | None) -> tuple[str, str]:
    """(time limit, source); it must be a Slurm time within the partition's MaxTime."""
    chosen = value or DEFAULT_TIME_LIMIT
    source = "input time_limit" if value else "default"
    try:
        minutes = parse_time_limit(chosen)
    except ModelError as error:
        raise ResolveError(f"time_limit: {error}", field="time_limit") from None
    if partition is not None and partition.time_limit:
        try:
            limit = parse_time_limit(partition.time_limit)
        except ModelError:
            limit = None
        if limit is not None and (minutes is None or minutes > limit):
            raise ResolveError(
                f"time_limit {chosen} exceeds partition {partition.name!r} MaxTime "
                f"{partition.time_limit}; pass --time-limit of at most {partition.time_limit}",
                field="time_limit",
            )
    return chosen, source


def mpi_plugin(env: SlurmEnv | None, trusted: bool) -> tuple[str, str]:
    """pmix.preferred when known (and the probe is trusted), else the bare `pmix`."""
    if env is not None and trusted and env.pmix.preferred:
        return env.pmix.preferred, "slurm_env pmix.preferred"
    return "pmix", "default (pmix.preferred unset)"
