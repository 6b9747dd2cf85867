"""The option names sbatch, srun and pyxis accept (Slurm 22.05, what the emitter writes), the
options later releases added (with the release that added each, for reading scripts written for
newer clusters), and the value checks they share."""

from __future__ import annotations

import re

from scriptast.errors import ModelError, ScriptastError

COMMON_OPTIONS = frozenset(
    [
        "account",
        "acctg-freq",
        "bb",
        "bbf",
        "begin",
        "chdir",
        "cluster-constraint",
        "clusters",
        "comment",
        "constraint",
        "container",
        "contiguous",
        "core-spec",
        "cores-per-socket",
        "cpu-freq",
        "cpus-per-gpu",
        "cpus-per-task",
        "deadline",
        "delay-boot",
        "dependency",
        "distribution",
        "error",
        "exclude",
        "exclusive",
        "export",
        "extra-node-info",
        "gid",
        "gpu-bind",
        "gpu-freq",
        "gpus",
        "gpus-per-node",
        "gpus-per-socket",
        "gpus-per-task",
        "gres",
        "gres-flags",
        "hint",
        "hold",
        "input",
        "job-name",
        "licenses",
        "mail-type",
        "mail-user",
        "mcs-label",
        "mem",
        "mem-bind",
        "mem-per-cpu",
        "mem-per-gpu",
        "mincpus",
        "network",
        "nice",
        "no-kill",
        "nodefile",
        "nodelist",
        "nodes",
        "ntasks",
        "ntasks-per-core",
        "ntasks-per-gpu",
        "ntasks-per-node",
        "ntasks-per-socket",
        "open-mode",
        "output",
        "overcommit",
        "oversubscribe",
        "partition",
        "power",
        "prefer",
        "priority",
        "profile",
        "propagate",
        "qos",
        "quiet",
        "reboot",
        "reservation",
        "signal",
        "sockets-per-node",
        "spread-job",
        "switches",
        "thread-spec",
        "threads-per-core",
        "time",
        "time-min",
        "tmp",
        "uid",
        "use-min-nodes",
        "verbose",
        "wckey",
    ]
)
SBATCH_ONLY = frozenset(
    [
        "array",
        "batch",
        "get-user-env",
        "kill-on-invalid-dep",
        "export-file",
        "ignore-pbs",
        "no-requeue",
        "parsable",
        "requeue",
        "test-only",
        "wait",
        "wait-all-nodes",
        "wrap",
    ]
)
SRUN_ONLY = frozenset(
    [
        "cpu-bind",
        "epilog",
        "exact",
        "het-group",
        "immediate",
        "jobid",
        "kill-on-bad-exit",
        "label",
        "mpi",
        "multi-prog",
        "no-allocate",
        "overlap",
        "prolog",
        "pty",
        "quit-on-interrupt",
        "relative",
        "resv-ports",
        "send-libs",
        "slurmd-debug",
        "task-epilog",
        "task-prolog",
        "test-only",
        "unbuffered",
        "wait",
    ]
)
PYXIS_OPTIONS = frozenset(
    [
        "container-image",
        "container-mounts",
        "container-workdir",
        "container-name",
        "container-save",
        "container-mount-home",
        "no-container-mount-home",
        "container-remap-root",
        "no-container-remap-root",
        "container-entrypoint",
        "no-container-entrypoint",
        "container-writable",
        "container-readonly",
        "container-env",
    ]
)
SBATCH_OPTIONS = COMMON_OPTIONS | SBATCH_ONLY | PYXIS_OPTIONS
SRUN_OPTIONS = COMMON_OPTIONS | SRUN_ONLY | PYXIS_OPTIONS
BASE_RELEASE = "22.05"
"""The release whose options SBATCH_OPTIONS and SRUN_OPTIONS hold (checked against its sbatch and
srun in the test suite)."""
ADDED_LATER: dict[str, str] = {
    "tres-per-task": "23.02",  # Slurm 23.02 changelog: "Add --tres-per-task to salloc/sbatch/srun"
    "segment": "24.05",  # 24.05: "Add --segment to job allocation to be used in topology/block"
    "oom-kill-step": "24.11",  # 24.11: TaskPluginParam=OOMKillStep and the job's oom_kill_step
}
"""Options of sbatch and srun (both) added after BASE_RELEASE, and the release that added each."""
SBATCH_OPTIONS_ANY = SBATCH_OPTIONS | frozenset(ADDED_LATER)
SRUN_OPTIONS_ANY = SRUN_OPTIONS | frozenset(ADDED_LATER)


