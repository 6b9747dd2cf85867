"""Where the results store is: `--results PATH|URL`, else SCRIPTAST_RESULTS, else
$XDG_DATA_HOME/scriptast/results.db (~/.local/share when unset); a path or `sqlite:///PATH` is
SQLite, `postgresql://...` (or `postgres://`) PostgreSQL, anything else refused."""

from __future__ import annotations

import os
import re
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
        return Location(kind="postgresql", target=text, shown=masked(text))
    if text.startswith("sqlite:///"):
        text = text[len("sqlite:///") :]  # sqlite:///rel/path, sqlite:////abs/path
    elif "://" in text or text.startswith("sqlite:"):
        scheme = text.split(":", 1)[0]
        raise InputError(
            f"results store {masked(text)!r}: {masked(scheme)!r} is not a store scriptast "
            "knows; give a file path, sqlite:///PATH or postgresql://USER@HOST:PORT/DB"
        )
    path = os.path.abspath(os.path.expanduser(text))
    return Location(kind="sqlite", target=path, shown=path)


_QUERY_SECRET = re.compile(r"(?i)([?&](?:ssl)?password=)[^&#]*")
_KEYWORD_SECRET = re.compile(r"(?i)\b((?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'|\S*)")


def masked(url: str) -> str:
    """A store URL (or any connection text) with every password libpq takes shown as `***`:
    the user's in `user:password@`, and `password=` / `sslpassword=` in the query or as a
    keyword (a `passfile` names a file, and is shown).

    >>> masked("postgresql://alice:pw@db:5432/r?sslmode=require&password=x")
    'postgresql://alice:***@db:5432/r?sslmode=require&password=***'
    """
    scheme, separator, rest = url.partition("://")
    if not separator:
        return _KEYWORD_SECRET.sub(r"\1***", url)
    user, secret, hosts, tail = _authority(rest)
    if secret is not None:
        user += ":***"
    authority = f"{user}@{hosts}" if user else hosts
    return f"{scheme}://{authority}" + _QUERY_SECRET.sub(r"\1***", tail)


def _authority(rest: str) -> tuple[str, str | None, str, str]:
    """A URL past its `scheme://` as (user, password or None, hosts, the path and query)."""
    cut = min((rest.find(c) for c in "/?#" if c in rest), default=len(rest))
    userinfo, at, hosts = rest[:cut].rpartition("@")
    if not at:
        return "", None, hosts, rest[cut:]
    user, colon, secret = userinfo.partition(":")
    return user, secret if colon else None, hosts, rest[cut:]


def passwords(url: str) -> list[str]:
    """The passwords a store URL holds, as written and URL-decoded (to mask them wherever a
    driver's message repeats one)."""
    from urllib.parse import unquote

    found = [m.group(0).split("=", 1)[1] for m in _QUERY_SECRET.finditer(url)]
    secret = _authority(url.partition("://")[2])[1]
    if secret is not None:
        found.append(secret)
    return [word for each in found for word in {each, unquote(each)} if len(word) >= 2]
