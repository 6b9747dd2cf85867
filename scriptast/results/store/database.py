"""One connection to a results store, SQLite or PostgreSQL, through the same SQL: opened
(created and migrated when asked), a run appended in one transaction, runs and figures read."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from scriptast.contract.work_dir_names import JOB_SPEC
from scriptast.errors import StoreError
from scriptast.results.store.location import Location, default_path, masked, passwords
from scriptast.results.store.packed import pack_figures, pack_record
from scriptast.results.store.rows import SETUP, StoredRun, setup_key
from scriptast.results.store.schema import (
    KEY_COLUMNS,
    RECORD_DROPPED,
    SCHEMA_VERSION,
    migrations,
)

SERIAL = {"sqlite": "INTEGER PRIMARY KEY AUTOINCREMENT", "postgresql": "BIGSERIAL PRIMARY KEY"}
BLOB = {"sqlite": "BLOB", "postgresql": "BYTEA"}
_INSERT_RUN = (
    f"INSERT INTO scriptast_runs (run_uid, {', '.join(KEY_COLUMNS)}, setup_id) "
    f"VALUES ({', '.join('?' * (len(KEY_COLUMNS) + 2))}) "
    "ON CONFLICT (run_uid) DO NOTHING RETURNING id"
)
_INSERT_RECORD = (
    "INSERT INTO scriptast_records (run_id, record_zlib, figures_pack) VALUES (?, ?, ?)"
)
_INSERT_FIGURE = (
    "INSERT INTO scriptast_figures (run_id, name, value, unit, higher_is_better, reference, "
    "lower_bound, upper_bound, ok) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_OURS = ("scriptast_runs", "scriptast_figures", "scriptast_records", "scriptast_setups")


class Store:
    """An open results store. `sql` statements use `?` placeholders in either dialect."""

    def __init__(self, location: Location, connection: Any) -> None:
        self.location = location
        self._connection = connection
        self.migrated: list[str] = []
        """What opening it changed in an older store, for the user to read."""

    @classmethod
    def open(cls, location: Location, *, create: bool, timeout: float = 30.0) -> Store:
        """The store at `location`, at this scriptast's schema version (made or migrated when
        `create`); StoreError when it cannot be used."""
        if location.kind == "sqlite":
            store = cls(location, _sqlite(location.target, create, timeout))
        else:
            store = cls(location, _postgresql(location, timeout))
        try:
            store._prepare(create)
        except BaseException:
            store.close()
            raise
        return store

    def close(self) -> None:
        """Let go of the connection."""
        self._connection.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One transaction: all of it lands or none (SQLite takes the write lock first)."""
        with self._errors():
            if self.location.kind == "sqlite":
                self._connection.execute("BEGIN IMMEDIATE")
                try:
                    yield
                except BaseException:
                    self._connection.execute("ROLLBACK")
                    raise
                self._connection.execute("COMMIT")
            else:
                with self._connection.transaction():
                    yield

    def rows(self, sql: str, parameters: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows a query returns."""
        with self._errors():
            if self.location.kind == "sqlite":
                cursor = self._connection.execute(sql, tuple(parameters))
            else:
                # binary rows: a packed value arrives as its bytes, not as hex to decode
                cursor = self._connection.execute(self._dialect(sql), tuple(parameters),
                                                  binary=True)  # fmt: skip
            return list(cursor.fetchall())

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> Any:
        with self._errors():
            return self._connection.execute(self._dialect(sql), tuple(parameters))

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """One statement over many rows (inside a transaction)."""
        with self._errors():
            self._connection.cursor().executemany(self._dialect(sql), rows)

    def append(self, run: StoredRun) -> int | None:
        """Add one run and its figures in one transaction; its id, or None when this run was
        stored before (same run_uid)."""
        values = [run.run_uid, *(getattr(run, c) for c in KEY_COLUMNS)]
        key = setup_key([getattr(run, c) for c in SETUP])
        packed = pack_record(run.record)
        figured = pack_figures([(f.name, f.value, f.unit, f.higher_is_better)
                                for f in run.figures])  # fmt: skip
        with self.transaction():
            found = self.execute(_INSERT_RUN, [*values, setup_id(self, key)]).fetchone()
            if found is None:
                return None
            run_id = int(found[0])
            self.execute(_INSERT_RECORD, [run_id, packed, figured])
            figures = [
                (run_id, f.name, f.value, f.unit, _flag(f.higher_is_better), f.reference,
                 f.lower_bound, f.upper_bound, _flag(f.ok))
                for f in run.figures
            ]  # fmt: skip
            if figures:
                self.executemany(_INSERT_FIGURE, figures)
            return run_id

    def _dialect(self, sql: str) -> str:
        if self.location.kind == "sqlite":
            return sql
        return sql.replace("%", "%%").replace("?", "%s")

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """A driver's failure as one StoreError naming the store."""
        try:
            yield
        except sqlite3.Error as error:
            raise StoreError(f"results store {self.location.shown}: {_said(error)}") from None
        except Exception as error:
            if type(error).__module__.startswith("psycopg"):
                said = _said(error, self.location)
                raise StoreError(f"results store {self.location.shown}: {said}") from None
            raise

    def _prepare(self, create: bool) -> None:
        """Check the store is scriptast's and not newer; make or migrate it when `create`."""
        tables = set(self._tables())
        if "scriptast_schema" not in tables:
            if (self.location.kind == "sqlite" and tables) or tables & set(_OURS):
                raise StoreError(
                    f"results store {self.location.shown} is a database of another program "
                    f"(it has {', '.join(sorted(tables)[:3])} and no scriptast_schema); give "
                    "--results another path or URL"
                )
            version = 0
        else:
            found = self.rows("SELECT version FROM scriptast_schema")
            version = int(found[0][0]) if found else 0
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"results store {self.location.shown} was made by a newer scriptast (schema "
                f"{version}; this one knows {SCHEMA_VERSION}): upgrade scriptast to use it"
            )
        if version == SCHEMA_VERSION:
            return
        if not create and version == 0:
            raise StoreError(
                f"results store {self.location.shown} holds no runs yet: `scriptast run` stores "
                "each run it judges there, `scriptast results import WORK_DIR` adds recorded ones"
            )
        self._migrate(version)

    def _migrate(self, version: int) -> None:
        steps = migrations(SERIAL[self.location.kind], BLOB[self.location.kind])
        with self.transaction():
            if self.location.kind == "postgresql":  # one migrating process at a time
                self.execute("SELECT pg_advisory_xact_lock(7436510925)")
            if version == 0:
                self.execute("CREATE TABLE IF NOT EXISTS scriptast_schema (version INTEGER)")
            found = self.rows("SELECT version FROM scriptast_schema")
            current = int(found[0][0]) if found else 0  # another process may have done it
            for statements in steps[current:]:
                for statement in statements:
                    self.execute(statement)
            if 0 < current < 2:
                self.migrated += recompute_setups(self)
            if current < 3:
                packed = _pack_records(self)
                self.execute(RECORD_DROPPED)
                _key_setups(self)
                if packed:
                    self.migrated.append(f"results store {self.location.shown}: the records of "
                                         f"{packed} run(s) compressed (schema 3)")  # fmt: skip
            self.execute("DELETE FROM scriptast_schema")
            self.execute("INSERT INTO scriptast_schema (version) VALUES (?)", [SCHEMA_VERSION])

    def _tables(self) -> list[str]:
        if self.location.kind == "sqlite":
            sql = "SELECT name FROM sqlite_master WHERE type = 'table'"
        else:
            sql = "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
        return [str(row[0]) for row in self.rows(sql)]


