"""The store's tables, the same in SQLite and PostgreSQL, and the steps that bring an older
store to this version (`scriptast_schema` holds the version a store is at)."""

from __future__ import annotations

from scriptast.results.store.rows import RunKeys

SCHEMA_VERSION = 4
KEY_COLUMNS = RunKeys.__struct_fields__
"""The columns of a run besides its id, its uid and its record (run.json), in table order."""


def migrations(serial: str, blob: str) -> list[list[str]]:
    """migrations(...)[n] takes a store from version n to n + 1; `serial` is the dialect's
    auto-numbered primary key, `blob` its bytes type. Version 3's scriptast_records is filled
    from the runs' `record` (the Store does it, in Python), which is then dropped
    (RECORD_DROPPED)."""
    return [
        [
            f"""CREATE TABLE scriptast_runs (
                id {serial},
                run_uid TEXT NOT NULL UNIQUE,
                workflow TEXT NOT NULL, model TEXT, partition TEXT, gpu_type TEXT,
                gpu_count INTEGER, nodes INTEGER, image TEXT, trtllm_commit TEXT,
                spec_digest TEXT, user_name TEXT, cluster TEXT, work_dir TEXT NOT NULL,
                job_id TEXT, verdict TEXT NOT NULL, submitted_at TEXT NOT NULL,
                finished_at TEXT NOT NULL, headline_name TEXT, headline_value DOUBLE PRECISION,
                headline_unit TEXT, stored_at TEXT NOT NULL, record TEXT NOT NULL)""",
            """CREATE TABLE scriptast_figures (
                run_id INTEGER NOT NULL REFERENCES scriptast_runs (id),
                name TEXT NOT NULL, value DOUBLE PRECISION NOT NULL, unit TEXT NOT NULL,
                higher_is_better INTEGER, reference DOUBLE PRECISION,
                lower_bound DOUBLE PRECISION, upper_bound DOUBLE PRECISION, ok INTEGER)""",
            "CREATE INDEX scriptast_runs_finished ON scriptast_runs (finished_at)",
            "CREATE INDEX scriptast_runs_key ON scriptast_runs "
            "(model, gpu_type, gpu_count, workflow, finished_at)",
            "CREATE INDEX scriptast_runs_verdict ON scriptast_runs (verdict, finished_at)",
            "CREATE INDEX scriptast_runs_commit ON scriptast_runs (trtllm_commit)",
            "CREATE INDEX scriptast_figures_name ON scriptast_figures (name, run_id)",
            "CREATE INDEX scriptast_figures_run ON scriptast_figures (run_id)",
        ],
        [  # the setup keys (issue: a tp2 run was keyed by its partition's 8 GPUs)
            *(
                f"ALTER TABLE scriptast_runs ADD COLUMN {column} {kind}"
                for column, kind in (
                    ("model_name", "TEXT"),
                    ("gpus_per_node", "INTEGER"),
                    ("tp", "INTEGER"),
                    ("pp", "INTEGER"),
                    ("ep", "INTEGER"),
                    ("concurrency", "INTEGER"),
                    ("max_batch_size", "INTEGER"),
                    ("quantization", "TEXT"),
                )
            ),
            "CREATE INDEX scriptast_runs_setup ON scriptast_runs "
            "(model, workflow, gpu_count, tp, pp, finished_at)",
        ],
        [  # run.json compressed (a bench run's 8 KB record in about 1.1 KB), in a table of its
            # own: the runs' table, which every query scans, stays a few hundred bytes a run;
            # beside it the run's figures in one packed value, which a comparison of windows
            # reads a run at a time (a row a figure costs it three times as much)
            f"""CREATE TABLE scriptast_records (
                run_id INTEGER PRIMARY KEY REFERENCES scriptast_runs (id),
                record_zlib {blob} NOT NULL, figures_pack {blob} NOT NULL)""",
            # each setup once (rows.setup_key), and each run's: a history comparison reads a
            # setup's newest runs from the index instead of every run
            f"CREATE TABLE scriptast_setups (id {serial}, setup_key TEXT NOT NULL UNIQUE)",
            "ALTER TABLE scriptast_runs ADD COLUMN setup_id INTEGER "
            "REFERENCES scriptast_setups (id)",
            "CREATE INDEX scriptast_runs_by_setup ON scriptast_runs (setup_id, finished_at, id)",
        ],
        [  # the sweep a run was a task of (its file's sha256) and its job array
            "ALTER TABLE scriptast_runs ADD COLUMN sweep TEXT",
            "ALTER TABLE scriptast_runs ADD COLUMN array_id TEXT",
            "CREATE INDEX scriptast_runs_sweep ON scriptast_runs (sweep, finished_at)",
            "CREATE INDEX scriptast_runs_array ON scriptast_runs (array_id)",
        ],
    ]


RECORD_DROPPED = "ALTER TABLE scriptast_runs DROP COLUMN record"
"""After version 3's step has packed each record into scriptast_records."""
