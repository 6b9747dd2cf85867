"""The results store keys a run by the setup it ran: the GPUs the job asked for in all (never
its partition's node size), tp/pp/ep, concurrency, max batch size, quantization, partition and
nodes besides model and workflow; runs compare only within one setup. A store of the first
schema is keyed again from each run's job_spec.json, and says what changed."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest

from scriptast.results.store.database import Store
from scriptast.results.store.location import locate
from scriptast.results.store.schema import migrations
from tests.run_site import BENCH, RunSite, record


def _bench(runs: RunSite, name: str, tp: int) -> Path:
    return runs.emit(name, workflow_type="bench", bench_cmd=f"{BENCH} --tp {tp}",
                     persistent_mode=False)  # fmt: skip


@pytest.mark.slurm
def test_one_model_at_tp_1_2_and_8_is_three_setups_and_no_false_regression(
    runs: RunSite, results_store: Path
) -> None:
    """Five tp8 runs at 1800 tokens/s are the history of tp8 only: a tp2 run at 500 and a tp1
    run at 250 are held against none of them (REGRESSED at -72% before: all were keyed as the
    node's 8 GPUs)."""
    eights = [_bench(runs, f"tp8_{n}", 8) for n in range(5)]
    done = runs.run("run", *map(str, eights), SHIM_BENCH_TPS="1800")
    assert done.returncode == 0, done.stdout + done.stderr
    for name, tp, tps in (("tp2", 2, "500"), ("tp1", 1, "250")):
        work = _bench(runs, name, tp)
        judged = runs.run("run", str(work), "--baseline", "history", SHIM_BENCH_TPS=tps)
        assert judged.returncode == 0, judged.stdout + judged.stderr
        throughput = next(f for f in record(work)["figures"] if f["name"] == "output_throughput")
        assert throughput["unchecked"] == (
            "history baseline: 0 comparable PASSED run(s) stored, it needs 5"
        )
    eighth = _bench(runs, "tp8_5", 8)
    low = runs.run("run", str(eighth), "--baseline", "history", SHIM_BENCH_TPS="1500")
    assert low.returncode == 17, low.stdout + low.stderr  # held against the tp8 runs alone
    check = next(f for f in record(eighth)["figures"] if f["name"] == "output_throughput")["check"]
    assert "on GPU x8, tp8 (runs" in check["origin"] and check["reference"] == 1800.0
    with sqlite3.connect(results_store) as connection:
        keys = sorted(set(connection.execute(
            "SELECT gpu_count, gpus_per_node, tp, pp, nodes, model, model_name FROM "
            "scriptast_runs").fetchall()))  # fmt: skip
    model, short = "meta-llama/Llama-3.1-8B-Instruct", "llama_3_1_8b_instruct"
    assert keys == [(1, 8, 1, 1, 1, model, short), (2, 8, 2, 1, 1, model, short),
                    (8, 8, 8, 1, 1, model, short)]  # fmt: skip
    compared = runs.run("results", "compare")
    assert compared.returncode == 17, compared.stdout + compared.stderr  # tp8's newest only
    lines = [line for line in compared.stdout.splitlines() if " output_throughput " in line]
    setups = {setup: line for setup in ("GPU x1 ", "GPU x2, tp2 ", "GPU x8, tp8 ")
              for line in lines if setup in line}  # fmt: skip
    assert len(setups) == 3, compared.stdout
    assert "not judged" in setups["GPU x1 "] and "not judged" in setups["GPU x2, tp2 "]
    assert setups["GPU x8, tp8 "].rstrip().endswith("REGRESSED")


def test_a_first_schema_store_is_keyed_again_from_each_runs_job_spec(
    runs: RunSite, tmp_path: Path
) -> None:
    """A schema 1 store kept a tp2 run's GPU count as its partition's 8: opened by this
    scriptast it is 2, read from the run's job_spec.json (its digest the stored one); a run
    whose job_spec.json is gone is kept as stored, and both are said."""
    work = _bench(runs, "old_tp2", 2)
    digest = hashlib.sha256((work / "job_spec.json").read_bytes()).hexdigest()
    gone = tmp_path / "gone"
    shutil.copytree(work, gone)
    shutil.rmtree(gone)
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as connection:
        for statement in migrations("INTEGER PRIMARY KEY AUTOINCREMENT", "BLOB")[0]:
            connection.execute(statement)
        connection.execute("CREATE TABLE scriptast_schema (version INTEGER)")
        connection.execute("INSERT INTO scriptast_schema VALUES (1)")
        for uid, folder in (("a", work), ("b", gone)):
            connection.execute(
                "INSERT INTO scriptast_runs (run_uid, workflow, model, partition, gpu_count, "
                "nodes, spec_digest, work_dir, verdict, submitted_at, finished_at, stored_at, "
                "record) VALUES (?, 'bench', 'meta-llama/Llama-3.1-8B-Instruct', 'batch', 8, 1, "
                "?, ?, 'PASSED', 't', '2026-12-01T00:00:00Z', 't', '{}')",
                (uid, digest, str(folder)),
            )
    with Store.open(locate(str(path)), create=False) as store:
        said = store.migrated
        rows = store.rows("SELECT run_uid, gpu_count, tp FROM scriptast_runs ORDER BY run_uid")
    assert rows == [("a", 2, 2), ("b", 8, None)]
    assert said[0].endswith("1 run(s) keyed again from their job_spec.json (tp, pp, ep, "
                            "concurrency, max batch size, quantization), 1 with another GPU count "
                            "(the GPUs the job asked for, not its partition's node size)")  # fmt: skip
    assert said[1:3] == [
        "  1 run(s): GPU count 8 -> 2",
        "  1 run(s) kept as stored: their job_spec.json is gone or changed; their GPU count may "
        "be their partition's node size",
    ]
    assert said[3].endswith(": the records of 2 run(s) compressed (schema 3)")


@pytest.mark.slurm
def test_a_store_that_does_not_open_is_said_before_anything_is_submitted(
    runs: RunSite, tmp_path: Path
) -> None:
    """A PostgreSQL server that does not answer, or a SQLite file in a folder that does not
    exist (a share not mounted), is one error line and nothing submitted, and the folder is
    never made; --no-store runs without a store."""
    from tests.ssh_server import free_port

    work = _bench(runs, "unstored", 1)
    missing = tmp_path / "share" / "team"
    for url in (f"postgresql://scriptast:secret@127.0.0.1:{free_port()}/results",
                f"sqlite:///{missing}/r.db"):  # fmt: skip
        done = runs.run("run", str(work), "--results", url, SHIM_BENCH_TPS="500")
        assert done.returncode == 2, done.stdout + done.stderr
        [line] = done.stderr.splitlines()
        assert line.startswith("error: results store ") and line.endswith(
            "nothing was submitted; give a store that opens (--results) or run with --no-store"
        )
        assert "secret" not in line
        assert not (work / "run.json").exists()
    assert not (tmp_path / "share").exists()
    done = runs.run("run", str(work), "--results", f"sqlite:///{missing}/r.db", "--no-store",
                    SHIM_BENCH_TPS="500")  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (tmp_path / "share").exists()
    assert not any("stored" in note for note in record(work).get("notes", []))
