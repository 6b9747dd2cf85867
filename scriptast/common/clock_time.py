"""A duration written as a clock, `[days-][hours:]minutes:seconds` (how Slurm prints a job's
elapsed and time left, and how `--run-timeout` may be given), in seconds."""

from __future__ import annotations

import re

_CLOCK = re.compile(r"^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)$")


def clock_seconds(text: str) -> float | None:
    """Seconds in `[days-][hours:]minutes:seconds`; None for UNLIMITED and anything else."""
    matched = _CLOCK.match(text.strip())
    if not matched:
        return None
    days, hours, minutes, seconds = (int(g) if g else 0 for g in matched.groups())
    return float(((days * 24 + hours) * 60 + minutes) * 60 + seconds)
