"""`scriptast run` and `watch` store every run they judge, on the real loopback Slurm: the
run's keys (the checkout's commit, job_spec's digest, ...), its figures and verdict, in SQLite
or PostgreSQL; a store that cannot take it never costs the verdict, and `results import` adds
the run later. The TRT-LLM commit is read from the checkout's .git as `git rev-parse HEAD`
says it."""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import threading
from pathlib import Path

import pytest

from scriptast.results.store.origin import head_commit
from tests.postgres_server import Server
from tests.run_site import RunSite, record
from tests.test_run_measured import EVAL, UPSTREAM_EVAL

pytestmark = pytest.mark.slurm
GOOD = {"SHIM_EVAL_ACCURACY": "74.52", **UPSTREAM_EVAL}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True, env={"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b",
                                           "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@b",
                                           "HOME": str(repo)})  # fmt: skip
    return done.stdout.strip()


def committed(repo: Path) -> str:
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "checkout")
    return git(repo, "rev-parse", "HEAD")


def local(path: str) -> bytes | None:
    try:
        return Path(path).read_bytes()
    except OSError:
        return None


def test_the_commit_is_read_as_git_rev_parse_says(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "f").write_text("x")
    head = committed(repo)
    assert head_commit(str(repo), local) == head
    git(repo, "pack-refs", "--all")  # the branch only in packed-refs now
    assert not (repo / ".git/refs/heads/main").exists()
    assert head_commit(str(repo), local) == head
    git(repo, "worktree", "add", "-q", "--detach", str(tmp_path / "tree"))
    assert head_commit(str(tmp_path / "tree"), local) == head  # .git is a file there
    git(repo, "checkout", "-q", "--detach")
    assert head_commit(str(repo), local) == git(repo, "rev-parse", "HEAD")
    (repo / ".git/HEAD").write_text("ref: refs/../../../etc/passwd\n")
    assert head_commit(str(repo), local) is None
    assert head_commit(str(tmp_path / "no-repo"), local) is None


def test_a_judged_run_is_stored_with_its_keys_and_figures(
    runs: RunSite, results_store: Path
) -> None:
    head = committed(runs.site.repo)
    work = runs.emit("good", workflow_type="eval", eval_cmd=EVAL, persistent_mode=False)
    done = runs.run("run", str(work), **GOOD)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"note: stored in the results store {results_store} as run 1" in done.stdout
    with sqlite3.connect(results_store) as connection:
        (row,) = connection.execute(
            "SELECT workflow, model, partition, gpu_count, nodes, trtllm_commit, spec_digest, "
            "verdict, job_id, work_dir, headline_name, headline_value FROM scriptast_runs"
        ).fetchall()
        figures = connection.execute("SELECT name, value, reference, ok FROM scriptast_figures")
        assert figures.fetchall() == [("gsm8k accuracy", 74.52, 74.2, 1)]
    digest = hashlib.sha256((work / "job_spec.json").read_bytes()).hexdigest()
    assert row == ("eval", "meta-llama/Llama-3.1-8B-Instruct", "batch", 1, 1, head, digest,
                   "PASSED", record(work)["job_id"], str(work), "gsm8k accuracy", 74.52)  # fmt: skip
    listed = runs.run("results", "list")
    assert listed.returncode == 0 and "gsm8k accuracy 74.52 %" in listed.stdout


