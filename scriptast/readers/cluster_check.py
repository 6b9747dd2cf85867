"""Check a script's #SBATCH directives and srun steps against a cluster's slurm_env.json:
the partition exists, GPUs fit a node, the time fits the partition, the MPI plugin exists."""

from __future__ import annotations

from scriptast.common.suggest import did_you_mean
from scriptast.contract.slurm_env import SlurmEnv
from scriptast.errors import ModelError
from scriptast.model.slurm_options import ADDED_LATER, gres_gpus, release_key
from scriptast.model.slurm_time import parse_time_limit
from scriptast.readers.lint import Finding, Report


def check_against(report: Report, env: SlurmEnv, context: str) -> list[Finding]:
    """Findings of `report`'s directives and steps that the cluster would refuse."""
    found: list[Finding] = []
    values = {d.name: (d.line, d.value) for d in report.directives}
    line, name = values.get("partition", (0, env.default_partition))
    where = f"{context}:{line}" if line else context
    partition = env.partition(name) if name else None
    if name and partition is None:
        known = [p.name for p in env.partitions]
        found.append(
            Finding(
                where,
                f"partition {name!r} is not in slurm_env.json (known: "
                f"{', '.join(known)}){did_you_mean(name, known)}",
            )
        )
    if partition is None:
        return found
    per_node = partition.gpus_per_node or gres_gpus(partition.gres)
    requested = [(values["gres"][0], values["gres"][1])] if "gres" in values else []
    requested += [(0, step.gres) for step in report.srun_steps if step.gres]
    for number, gres in requested:
        count = gres_gpus(gres)
        spot = f"{context}:{number}" if number else f"{context}: srun"
        if count is None:
            continue
        if not str(partition.gres or "").startswith("gpu:"):
            found.append(
                Finding(spot, f"--gres={gres}: partition {partition.name!r} has no GPU gres")
            )
        elif per_node is not None and count > per_node:
            found.append(
                Finding(
                    spot,
                    f"--gres={gres} asks for {count} GPUs; nodes of "
                    f"{partition.name!r} have {per_node}",
                )
            )
    if "time" in values and partition.time_limit:
        number, text = values["time"]
        try:
            wanted, limit = parse_time_limit(text or ""), parse_time_limit(partition.time_limit)
        except ModelError as error:
            found.append(Finding(f"{context}:{number}", str(error)))
        else:
            if wanted is not None and limit is not None and wanted > limit:
                found.append(
                    Finding(
                        f"{context}:{number}",
                        f"--time={text} exceeds partition "
                        f"{partition.name!r} MaxTime {partition.time_limit}",
                    )
                )
    found += _newer_options(report, env, context)
    available = env.pmix.available
    for step in report.srun_steps:
        if step.mpi and available and step.mpi not in available and step.mpi != "none":
            found.append(
                Finding(
                    f"{context}: srun",
                    f"--mpi={step.mpi} is not available (cluster offers: {', '.join(available)})",
                )
            )
    return found


def _newer_options(report: Report, env: SlurmEnv, context: str) -> list[Finding]:
    """Options the cluster's Slurm release predates (slurm_env.probe.slurm_version)."""
    version = env.probe.slurm_version if env.probe else None
    if not version or not release_key(version):
        return []
    used = [(f"{context}:{d.line}", d.name) for d in report.directives]
    used += [(f"{context}: srun", o.name) for s in report.srun_steps for o in s.extra]
    found = []
    for where, name in used:
        added = ADDED_LATER.get(name)
        if added and release_key(version) < release_key(added):
            found.append(
                Finding(
                    where,
                    f"--{name} needs Slurm {added} or later; the cluster runs {version}",
                    refused=True,
                )
            )
    return found