def setup_id(store: Store, key: str) -> int:
    """The id of the setup `key` (made the first time a run of it is stored)."""
    store.execute("INSERT INTO scriptast_setups (setup_key) VALUES (?) ON CONFLICT (setup_key) "
                  "DO NOTHING", [key])  # fmt: skip
    ((found,),) = store.rows("SELECT id FROM scriptast_setups WHERE setup_key = ?", [key])
    return int(found)


def _key_setups(store: Store) -> None:
    """Each run's setup_id, from its setup columns (a store before schema 3)."""
    ids: dict[str, int] = {}
    rows = store.rows(f"SELECT id, {', '.join(SETUP)} FROM scriptast_runs")
    for start in range(0, len(rows), 1000):
        pairs = []
        for run_id, *setup in rows[start : start + 1000]:
            key = setup_key(setup)
            if key not in ids:
                ids[key] = setup_id(store, key)
            pairs.append((ids[key], run_id))
        store.executemany("UPDATE scriptast_runs SET setup_id = ? WHERE id = ?", pairs)


def _pack_records(store: Store, batch: int = 1000) -> int:
    """Each run's record (run.json's text) compressed into scriptast_records, a batch at a
    time."""
    packed = 0
    last = -1
    while True:
        rows = store.rows("SELECT id, record FROM scriptast_runs WHERE id > ? ORDER BY id "
                          f"LIMIT {int(batch)}", [last])  # fmt: skip
        if not rows:
            return packed
        ids = [int(row[0]) for row in rows]
        figures: dict[int, list[Any]] = {run_id: [] for run_id in ids}
        for run_id, name, value, unit, higher in store.rows(
            "SELECT run_id, name, value, unit, higher_is_better FROM scriptast_figures WHERE "
            f"run_id IN ({', '.join('?' * len(ids))}) ORDER BY run_id, name",
            ids,
        ):
            figures[int(run_id)].append((name, value, unit, None if higher is None
                                         else bool(higher)))  # fmt: skip
        store.executemany(_INSERT_RECORD, [(run_id, pack_record(str(text)),
                                            pack_figures(figures[int(run_id)]))
                                           for run_id, text in rows])  # fmt: skip
        packed += len(rows)
        last = int(rows[-1][0])