def test_a_store_that_cannot_take_the_run_never_costs_the_verdict(
    runs: RunSite, tmp_path: Path
) -> None:
    """The store opened when the job was submitted; by the verdict its folder is a regular
    file (a share gone): PASSED, exit 0, the record in run.json says it was not stored and how
    to add it; `results import` adds it once."""
    blocked = tmp_path / "a-file"
    work = runs.emit("unstored", workflow_type="eval", eval_cmd=EVAL, persistent_mode=False)
    store = str(blocked / "results.db")
    submitted = runs.run("run", "--detach", str(work), SCRIPTAST_RESULTS=store, **GOOD)
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr
    blocked.write_text("")
    done = runs.run("watch", str(work), SCRIPTAST_RESULTS=store)
    assert done.returncode == 0, done.stdout + done.stderr
    found = record(work)
    assert found["verdict"] == "PASSED"
    (note,) = [n for n in found["notes"] if n.startswith("not stored")]
    assert note == (
        f"not stored: results store {blocked / 'results.db'}: {blocked} is not a folder; "
        f"the record stays in run.json: add it later with 'scriptast results "
        f"import {work}'"
    )
    good = tmp_path / "good.db"
    imported = runs.run("results", "import", str(work), "--results", str(good))
    assert (imported.returncode, imported.stdout) == (0, f"{work}: stored as run 1\n")
    again = runs.run("results", "import", str(work), "--results", str(good))
    assert again.stdout == f"{work}: stored before (the same run)\n"
    shown = runs.run("results", "show", "1", "--results", str(good))
    assert "gsm8k accuracy 74.52 (threshold 71.00, reference 74.20, margin +3.52): ok" in (
        shown.stdout
    )


