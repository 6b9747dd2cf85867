"""A throw-away PostgreSQL server for the results store's tests: Debian's initdb and pg_ctl
run as an unprivileged user (postgres, as the package makes it) in a temporary folder, on a
free loopback port; one fresh database a test; stopped by pg_ctl at the session's end."""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.ssh_server import free_port

USER = "postgres"


class Server:
    """A running server: its port, and new empty databases on it."""

    def __init__(self, port: int) -> None:
        self.port = port
        self._numbers = itertools.count(1)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://scriptast@127.0.0.1:{self.port}/{database}"

    def fresh(self) -> str:
        """A new empty database's URL."""
        import psycopg

        name = f"results_{os.getpid()}_{next(self._numbers)}"
        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f"CREATE DATABASE {name}")
        return self.url(name)


def _binaries() -> str | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    return os.path.dirname(found[-1]) if found else None


def _as_user(argv: list[str]) -> list[str]:
    """Run as the unprivileged user when root (initdb refuses root)."""
    return ["runuser", "-u", USER, "--", *argv] if os.geteuid() == 0 else argv


def available() -> bool:
    """Debian's server binaries are here, and its user when this runs as root."""
    return _binaries() is not None and (os.geteuid() != 0 or _user_exists())


@contextmanager
def throwaway_server(durable: bool = False) -> Iterator[Server]:
    """A server in a new temporary folder on a free loopback port, stopped and removed after
    (`durable`: with fsync, as a real server runs; the tests go without)."""
    binaries = _binaries()
    assert binaries is not None
    # not under pytest's folder: its parents are root's alone, and the server runs as USER
    folder = Path(tempfile.mkdtemp(prefix="scriptast-postgres-"))
    data = folder / "data"
    if os.geteuid() == 0:
        shutil.chown(folder, USER, USER)
    try:
        subprocess.run(_as_user([f"{binaries}/initdb", "-D", str(data), "--auth=trust",
                                 "--username=scriptast", "--encoding=UTF8", "--no-sync"]),
                       check=True, capture_output=True, timeout=120)  # fmt: skip
        port = free_port()
        options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1"
        if not durable:
            options += " -c fsync=off"
        subprocess.run(_as_user([f"{binaries}/pg_ctl", "-D", str(data), "-o", options,
                                 "-l", str(folder / "server.log"), "-w", "start"]),
                       check=True, capture_output=True, timeout=120)  # fmt: skip
        try:
            yield Server(port)
        finally:
            subprocess.run(_as_user([f"{binaries}/pg_ctl", "-D", str(data), "-m", "immediate",
                                     "-w", "stop"]), capture_output=True, timeout=60)  # fmt: skip
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres() -> Iterator[Server]:
    if not available():
        message = "Debian's postgresql (initdb, pg_ctl and its postgres user) is needed"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message}; .ci/run installs it")
        pytest.skip(message)
    with throwaway_server() as server:
        yield server


def _user_exists() -> bool:
    try:
        pwd.getpwnam(USER)
    except KeyError:
        return False
    return True
