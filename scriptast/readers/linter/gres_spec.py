"""A `--gres` value as Slurm's gres plugin reads it (`_get_next_job_gres` in src/common/gres.c):
comma-separated `name[:type][:count]`, the count a whole number with an optional k/m/g/t/p
multiplier, a type any word that does not begin with a digit; and what a cluster's partition
offers (its `Gres=` list in slurm_env.json), to check a request's names and types against."""

from __future__ import annotations

import re

import msgspec

_NAME = re.compile(r"[A-Za-z0-9_]+\Z")
_COUNT = re.compile(r"(\d+)([kKmMgGtTpP]?)\Z")
_MULTIPLIER = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}
_SPELLED = frozenset(
    {
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "all", "any",
    }
)  # fmt: skip
"""Types that are a count spelled out: Slurm reads `gpu:four` as one GPU of a type `four`."""


class GresAsk(msgspec.Struct, frozen=True):
    """One entry of a request: its name, its type (None: any) and its count."""

    name: str
    type: str | None
    count: int


class GresRead(msgspec.Struct, frozen=True):
    """A request's entries, or why Slurm refuses it (`problem`)."""

    asks: tuple[GresAsk, ...] = ()
    problem: str | None = None


def read_gres(value: str) -> GresRead:
    """`value` as Slurm 22.05's gres plugin reads it; `problem` says why sbatch refuses its
    syntax: `name`, `name:count`, `name:type` (a word not beginning with a digit: one of that
    type), `name:type:count`; no entry empty, no part missing, the count a number."""
    asks: list[GresAsk] = []
    for entry in value.split(","):
        if not entry:
            return GresRead(problem="an empty entry (a comma too many)")
        parts = entry.split(":")
        name = parts[0]
        if not _NAME.match(name):
            return GresRead(problem=_bad_name(entry, name))
        if len(parts) > 3 or any(not part for part in parts[1:]):
            return GresRead(problem=f"`{entry}` is not name[:type][:count]")
        gres_type, count = None, "1"
        if len(parts) == 3:
            gres_type, count = parts[1], parts[2]
        elif len(parts) == 2 and parts[1][:1].isdigit():
            count = parts[1]
        elif len(parts) == 2:
            gres_type = parts[1]
        number = _count(count)
        if number is None:
            return GresRead(problem=f"`{entry}`: {count!r} is not a count (a whole number, "
                                    "optionally with k, m, g, t or p)")  # fmt: skip
        asks.append(GresAsk(name, gres_type, number))
    return GresRead(asks=tuple(asks))


def problem(value: str, command: str) -> str | None:
    """Why `command` refuses `--gres=value` wherever it runs: its syntax, a name that no cluster
    gives its GPUs (`gpus`, `GPU`: GresTypes names them gpu), a count spelled as a type."""
    read = read_gres(value)
    if read.problem is not None:
        return f"--gres={value}: {read.problem}; {command} refuses it"
    for ask in read.asks:
        if ask.name != "gpu" and ask.name.lower().rstrip("s") == "gpu":
            return (f"--gres={value}: no gres is named {ask.name!r} (Slurm names GPUs gpu, as "
                    f"GresTypes=gpu does): --gres=gpu:N; {command} refuses it")  # fmt: skip
        if ask.type is not None and ask.type.lower() in _SPELLED:
            return (f"--gres={value}: {ask.type!r} is read as a GPU type (one GPU of type "
                    f"{ask.type!r}), not a count: write the number; {command} refuses it "
                    "where no node has that type")  # fmt: skip
    return None


def offered(gres: str | None) -> dict[str, set[str]]:
    """A partition's `Gres=` list (`gpu:8`, `gpu:h100:8(S:0-1),nic:1`, `(null)`): each name
    and the types it comes in (empty: untyped)."""
    found: dict[str, set[str]] = {}
    for entry in re.sub(r"\([^)]*\)", "", gres or "").split(","):
        parts = [p for p in entry.strip().split(":") if p]
        if not parts or parts[0] == "null":
            continue
        types = found.setdefault(parts[0], set())
        if len(parts) == 3 or (len(parts) == 2 and not parts[1][:1].isdigit()):
            types.add(parts[1])
    return found


def refused_by(value: str, gres: str | None, partition: str) -> str | None:
    """Why the partition whose `Gres=` is `gres` cannot give `--gres=value`: a name its nodes
    do not have, or a type they do not come in (sbatch: `Invalid generic resource (gres)
    specification`, or `Requested node configuration is not available`)."""
    have = offered(gres)
    for ask in read_gres(value).asks:
        if ask.count == 0:
            continue  # Slurm ignores a gres asked for with a zero count
        if ask.name not in have:
            names = ", ".join(sorted(have)) or "none"
            return (f"--gres={value}: partition {partition!r} has no gres named {ask.name!r} "
                    f"(its nodes have: {names}); sbatch refuses it")  # fmt: skip
        if ask.type is not None and ask.type not in have[ask.name]:
            types = ", ".join(sorted(have[ask.name])) or f"none: its {ask.name} gres is untyped"
            return (f"--gres={value}: partition {partition!r} has no {ask.name} of type "
                    f"{ask.type!r} (types: {types}); sbatch refuses it")  # fmt: skip
    return None


def _count(text: str) -> int | None:
    matched = _COUNT.match(text)
    if matched is None:
        return None
    return int(matched.group(1)) * _MULTIPLIER[matched.group(2).lower()]


def _bad_name(entry: str, name: str) -> str:
    if "=" in name:
        left, _, right = name.partition("=")
        return (
            f"`{entry}` is not name[:type][:count] (a gres is written {left}:{right}, not {name})"
        )
    return f"{name!r} is not a gres name (letters, digits and _; {entry!r})"