def release_key(release: str) -> tuple[int, ...]:
    """`23.02` -> (23, 2), `22.05.8` -> (22, 5, 8), for comparing releases."""
    return tuple(int(part) for part in release.split(".") if part.isdigit())


SRUN_SHORT_WITH_VALUE = {
    "-A": "account", "-b": "begin", "-c": "cpus-per-task", "-C": "constraint",
    "-d": "dependency", "-D": "chdir", "-e": "error", "-G": "gpus", "-i": "input",
    "-J": "job-name", "-L": "licenses", "-m": "distribution", "-M": "clusters",
    "-n": "ntasks", "-N": "nodes", "-o": "output", "-p": "partition", "-q": "qos",
    "-r": "relative", "-S": "core-spec", "-t": "time", "-T": "threads", "-w": "nodelist",
    "-W": "wait", "-x": "exclude",
}  # fmt: skip
"""srun's one-letter options that take a value (srun(1) of Slurm 22.05)."""


INT_OPTIONS = frozenset(
    {"nodes", "ntasks", "ntasks-per-node", "cpus-per-task", "ntasks-per-gpu", "mincpus"}
)
FLAG_OPTIONS = frozenset(
    [
        "contiguous",
        "hold",
        "no-requeue",
        "overcommit",
        "parsable",
        "quiet",
        "requeue",
        "test-only",
        "use-min-nodes",
        "verbose",
        "wait",
        "label",
        "unbuffered",
        "overlap",
        "exact",
        "no-kill",
    ]
)
GRES = re.compile(r"[a-z][a-z0-9_]*(?::[A-Za-z0-9_.-]+)?:([0-9]+)\Z")
GPU_GRES = re.compile(r"gpu(?::[A-Za-z0-9_.-]+)?:(\d+)")
"""The GPU entry of a gres list: `gpu[:type]:N`, perhaps followed by `(IDX:...)`."""
MPI_PLUGIN = re.compile(r"(none|pmi2|cray_shasta|pmix(?:_v[0-9]+)?)\Z")


def check_gres(value: str) -> None:
    """Raise ModelError unless value is `name[:type]:N` with N >= 1, e.g. `gpu:4`."""
    match = GRES.match(value)
    if not match or int(match.group(1)) < 1:
        raise ModelError(
            f"gres {value!r} is not of the form name[:type]:N with N >= 1 (e.g. gpu:4)",
            field="gres",
        )


def check_mpi_plugin(value: str) -> None:
    """Raise ModelError unless value names an srun MPI plugin."""
    if not MPI_PLUGIN.match(value):
        raise ModelError(
            f"mpi plugin {value!r} is not one of none, pmi2, cray_shasta, pmix, pmix_vN",
            field="mpi",
        )


def check_positive(value: int | None, what: str, error: type[ScriptastError] = ModelError) -> None:
    """Raise `error` (a ModelError for model values) unless value is None or an int >= 1."""
    if value is None:
        return
    if isinstance(value, bool) or value < 1:
        raise error(f"{what} must be >= 1, got {value!r}", field=what)


def gres_gpus(gres: str | None) -> int | None:
    """N of the GPU entry of a gres list such as `gpu:8`, `gpu:h100:8(IDX:0-7)` or
    `craynetwork:4,gpu:4`; None for `(null)` or a list without one."""
    for entry in (gres or "").split(","):
        match = GPU_GRES.match(entry.strip())
        if match:
            return int(match.group(1))
    return None
