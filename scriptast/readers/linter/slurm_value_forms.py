"""The forms Slurm 22.05 accepts for a time limit (time_str2mins), a start time (parse_time) and
a job array (bit_unfmt and the controller's checks), each checked against the real sbatch on
the loopback cluster (tests/test_verify_agrees_with_sbatch.py)."""

from __future__ import annotations

import re

_LIMIT = re.compile(r"(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?\Z")
UNLIMITED = frozenset({"-1", "infinite", "unlimited"})


def limit_minutes(value: str) -> int | None:
    """Minutes in a time limit as time_str2mins reads it (no bound on minutes or seconds:
    `0:60:0` is an hour; seconds round up), None for UNLIMITED; ValueError for a form it
    refuses."""
    if value.lower() in UNLIMITED:
        return None
    matched = _LIMIT.match(value)
    if matched is None:
        raise ValueError(value)
    days, first, second, third = matched.groups()
    if days is not None:  # D-H, D-H:M, D-H:M:S
        hours, minutes, seconds = int(first), int(second or 0), int(third or 0)
        total = int(days) * 86400 + hours * 3600 + minutes * 60 + seconds
    elif third is not None:  # H:M:S
        total = int(first) * 3600 + int(second) * 60 + int(third)
    elif second is not None:  # M:S
        total = int(first) * 60 + int(second)
    else:  # M
        total = int(first) * 60
    return -(-total // 60)


_START_WORDS = frozenset({"now", "today", "tomorrow", "midnight", "noon", "fika", "teatime"})
_RELATIVE = re.compile(r"now[+-]\d+(?:seconds?|minutes?|hours?|days?|weeks?)?\Z", re.IGNORECASE)
_CLOCK = r"(?P<h>\d{1,2}):(?P<m>\d{2})(?::(?P<s>\d{2}))?"
_TIME_OF_DAY = re.compile(rf"{_CLOCK}(?P<half>[AaPp][Mm])?\Z")
_ISO_DATE = re.compile(rf"(?P<y>\d{{4}})-(?P<mo>\d{{2}})-(?P<d>\d{{2}})(?:T(?:{_CLOCK})?)?\Z")
_US_DATE = re.compile(r"(?P<mo>\d{1,2})/(?P<d>\d{1,2})(?:/\d{2})?\Z")


def start_time_ok(value: str) -> bool:
    """Whether parse_time reads `value` (for --begin and --deadline): a word (now, today,
    tomorrow, midnight, noon, fika, teatime), now+N with a whole unit name (seconds, minutes,
    hours, days, weeks), HH:MM[:SS][AM|PM], YYYY-MM-DD[THH:MM[:SS]], MM/DD[/YY]."""
    if value.lower() in _START_WORDS or _RELATIVE.match(value):
        return True
    clock = _TIME_OF_DAY.match(value)
    if clock is not None:
        limit = 12 if clock["half"] else 23
        return _clock_ok(clock["h"], clock["m"], clock["s"], limit)
    date = _ISO_DATE.match(value)
    if date is not None:
        if not (1 <= int(date["mo"]) <= 12 and 1 <= int(date["d"]) <= 31):
            return False
        return date["h"] is None or _clock_ok(date["h"], date["m"], date["s"], 23)
    us = _US_DATE.match(value)
    return us is not None and 1 <= int(us["mo"]) <= 12 and 1 <= int(us["d"]) <= 31


def _clock_ok(hours: str, minutes: str, seconds: str | None, most_hours: int) -> bool:
    return int(hours) <= most_hours and int(minutes) < 60 and int(seconds or 0) < 60


_ARRAY_ENTRY = re.compile(r"(\d+)(?:-(\d+)(?::(\d+))?)?\Z")


def array_ok(value: str) -> bool:
    """Whether the controller takes `--array=value`: indexes, ranges that do not run down, steps
    above 0, in brackets or not, empty entries skipped (`1,,2`); what follows `%` is read as
    a number as far as it is one, so it is not judged."""
    indexes = value.split("%", 1)[0]
    if indexes.startswith("[") and indexes.endswith("]"):
        indexes = indexes[1:-1]
    entries = [entry for entry in indexes.split(",") if entry]
    if not entries:
        return False
    for entry in entries:
        matched = _ARRAY_ENTRY.match(entry)
        if matched is None:
            return False
        first, last, step = matched.groups()
        if last is not None and int(last) < int(first):
            return False
        if step is not None and int(step) == 0:
            return False
    return True
