"""The accuracy tasks' `custom_config` files a remote job's submit.py reads on this machine: each
pointed at the local checkout's copy, where submit.py (which joins a relative one to --llm-src, a
cluster path) could not read it."""

from __future__ import annotations

import copy
import posixpath
from pathlib import Path
from typing import Any

from scriptast.errors import ResolveError


def localized(data: dict[str, Any], repo_root: str, cluster_repo: str) -> dict[str, Any] | None:
    """`data` with each enabled disaggregated accuracy task's custom_config made the local file
    submit.py must read (upstream's submit.py copies it into the work dir's lm_eval_configs/ and
    points the task's include_path there); None when no task names one."""
    section = data.get("accuracy")
    if not isinstance(section, dict) or not section.get("enable_accuracy_test"):
        return None
    tasks = section.get("tasks")
    if not isinstance(tasks, dict):
        return None
    changed = copy.deepcopy(data)
    found = False
    for name, task in changed["accuracy"]["tasks"].items():
        extra = task.get("extra_kwargs") if isinstance(task, dict) else None
        if not isinstance(extra, dict) or "custom_config" not in extra:
            continue
        extra["custom_config"] = _local(
            str(extra["custom_config"]), str(name), repo_root, cluster_repo
        )
        found = True
    return changed if found else None


def _local(given: str, task: str, repo_root: str, cluster_repo: str) -> str:
    """The local path of a custom_config: relative ones (to the checkout, as submit.py reads
    them) and those under the cluster checkout are the local checkout's file."""
    inside = cluster_repo.rstrip("/") + "/"
    if not posixpath.isabs(given):
        local = posixpath.join(repo_root, given)
    elif given.startswith(inside):
        local = posixpath.join(repo_root, given[len(inside) :])
    else:
        local = given
    if not Path(local).is_file():
        where = (
            f"{local} in repo_root"
            if local != given
            else f"{given}, a path neither under remote_repo_path nor on this machine"
        )
        raise ResolveError(
            f"accuracy task {task!r} has custom_config {given}, which submit.py reads on this "
            f"machine before the job goes to the cluster: there is no {where}; give a path "
            "relative to the checkout that exists in repo_root",
            field="perf_config_yaml",
        )
    return local
