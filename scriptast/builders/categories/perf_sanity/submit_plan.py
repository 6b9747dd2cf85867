"""submit.py's call as typed values, the config copy it must find first, and the config rules it
needs: the runtime mode, the eval-fallback accuracy config, the config a test id names."""

from __future__ import annotations

import posixpath
from pathlib import Path

from scriptast.builders.categories.perf_sanity.submit_call import PerfSubmit
from scriptast.builders.resolution.job import ResolvedJob
from scriptast.errors import ResolveError

LAUNCH_SH = "slurm_launch.sh"
RUN_SH = "slurm_run.sh"
INSTALL_SH = "slurm_install.sh"
LOCAL_SCRIPTS = "jenkins/scripts/perf/local"
SUBMIT_WRITES = (frozenset({LAUNCH_SH, "test_list.txt"}), frozenset({"lm_eval_configs"}))
"""What submit.py writes into the folders it is given (upstream's and the fixture's): the launch
script, `test_list.txt`, and the `lm_eval_configs/` folder of copied accuracy configs."""
CONFIG_FOLDERS = {
    "aggregated": "tests/scripts/perf-sanity/aggregated",
    "disaggregated": "tests/scripts/perf-sanity/disaggregated",
}
DRAFT = "jenkins/scripts/perf/{mode}/slurm_launch_draft.sh"
PRECHECK = "tests/scripts/perf-sanity/cache_transceiver_precheck"


def cluster_name_of(job: ResolvedJob) -> tuple[str | None, str]:
    """The cluster name submit.py keys its UCX settings on, and where it comes from: the
    request, else slurm_env.json's cluster_name (probe-slurm reads it from ClusterName)."""
    if job.request.cluster_name:
        return job.request.cluster_name, "input cluster_name"
    recorded = job.cluster.env.cluster_name if job.cluster else None
    if recorded:
        return recorded, "slurm_env.json cluster_name"
    return None, "unknown: submit.py's per-cluster UCX settings fall back to its default"


def precheck_path(job: ResolvedJob) -> str:
    """Where submit.py finds precheck_config for a remote job: the local checkout (it looks
    under --llm-src, a cluster path)."""
    return posixpath.join(job.repo_root, PRECHECK)


def config_of_test_id(repo_root: str, test_id: str) -> tuple[str, str | None, str, str | None]:
    """The local config a perf-sanity test id names, its server name, runtime mode and
    benchmark mode: a remote job carries the config itself (submit.py reads it here)."""
    inside = test_id.rsplit("[", 1)[-1].split("]", 1)[0] if "[" in test_id else ""
    labels = inside.split("-")
    benchmark_mode: str | None = None
    if len(labels) > 2 and "disagg" in labels[0]:
        mode, stem, name = "disaggregated", "-".join(labels[2:]), None
        benchmark_mode = labels[1]
    elif len(labels) > 2 and "aggr" in labels[0] and labels[1] != "ctx_only":
        mode, stem, name = "aggregated", labels[1], "-".join(labels[2:])
    else:
        raise ResolveError(
            f"test id {test_id!r} does not name a perf-sanity config as "
            "[aggr-<config>-<server>] or [disagg-<mode>-<config>]; pass --perf-config-yaml",
            field="test_cmd",
        )
    relative = f"{CONFIG_FOLDERS[mode]}/{stem}.yaml"
    config = local_file(repo_root, relative, "the perf-sanity config")
    return config, name, mode, benchmark_mode


def local_file(repo_root: str, relative: str, what: str) -> str:
    path = posixpath.join(repo_root, relative)
    if not Path(path).is_file():
        raise ResolveError(f"{what} {path} does not exist in repo_root", field=what)
    return path


_PASSABLE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:@+=,-")
_EXTRA_PASSABLE = {"image": frozenset("#"), "test_list": frozenset("[]")}
_REQUEST_FIELD = {
    "partition": "partition",
    "account": "account",
    "job_name": "model_name",
    "image": "container_image",
    "work_dir": "work_dir",
    "llm_src": "repo_root",
    "llm_models_root": "llm_models_root",
    "launch_sh": "work_dir",
    "time": "time_limit",
    "test_list": "test_cmd",
    "config_file": "perf_config_yaml",
    "test_name": "perf_test_name",
    "benchmark_mode": "perf_config_yaml",
    "draft_launch_sh": "repo_root",
    "install_mode": "install_mode",
    "wheel_path": "wheel_path",
}
"""Each value submit.py receives, and the request field it comes from. submit.py puts them
into `#SBATCH` lines, single- and double-quoted exports, an unquoted export and the
`srunArgs=( "..." )` array as they are (its f-strings quote nothing)."""


def check_passable(submit: PerfSubmit, remote: bool) -> None:
    """Every value submit.py receives must keep its meaning in the launch script it writes:
    letters, digits and `. _ - / : @ + = ,` only (an image may hold enroot's `#`, a test list
    its brackets); a `%` in the work dir would be read by Slurm in `#SBATCH -o`."""
    for name, field in _REQUEST_FIELD.items():
        value = getattr(submit, name)
        if not value:
            continue
        allowed = _PASSABLE | _EXTRA_PASSABLE.get(name, frozenset())
        bad = next((char for char in value if char not in allowed), None)
        if bad is not None:
            source = "remote_" + field if remote and field in ("work_dir", "repo_root") else field
            source = "remote_repo_path" if source == "remote_repo_root" else source
            why = (
                "Slurm would read it as a pattern in #SBATCH -o, so job_spec could not name the "
                "log file"
                if bad == "%"
                else "it writes the value into its launch script unquoted, where it would "
                "change the script"
            )
            raise ResolveError(
                f"{source} {value!r} cannot go to submit.py ({bad!r}: {why}); use only "
                "letters, digits and . _ - / : @ + = ,",
                field=source,
            )
    for mount in submit.mounts:
        for path in (mount.source, mount.target):
            bad = next((char for char in path if char not in _PASSABLE), None)
            if bad is not None:
                raise ResolveError(
                    f"mount path {path!r} cannot go to submit.py: {bad!r} would change the "
                    "launch script it writes; use only letters, digits and . _ - / : @ + = ,",
                    field="models_path",
                )
