"""Slurm time limits: parse every form sbatch accepts into minutes (None for no limit)."""

from __future__ import annotations

import re

from scriptast.errors import ModelError

_FORMS = (
    re.compile(r"(?P<m>\d+)\Z"),
    re.compile(r"(?P<m>\d+):(?P<s>\d+)\Z"),
    re.compile(r"(?P<h>\d+):(?P<m>\d+):(?P<s>\d+)\Z"),
    re.compile(r"(?P<d>\d+)-(?P<h>\d+)\Z"),
    re.compile(r"(?P<d>\d+)-(?P<h>\d+):(?P<m>\d+)\Z"),
    re.compile(r"(?P<d>\d+)-(?P<h>\d+):(?P<m>\d+):(?P<s>\d+)\Z"),
)
UNLIMITED = frozenset({"unlimited", "infinite"})
TIME_FORMS = (
    "minutes, minutes:seconds, hours:minutes:seconds, days-hours, "
    "days-hours:minutes or days-hours:minutes:seconds"
)


def parse_time_limit(text: str) -> int | None:
    """Minutes in a Slurm time limit (seconds round up), None for UNLIMITED.

    >>> parse_time_limit("02:00:00"), parse_time_limit("1-00:30"), parse_time_limit("90")
    (120, 1470, 90)
    """
    value = text.strip()
    if value.lower() in UNLIMITED:
        return None
    for form in _FORMS:
        match = form.match(value)
        if match:
            parts = {k: int(v) for k, v in match.groupdict().items() if v is not None}
            if parts.get("s", 0) >= 60 or ("h" in parts and parts.get("m", 0) >= 60):
                break
            seconds = (
                parts.get("d", 0) * 86400
                + parts.get("h", 0) * 3600
                + parts.get("m", 0) * 60
                + parts.get("s", 0)
            )
            minutes = -(-seconds // 60)
            if minutes < 1:
                break
            return minutes
    raise ModelError(
        f"time limit {text!r} is not a Slurm time ({TIME_FORMS}), e.g. 02:00:00", field="time"
    )
