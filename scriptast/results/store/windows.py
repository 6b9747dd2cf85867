"""Time windows and run filters as `results` takes them: `since 14d until 7d`, `since
2026-11-01`, `until 2026-12-01T12:00:00Z`, `7d` (= since 7d); ages in m, h, d or w."""

from __future__ import annotations

import re
import time

import msgspec

from scriptast.errors import InputError

_AGE = re.compile(r"(\d+)([mhdw])")
_UNIT = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2})?Z?)?")
WINDOW_HELP = "'since 14d until 7d', 'since 2026-11-01', 'until 7d' or '7d' (ages in m, h, d, w)"


class Window(msgspec.Struct, frozen=True):
    """[since, until) as ISO 8601 UTC times (None: open on that side)."""

    since: str | None = None
    until: str | None = None


def iso(epoch: float) -> str:
    """An epoch time as the store writes times."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def moment(text: str, now: float) -> str:
    """An age (`7d`: seven days before now) or a date as an ISO time; InputError otherwise."""
    if matched := _AGE.fullmatch(text):
        return iso(now - int(matched.group(1)) * _UNIT[matched.group(2)])
    if _DATE.fullmatch(text):
        date, _, clock = text.rstrip("Z").partition("T")
        clock = (clock + ":00:00")[:8] if clock else "00:00:00"
        return f"{date}T{clock}Z"
    raise InputError(f"{text!r} is not an age or a date: give {WINDOW_HELP}")


def parse_window(text: str, now: float | None = None) -> Window:
    """The window `text` says; InputError naming the forms it may take."""
    now = time.time() if now is None else now
    words = text.split()
    if len(words) == 1 and _AGE.fullmatch(words[0]):
        return Window(since=moment(words[0], now))
    found: dict[str, str] = {}
    while words:
        if len(words) < 2 or words[0] not in ("since", "until") or words[0] in found:
            raise InputError(f"window {text!r} does not parse: give {WINDOW_HELP}")
        found[words[0]] = moment(words[1], now)
        words = words[2:]
    if not found:
        raise InputError(f"window {text!r} does not parse: give {WINDOW_HELP}")
    window = Window(since=found.get("since"), until=found.get("until"))
    if window.since and window.until and window.since >= window.until:
        raise InputError(f"window {text!r} ends before it begins")
    return window
