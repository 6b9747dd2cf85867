"""Where the results store is: `--results PATH|URL`, else SCRIPTAST_RESULTS, else
$XDG_DATA_HOME/scriptast/results.db (~/.local/share when unset); a path or `sqlite:///PATH` is
SQLite, `postgresql://...` (or `postgres://`) PostgreSQL, anything else refused."""

from __future__ import annotations

import os
from typing import Literal

import msgspec

from scriptast.errors import InputError

ENV = "SCRIPTAST_RESULTS"


class Location(msgspec.Struct, frozen=True, kw_only=True):
    """A store: its kind, and the SQLite file or the PostgreSQL URL (`shown` hides a password)."""

    kind: Literal["sqlite", "postgresql"]
    target: str
    shown: str


def default_path() -> str:
    """$XDG_DATA_HOME/scriptast/results.db, ~/.local/share/scriptast/results.db without it."""
    data = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local/share")
    return os.path.join(data, "scriptast", "results.db")


def locate(given: str | None = None) -> Location:
    """The store `given` (a flag) names, else the environment's, else the default."""
    text = given or os.environ.get(ENV) or default_path()
    if text.startswith(("postgresql://", "postgres://")):
        return Location(kind="postgresql", target=text, shown=_without_password(text))
    if text.startswith("sqlite:///"):
        text = text[len("sqlite:///") :]  # sqlite:///rel/path, sqlite:////abs/path
    elif "://" in text or text.startswith("sqlite:"):
        scheme = text.split(":", 1)[0]
        raise InputError(
            f"results store {text!r}: {scheme!r} is not a store scriptast knows; give a "
            "file path, sqlite:///PATH or postgresql://USER@HOST:PORT/DB"
        )
    path = os.path.abspath(os.path.expanduser(text))
    return Location(kind="sqlite", target=path, shown=path)


def _without_password(url: str) -> str:
    scheme, rest = url.split("://", 1)
    credentials, at, host = rest.rpartition("@")
    if not at or ":" not in credentials:
        return url
    return f"{scheme}://{credentials.split(':', 1)[0]}:***@{host}"