def recompute_setups(store: Store) -> list[str]:
    """Each stored run's setup keys worked out again from its work dir's job_spec.json, when
    that file is still there and is the one stored (its digest): the GPU count the job asked
    for (a schema 1 store kept its partition's node size), tp/pp/ep, concurrency, max batch
    size, quantization, the short model name. What changed, in words."""
    import hashlib

    import msgspec

    from scriptast.common.text_files import regular_file_bytes
    from scriptast.contract.job_spec import JobSpec
    from scriptast.results.store.rows import comparable

    rows = store.rows("SELECT id, work_dir, spec_digest, gpu_count FROM scriptast_runs")
    changed, kept = 0, 0
    before_after: dict[tuple[Any, Any], int] = {}
    for run_id, work_dir, digest, gpus in rows:
        try:
            data, _ = regular_file_bytes(os.path.join(str(work_dir), JOB_SPEC), 1 << 24,
                                         follow_links=False)  # fmt: skip
        except OSError:
            kept += 1
            continue
        if not digest or hashlib.sha256(data).hexdigest() != digest:  # only the stored one
            kept += 1
            continue
        try:
            key = comparable(msgspec.json.decode(data, type=JobSpec))
        except (msgspec.DecodeError, msgspec.ValidationError):
            kept += 1
            continue
        store.execute(
            "UPDATE scriptast_runs SET gpu_count = ?, gpus_per_node = ?, tp = ?, pp = ?, ep = ?, "
            "concurrency = ?, max_batch_size = ?, quantization = ?, model_name = ? WHERE id = ?",
            [key.gpu_count, key.gpus_per_node, key.tp, key.pp, key.ep, key.concurrency,
             key.max_batch_size, key.quantization, key.model_name, run_id],
        )  # fmt: skip
        if key.gpu_count != gpus:
            changed += 1
            pair = (gpus, key.gpu_count)
            before_after[pair] = before_after.get(pair, 0) + 1
    said = [f"results store {store.location.shown} moved to schema {SCHEMA_VERSION}: "
            f"{len(rows) - kept} run(s) keyed again from their job_spec.json "
            f"(tp, pp, ep, concurrency, max batch size, quantization), {changed} with another "
            "GPU count (the GPUs the job asked for, not its partition's node size)"]  # fmt: skip
    said += [f"  {n} run(s): GPU count {old} -> {new}" for (old, new), n in
             sorted(before_after.items(), key=lambda item: str(item[0]))]  # fmt: skip
    if kept:
        said.append(f"  {kept} run(s) kept as stored: their job_spec.json is gone or changed; "
                    "their GPU count may be their partition's node size")  # fmt: skip
    return said


def _flag(value: bool | None) -> int | None:
    return None if value is None else int(value)


def _said(error: BaseException, location: Location | None = None) -> str:
    """A driver's error in one line, never with a password in it."""
    text = str(error).strip().splitlines()
    said = masked(text[0]) if text else type(error).__name__
    for secret in passwords(location.target) if location is not None else ():
        said = said.replace(secret, "***")
    return said


def _sqlite(path: str, create: bool, timeout: float) -> sqlite3.Connection:
    if not os.path.exists(path):
        if not create:
            raise StoreError(
                f"no results store at {path}: `scriptast run` stores each run it judges "
                "there (or give --results / SCRIPTAST_RESULTS)"
            )
        folder = os.path.dirname(path)
        if os.path.lexists(folder) and not os.path.isdir(folder):
            raise StoreError(f"results store {path}: {folder} is not a folder")
        if not os.path.isdir(folder) and path != default_path():
            # a team share that is not mounted must not become a folder on the local disk
            raise StoreError(f"results store {path}: its folder {folder} does not exist "
                             "(a share not mounted?)")  # fmt: skip
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
        except OSError as error:
            raise StoreError(f"results store {path}: cannot create its folder: "
                             f"{error.strerror}") from None  # fmt: skip
    try:
        connection = sqlite3.connect(path, timeout=timeout, isolation_level=None)
        connection.execute("PRAGMA foreign_keys = ON")
    except sqlite3.Error as error:
        raise StoreError(f"results store {path}: {_said(error)}") from None
    return connection


def _postgresql(location: Location, timeout: float) -> Any:
    try:
        import psycopg
    except ImportError:
        raise StoreError(
            f"results store {location.shown}: PostgreSQL needs the optional driver: "
            "pip install 'scriptast[postgres]'"
        ) from None
    try:
        connection = psycopg.connect(location.target, connect_timeout=max(1, int(timeout)),
                                     autocommit=True)  # fmt: skip
        # a locked table (LOCK TABLE, a long import, VACUUM FULL) or a slow statement ends in
        # an error after `timeout`, never a run that waits forever
        waited = str(max(1, int(timeout * 1000)))
        for setting in ("statement_timeout", "lock_timeout"):
            connection.execute("SELECT set_config(%s, %s, false)", (setting, waited))
    except psycopg.Error as error:
        raise StoreError(f"results store {location.shown}: {_said(error, location)}") from None
    return connection
