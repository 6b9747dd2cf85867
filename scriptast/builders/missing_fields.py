"""Every required field a request lacks, named at once in one error line, with what to pass and
where the cluster's facts come from: one try tells all."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

from scriptast.contract.axes import PLACEMENTS, SLURM
from scriptast.errors import InputError

if TYPE_CHECKING:
    from scriptast.builders.category import Category

ALWAYS = ("workflow_type", "execution_scenario", "work_dir", "repo_root")
SLURM_FIELDS = ("slurm_env_file", "partition", "account")
REMOTE_FIELDS = ("remote_repo_path", "remote_work_dir")
PROBE = "`scriptast probe-slurm -o slurm_env.json` writes the cluster's partitions and accounts"


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def check_missing(merged: dict[str, Any], base: str) -> None:
    """InputError naming every required field `merged` lacks: the shared ones, the workflow's
    command, the Slurm scenario's slurm_env_file, partition and account, the remote paths and
    llm_models_root (unless work_dir's job_spec.json gives them), and a models host path."""

    def given(name: str) -> bool:
        return merged.get(name) not in (None, "")

    missing = [flag(name) for name in ALWAYS if not given(name)]
    workflow = str(merged.get("workflow_type") or "")
    scenario = str(merged.get("execution_scenario") or "")
    where = PLACEMENTS.get(scenario)
    chosen = _category(workflow)
    if chosen is not None and where is not None and chosen.only_on not in (None, where.scheduler):
        return  # the category refuses the scenario: that error says more than any missing field
    needs = chosen.needs if chosen is not None else ()
    if needs and not any(given(name) for name in needs):
        missing.append(" or ".join(flag(name) for name in needs))
    slurm = where is not None and where.scheduler == SLURM
    if slurm:
        missing += [flag(name) for name in SLURM_FIELDS if not given(name)]
    wanted = [*(REMOTE_FIELDS if where is not None and where.remote else ()), "llm_models_root"]
    lacking = [name for name in wanted if not given(name)]
    forwarded = _job_spec_fields(merged, base) if lacking else frozenset()
    missing += [flag(name) for name in lacking if name not in forwarded]
    if not _models_host_known(merged, given, slurm, base):
        missing.append("--models-path (or --checkpoint-path)")
    if not missing:
        return
    what = f" for {workflow or 'a job'} on {scenario}" if where is not None else ""
    hints = ["give each in the request file or as the flag"]
    if slurm and any(flag(name) in missing for name in SLURM_FIELDS):
        hints.append(PROBE)
    raise InputError(f"missing{what}: {', '.join(missing)}; {'; '.join(hints)}")


def _category(workflow: str) -> Category | None:
    from scriptast.builders.categories import CATEGORIES

    return CATEGORIES.get(workflow)


def _job_spec_fields(merged: dict[str, Any], base: str) -> frozenset[str]:
    """The forwarded fields work_dir's job_spec.json gives; InputError when it is there but not
    a JSON object."""
    from scriptast.builders.request.forwarded import FORWARDED, existing_job_spec

    work_dir = merged.get("work_dir")
    if not isinstance(work_dir, str) or not work_dir:
        return frozenset()
    found = existing_job_spec(os.path.join(base, os.path.expanduser(work_dir)))
    return frozenset(name for name in FORWARDED if (found or {}).get(name))


def _models_host_known(merged: dict[str, Any], given: Any, slurm: bool, base: str) -> bool:
    """A models host path can be resolved: checkpoint_path, models_path,
    env_check.default_models_repo, or slurm_env.json's mounts (an unreadable slurm_env.json
    counts as known: its own error comes first)."""
    if given("checkpoint_path") or given("models_path"):
        return True
    env_check = merged.get("env_check")
    if isinstance(env_check, dict) and env_check.get("default_models_repo"):
        return True
    path = merged.get("slurm_env_file")
    if not slurm:
        return False
    if not isinstance(path, str) or not path:
        return True
    try:
        with open(os.path.join(base, os.path.expanduser(path)), encoding="utf-8") as stream:
            data = json.load(stream)
    except (OSError, ValueError, RecursionError):
        return True
    return not isinstance(data, dict) or bool(data.get("mounts"))