def test_a_locked_store_never_costs_the_verdict(runs: RunSite, results_store: Path) -> None:
    """Another writer holds the store's lock past the run's end: the run waits its 10 s, says
    the store was locked, and keeps its verdict."""
    from scriptast.results.store.database import Store
    from scriptast.results.store.location import locate

    Store.open(locate(str(results_store)), create=True).close()
    holder = sqlite3.connect(results_store, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    release = threading.Timer(40, holder.execute, ["ROLLBACK"])
    release.start()
    try:
        work = runs.emit("locked", workflow_type="eval", eval_cmd=EVAL, persistent_mode=False)
        done = runs.run("run", str(work), **GOOD)
    finally:
        release.cancel()
        holder.execute("ROLLBACK")
        holder.close()
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"not stored: results store {results_store}: database is locked" in done.stdout


def test_a_run_is_stored_in_postgresql_and_watch_stores_what_it_judges(
    runs: RunSite, postgres: Server
) -> None:
    url = postgres.fresh()
    work = runs.emit("team", workflow_type="eval", eval_cmd=EVAL, persistent_mode=False)
    submitted = runs.run("run", "--detach", str(work), "--results", url, **GOOD)
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr
    watched = runs.run("watch", str(work), "--results", url)
    assert watched.returncode == 0, watched.stdout + watched.stderr
    assert "note: stored in the results store" in watched.stdout
    listed = runs.run("results", "list", "--results", url)
    lines = listed.stdout.splitlines()
    assert len(lines) == 2 and "PASSED" in lines[1] and "gsm8k accuracy 74.52" in lines[1]
    again = runs.run("watch", str(work), "--results", url)  # already judged: not stored again
    assert again.returncode == 0
    assert len(runs.run("results", "list", "--results", url).stdout.splitlines()) == 2


@pytest.mark.parametrize("url", ["mysql://db/x", "sqlite:"])
def test_a_store_url_that_is_not_one_is_refused_before_anything_runs(
    runs: RunSite, url: str
) -> None:
    work = runs.emit("refused", workflow_type="eval", eval_cmd=EVAL, persistent_mode=False)
    done = runs.run("run", str(work), "--results", url)
    assert done.returncode == 2 and done.stderr.startswith("error: results store ")
    assert not (work / "run.json").exists()


def test_a_figure_is_held_against_its_history(runs: RunSite, results_store: Path) -> None:
    """Five comparable bench runs at 5000 tokens/s are stored; a sixth at 4000 with
    `--baseline history` is REGRESSED against their median, naming the runs; asking for a
    baseline of six runs says five are stored and does not judge."""
    from tests.run_site import BENCH

    bench = {"workflow_type": "bench", "bench_cmd": f"{BENCH} --tp 1", "persistent_mode": False}
    history = [runs.emit(f"h{n}", **bench) for n in range(5)]
    done = runs.run("run", *map(str, history), SHIM_BENCH_TPS="5000")
    assert done.returncode == 0, done.stdout + done.stderr
    low = runs.emit("low", **bench)
    judged = runs.run("run", str(low), "--baseline", "history", SHIM_BENCH_TPS="4000")
    assert judged.returncode == 17, judged.stdout + judged.stderr
    found = record(low)
    assert found["verdict"] == "REGRESSED"
    check = next(f for f in found["figures"] if f["name"] == "output_throughput")["check"]
    assert (check["reference"], check["lower"], check["ok"]) == (5000.0, 4750.0, False)
    assert check["origin"] == (
        "history: median of the last 5 PASSED bench runs of meta-llama/Llama-3.1-8B-Instruct "
        "on GPU x1 (runs 5, 4, 3, 2, 1), tolerance 5%"
    )
    assert "output_throughput 4000.00 tokens/s (threshold 4750.00, reference 5000.00, " \
        "margin -750.00): REGRESSED" in judged.stdout  # fmt: skip
    short = runs.emit("short", **bench)
    said = runs.run("run", str(short), "--baseline", "history", "--baseline-runs", "7",
                    SHIM_BENCH_TPS="4000")  # fmt: skip
    assert said.returncode == 0, said.stdout + said.stderr  # nothing to judge it by: PASSED
    unchecked = next(f for f in record(short)["figures"] if f["name"] == "output_throughput")
    assert unchecked["unchecked"] == (
        "history baseline: 5 comparable PASSED run(s) stored, it needs 7"
    )
    loose = runs.emit("loose", **bench)
    ok = runs.run("run", str(loose), "--baseline", "history", "--tolerance", "25%",
                  SHIM_BENCH_TPS="4000")  # fmt: skip
    assert ok.returncode == 0, ok.stdout + ok.stderr


def test_the_request_asks_for_a_history_baseline(runs: RunSite) -> None:
    """`baseline: history` in the request: job_spec says so and run holds the figures against
    the history without the flag (here with none stored: said, not judged)."""
    from tests.run_site import BENCH

    work = runs.emit("asked", workflow_type="bench", bench_cmd=f"{BENCH} --tp 1",
                     persistent_mode=False, baseline="history")  # fmt: skip
    import json

    assert json.loads((work / "job_spec.json").read_text())["measures"]["baseline"] == "history"
    done = runs.run("run", str(work), SHIM_BENCH_TPS="4000")
    assert done.returncode == 0, done.stdout + done.stderr
    throughput = next(f for f in record(work)["figures"] if f["name"] == "output_throughput")
    assert throughput["unchecked"] == (
        "history baseline: 0 comparable PASSED run(s) stored, it needs 5"
    )


def test_an_unreachable_postgresql_store_never_costs_the_verdict(runs: RunSite) -> None:
    """The server stops answering while the job runs (`run --detach`, then `watch`): the
    verdict stands and the note hides the password."""
    from tests.ssh_server import free_port

    url = f"postgresql://scriptast:secret@127.0.0.1:{free_port()}/results"  # nothing listens
    work = runs.emit("away", workflow_type="eval", eval_cmd=EVAL, persistent_mode=False)
    submitted = runs.run("run", "--detach", str(work), "--results", url, **GOOD)
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr
    done = runs.run("watch", str(work), "--results", url)
    assert done.returncode == 0, done.stdout + done.stderr
    (note,) = [n for n in record(work)["notes"] if n.startswith("not stored")]
    assert note.startswith(
        f"not stored: results store postgresql://scriptast:***@127.0.0.1:{url.split(':')[3]}"
    )
    assert "secret" not in done.stdout + json_text(work)


def json_text(work: Path) -> str:
    return (work / "run.json").read_text()
