"""Check a script's #SBATCH directives and srun steps against a cluster's slurm_env.json:
the partition and account exist, GPUs fit a node, the time fits the partition, the MPI plugin
exists, and the cluster's Slurm release has every option used (the batch scripts a here-document
holds are checked the same way)."""

from __future__ import annotations

import msgspec

from scriptast.common.suggest import did_you_mean
from scriptast.contract.slurm_env import SlurmEnv
from scriptast.model.slurm_options import gres_gpus, release_key
from scriptast.readers.linter.gres_spec import refused_by
from scriptast.readers.linter.lint import Finding, Report
from scriptast.readers.linter.slurm_cli import option_named, table
from scriptast.readers.linter.slurm_value_forms import limit_minutes
from scriptast.readers.linter.srun_words import SrunUse


def check_against(report: Report, env: SlurmEnv, context: str) -> list[Finding]:
    """Findings of `report`'s directives and steps (and those of the batch scripts its
    here-documents hold) that the cluster would refuse."""
    found = _check_one(report, env, context, 0, "")
    for embedded in report.embedded:
        shift = embedded.first_line - 1
        found += _check_one(embedded.report, env, context, shift, f"in {embedded.name}: ")
    return found


def _check_one(
    report: Report, env: SlurmEnv, context: str, shift: int, whose: str
) -> list[Finding]:
    """Each component of the job (one, or those of a heterogeneous job) on its own; the srun
    steps with the first; the options used against the release."""
    components = sorted({d.component for d in report.directives}) or [0]
    found: list[Finding] = []
    for component in components:
        values = {
            d.name: (d.line + shift, d.value) for d in report.directives if d.component == component
        }
        steps = report.srun_steps if component == components[0] else ()
        found += _check_component(values, steps, env, context)
    found += _newer_options(report, env, context, shift)
    return [msgspec.structs.replace(f, message=whose + f.message) for f in found]


def _check_component(
    values: dict[str, tuple[int, str | None]],
    steps: tuple[SrunUse, ...],
    env: SlurmEnv,
    context: str,
) -> list[Finding]:
    found: list[Finding] = []
    found += _account(values, env, context)
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
    requested += [(0, step.gres) for step in steps if step.gres]
    for number, gres in requested:
        count = gres_gpus(gres)
        spot = f"{context}:{number}" if number else f"{context}: srun"
        if count is not None and not str(partition.gres or "").startswith("gpu:"):
            found.append(
                Finding(spot, f"--gres={gres}: partition {partition.name!r} has no GPU gres")
            )
            continue
        refused = refused_by(gres, partition.gres, partition.name) if gres else None
        if refused is not None:
            found.append(Finding(spot, refused))
            continue
        if count is None:
            continue
        if per_node is not None and count > per_node:
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
            wanted, limit = limit_minutes(text or ""), limit_minutes(partition.time_limit)
        except ValueError:
            wanted = limit = None  # a time sbatch cannot read is lint's finding
        if wanted is not None and limit is not None and wanted > limit:
            found.append(
                Finding(
                    f"{context}:{number}",
                    f"--time={text} exceeds partition "
                    f"{partition.name!r} MaxTime {partition.time_limit}",
                )
            )
    available = env.pmix.available
    for step in steps:
        if step.mpi and available and step.mpi not in available and step.mpi != "none":
            found.append(
                Finding(
                    f"{context}: srun",
                    f"--mpi={step.mpi} is not available (cluster offers: {', '.join(available)})",
                )
            )
    return found


def _account(
    values: dict[str, tuple[int, str | None]], env: SlurmEnv, context: str
) -> list[Finding]:
    """An `--account` the cluster's probe did not list for the user."""
    if "account" not in values or not env.accounts:
        return []
    line, name = values["account"]
    if name is None or name in env.accounts:
        return []
    return [
        Finding(
            f"{context}:{line}",
            f"account {name!r} is not one of the user's accounts in slurm_env.json "
            f"({', '.join(env.accounts)}){did_you_mean(name, list(env.accounts))}",
        )
    ]


def _newer_options(report: Report, env: SlurmEnv, context: str, shift: int) -> list[Finding]:
    """Options the cluster's Slurm release (slurm_env.probe.slurm_version) predates or has
    dropped, by Slurm's option table."""
    version = env.probe.slurm_version if env.probe else None
    if not version or not release_key(version):
        return []
    used = [("sbatch", f"{context}:{d.line + shift}", d.name) for d in report.directives]
    used += [("srun", f"{context}: srun", o) for s in report.srun_steps for o, _ in s.options]
    found = []
    running = release_key(version)
    for command, where, name in used:
        option = option_named(command, name)
        if option is None:
            continue
        since, until = option.since, option.until
        if since and _predates(running, since):
            after = (
                f"a Slurm release after {since[:-1]}"
                if since.endswith("+")
                else f"Slurm {since} or later"
            )
            older = _taken_for(command, name)
            said = f"--{name} needs {after}; the cluster runs {version}"
            if older is not None:
                said += f", whose {command} takes it for --{older}"
            found.append(Finding(where, said, refused=older is None))
        elif until and running[:2] >= release_key(until)[:2]:
            found.append(
                Finding(
                    where,
                    f"--{name} is gone from {command} since Slurm {until}; the cluster "
                    f"runs {version}",
                    refused=True,
                )
            )
    return found


def _taken_for(command: str, name: str) -> str | None:
    """The one older option whose name `--name` starts (getopt_long then reads it as that:
    22.05 takes `--extra` for `--extra-node-info`), or None."""
    older = {
        o.canonical
        for o in table(command).longs
        if o.since is None and o.plugin is None and o.name.startswith(name)
    }
    return older.pop() if len(older) == 1 else None


def _predates(running: tuple[int, ...], since: str) -> bool:
    """Whether release `running` lacks an option added in `since` (`22.05+`: some release after
    the 22.05 series)."""
    if since.endswith("+"):
        return running[:2] <= release_key(since.rstrip("+"))[:2]
    return running < release_key(since)
