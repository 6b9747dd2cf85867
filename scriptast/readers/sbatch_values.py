"""What sbatch makes of an option's value in an `#SBATCH` line, as Slurm 22.05 reads it: counts
(parse_int), node counts (verify_node_count), times (time_str2mins), start times (parse_time),
memory sizes (str_to_mbytes), array specifications, and the unfilled template placeholders no
value of a name can be."""

from __future__ import annotations

import re

COUNTS = frozenset(
    {
        "ntasks", "ntasks-per-node", "cpus-per-task", "ntasks-per-gpu", "mincpus",
        "ntasks-per-core", "ntasks-per-socket", "ntasks-per-tres", "cores-per-socket",
        "sockets-per-node", "threads-per-core", "cpus-per-gpu",
    }
)  # fmt: skip
"""Options sbatch reads with parse_int: a whole number, nothing after it."""
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

_NODE_COUNT = re.compile(r"\d+[kKmM]?(?:-\d+[kKmM]?)?\Z")
_MEMORY = re.compile(r"\d+(?:[KkMmGgTt][Bb]?)?\Z")
_GPU_COUNT = re.compile(r"(?:[A-Za-z0-9_.-]+:)?\d+\Z")
_ARRAY_LIST = r"\d+(?:-\d+(?::\d+)?)?(?:,\d+(?:-\d+(?::\d+)?)?)*"
_ARRAY = re.compile(rf"(?:{_ARRAY_LIST}|\[{_ARRAY_LIST}\])(?:%\d+)?\Z")
"""`0-15:4,20%3`; bit_unfmt also takes the list in brackets."""
_SLURM_TIME = re.compile(r"(?:(?:\d+-)?\d+(?::\d+){0,2}|-1|INFINITE|UNLIMITED)\Z", re.IGNORECASE)
"""time_str2mins' forms; like Slurm, no bound on the minutes or seconds (`0:60:0` is an hour)."""
_START_WORDS = frozenset(
    {"now", "today", "tomorrow", "midnight", "noon", "elevenses", "fika", "teatime"}
)
_NOW_PLUS = re.compile(r"now\+\d+(?:[a-z]+)?\Z", re.IGNORECASE)
_DATE_TIME = re.compile(r"[0-9][0-9:/.\-T]*(?:[AaPp][Mm])?\Z")
_PLACEHOLDER = re.compile(
    r"[{}<>]|\bX{3,}\b|XXX|\b(?:YOUR_?\w*|\w*_HERE|CHANGE_?ME|TODO|FIXME|"
    r"PARTITION|ACCOUNT|QUEUE|PROJECT|ALLOCATION|NODES|NTASKS|QOS|RESERVATION|JOB_?NAME)\b"
)


def value_problem(name: str, value: str, command: str = "sbatch") -> str | None:
    """Why sbatch (or srun) refuses `--name=value` (or takes it for other than its writer meant), or
    None. `name` is the option's own name (an old spelling or a prefix already resolved);
    `command` is sbatch or srun, which read values alike."""
    if "$" in value:
        return (
            f"--{name}={value}: sbatch does not expand variables in #SBATCH lines; "
            "write the value, or pass it on the sbatch command line"
        )
    placeholder = _placeholder(name, value, command)
    if placeholder is not None:
        return placeholder
    if re.match(r"(?:[\w.-]+:)?-\d", value) and (name in COUNTS or name in COUNTED):
        return f"--{name}={value}: a negative count; {command} refuses it"
    if name in COUNTS and not value.isdigit():
        return f"--{name}={value}: not a whole number; {command} refuses it"
    if name == "nodes" and not _NODE_COUNT.match(value):
        return f"--nodes={value}: not a node count (N or MIN-MAX); {command} refuses it"
    if name in GPU_COUNTS and not _GPU_COUNT.match(value):
        return f"--{name}={value}: not a GPU count ([type:]N); {command} refuses it"
    if name == "gres" and re.search(r":-\d", value):
        return f"--gres={value}: a negative count; {command} refuses it"
    if name in MEMORY and not _MEMORY.match(value):
        return (
            f"--{name}={value}: not a memory size (a whole number with K, M, G or T); "
            f"{command} refuses it"
        )
    if name in TIMES and not _SLURM_TIME.match(value):
        return (
            f"--{name}={value}: not a Slurm time (minutes, MM:SS, HH:MM:SS, D-HH, "
            f"D-HH:MM:SS or UNLIMITED); {command} refuses it"
        )
    if name in START_TIMES and not _start_time(value):
        return (
            f"--{name}={value}: not a time Slurm reads (now+N[unit], today, tomorrow, "
            f"HH:MM[:SS], YYYY-MM-DD[THH:MM[:SS]], MM/DD[/YY]); {command} refuses it"
        )
    if name == "array" and not _ARRAY.match(value):
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


def _start_time(value: str) -> bool:
    lowered = value.lower()
    if lowered in _START_WORDS or _NOW_PLUS.match(value):
        return True
    return bool(_DATE_TIME.match(value)) and any(char.isdigit() for char in value)
