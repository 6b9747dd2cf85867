"""A throw-away PostgreSQL server for the results store's tests: the one .ci/run started
(SCRIPTAST_TEST_POSTGRES_PORT), else one of tests/postgres/server.sh (Debian's initdb and pg_ctl
as an unprivileged user, a temporary folder, a free loopback port) for the session; one fresh
database a test."""

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


SERVER_SH = Path(__file__).resolve().parent / "postgres" / "server.sh"
ENV = "SCRIPTAST_TEST_POSTGRES_PORT"
"""A server .ci/run started (tests/postgres/server.sh): the tests use it rather than their own."""


def available() -> bool:
    """Debian's server binaries are here, and its user when this runs as root."""
    have = bool(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    return have and (os.geteuid() != 0 or _user_exists())


@contextmanager
def throwaway_server(durable: bool = False) -> Iterator[Server]:
    """A server in a new temporary folder on a free loopback port, stopped and removed after
    (`durable`: with fsync, as a real server runs; the tests go without). Not under pytest's
    folder: its parents are root's alone, and the server runs as an unprivileged user."""
    folder = tempfile.mkdtemp(prefix="scriptast-postgres-")
    try:
        started = subprocess.run(["bash", str(SERVER_SH), "up", folder,
                                  *(["durable"] if durable else [])],
                                 capture_output=True, text=True, timeout=180)  # fmt: skip
        if started.returncode != 0:
            raise AssertionError(f"server.sh up failed:\n{started.stderr}")
        try:
            yield Server(int(started.stdout.split()[-1]))
        finally:
            subprocess.run(["bash", str(SERVER_SH), "down", folder], capture_output=True,
                           timeout=60)  # fmt: skip
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres() -> Iterator[Server]:
    if os.environ.get(ENV):
        yield Server(int(os.environ[ENV]))
        return
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
