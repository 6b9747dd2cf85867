"""What sbatch makes of an option's value in an `#SBATCH` line, as Slurm 22.05 reads it: counts
(parse_int), node counts (verify_node_count), times (time_str2mins), start times (parse_time),
memory sizes (str_to_mbytes), array specifications, and the unfilled template placeholders no
value of a name can be."""

from __future__ import annotations

import re

from scriptast.readers.linter.gres_spec import problem as gres_problem
from scriptast.readers.linter.slurm_value_forms import array_ok, limit_minutes, start_time_ok

COUNTS = frozenset(
    {
        "ntasks", "ntasks-per-node", "cpus-per-task", "ntasks-per-gpu", "mincpus",
        "ntasks-per-core", "ntasks-per-socket", "ntasks-per-tres", "cores-per-socket",
        "sockets-per-node", "threads-per-core", "cpus-per-gpu",
    }
)  # fmt: skip
"""Options sbatch reads with parse_int(positive): a whole number above 0 (`+2` too)."""
GPU_COUNTS = frozenset({"gpus", "gpus-per-node", "gpus-per-task", "gpus-per-socket"})
"""`[type:]count`."""
MEMORY = frozenset({"mem", "mem-per-cpu", "mem-per-gpu", "tmp"})
TIMES = frozenset({"time", "time-min"})
START_TIMES = frozenset({"begin", "deadline"})
COUNTED = GPU_COUNTS | {"nodes"}
"""Other options whose value is a count (with a type or a range)."""
NAMES = frozenset({"partition", "account", "qos", "reservation"})
"""Options whose value names something on the cluster: a placeholder there is never a name
(a job's own name may be anything)."""

_NODE_COUNT = re.compile(r"(\d+[kKmM]?)(?:-(\d+[kKmM]?))?\Z")
_COUNT = re.compile(r"\+?\d+\Z")
_MEMORY = re.compile(r"\d+(?:[KkMmGgTt][Bb]?)?\Z")
_GPU_COUNT = re.compile(r"(?:[A-Za-z0-9_.-]+:)?\d+\Z")
_PLACEHOLDER = re.compile(
    r"[{}<>]|\bX{3,}\b|XXX|\b(?:YOUR_?\w*|\w*_HERE|CHANGE_?ME|TODO|FIXME|"
    r"PARTITION|ACCOUNT|QUEUE|PROJECT|ALLOCATION|NODES|NTASKS|QOS|RESERVATION|JOB_?NAME)\b"
)


def value_problem(name: str, value: str, command: str = "sbatch") -> str | None:
    """Why sbatch (or srun) refuses `--name=value` (or takes it for other than its writer meant), or
    None. `name` is the option's own name (an old spelling or a prefix already resolved);
    `command` is sbatch or srun, which read values alike; a `$` srun is handed was kept from
    the shell by quotes, on purpose (`--export='ALL,A=$B'`), so only sbatch's is a mistake."""
    if "$" in value and command == "sbatch":
        return (
            f"--{name}={value}: sbatch does not expand variables in #SBATCH lines; "
            "write the value, or pass it on the sbatch command line"
        )
    placeholder = _placeholder(name, value, command)
    if placeholder is not None:
        return placeholder
    if re.match(r"(?:[\w.-]+:)?-\d", value) and (name in COUNTS or name in COUNTED):
        return f"--{name}={value}: a negative count; {command} refuses it"
    if name in COUNTS and not _COUNT.match(value):
        return f"--{name}={value}: not a whole number; {command} refuses it"
    if name in COUNTS and int(value) == 0:
        return f"--{name}=0: not a count above 0; {command} refuses it"
    if name == "nodes":
        return _node_count_problem(value, command)
    if name in GPU_COUNTS and not _GPU_COUNT.match(value):
        return f"--{name}={value}: not a GPU count ([type:]N); {command} refuses it"
    if name == "gres" and re.search(r":-\d", value):
        return f"--gres={value}: a negative count; {command} refuses it"
    if name == "gres":
        return gres_problem(value, command)
    if name in MEMORY and not _MEMORY.match(value):
        return (
            f"--{name}={value}: not a memory size (a whole number with K, M, G or T); "
            f"{command} refuses it"
        )
    if name in TIMES and not _limit_ok(value):
        return (
            f"--{name}={value}: not a Slurm time (minutes, MM:SS, HH:MM:SS, D-HH, "
            f"D-HH:MM:SS or UNLIMITED); {command} refuses it"
        )
    if name in START_TIMES and not start_time_ok(value):
        return (
            f"--{name}={value}: not a time Slurm reads (now+N[seconds|minutes|hours|days|weeks], "
            f"today, tomorrow, HH:MM[:SS][AM|PM], YYYY-MM-DD[THH:MM[:SS]], MM/DD[/YY]); "
            f"{command} refuses it"
        )
    if name == "array" and not array_ok(value):
        return f"--array={value}: not an array specification (0-9, 1,3,5, 0-15:4, %N); {command} refuses it"  # noqa: E501
    return None


def _placeholder(name: str, value: str, command: str) -> str | None:
    """A template's unfilled slot (`{ partition }`, `<account>`, `NODES`, `XXX`)."""
    checked = name in NAMES or name in COUNTS or name in MEMORY or name in TIMES
    checked = checked or name in START_TIMES or name in ("nodes", "array") or name in GPU_COUNTS
    if checked and _PLACEHOLDER.search(value):
        return (
            f"--{name}={value}: an unfilled template placeholder; fill it in ({command} refuses "
            "it, or asks the cluster for something of that name)"
        )
    return None


def _limit_ok(value: str) -> bool:
    try:
        limit_minutes(value)
    except ValueError:
        return False
    return True


def _node_count_problem(value: str, command: str) -> str | None:
    """verify_node_count: N or MIN-MAX (with k or m), MAX not below MIN."""
    matched = _NODE_COUNT.match(value)
    if matched is None:
        return f"--nodes={value}: not a node count (N or MIN-MAX); {command} refuses it"
    low, high = (_scaled(part) for part in matched.groups(default=matched.group(1)))
    if high < low:
        return f"--nodes={value}: the most nodes is below the fewest; {command} refuses it"
    return None


def _scaled(count: str) -> int:
    factor = {"k": 1024, "m": 1024 * 1024}.get(count[-1].lower(), 1)
    return int(count.rstrip("kKmM")) * factor
