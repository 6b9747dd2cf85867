"""`scriptast run` never reads, writes or truncates through a link planted in the work dir, never
blocks on a FIFO at a log path, shows a job's text as data (its terminal escapes escaped, so it
cannot repaint its verdict), and keeps no more of a line than it reads."""

from __future__ import annotations

import json
import os
import tracemalloc
from pathlib import Path

import pytest

from scriptast.executor.log_tail import MOST_HELD, LineSink, LogTail
from scriptast.executor.log_verdict import MOST_KEPT_LINE, LogScanner
from scriptast.executor.shown import ShownStream, shown
from tests.run_site import RunSite, record
from tests.shim_recorder import Shims
from tests.site import Site

SECRET = "s3cr3t-token-of-another-user"


def _docker_site(site: Site, tmp_path: Path) -> RunSite:
    fake = tmp_path / "pkgs" / "tensorrt_llm"  # what the docker payload checks it can import
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    return RunSite(site=site, cluster=None, shims=Shims(tmp_path / "shims"),
                   env={"PYTHONPATH": str(fake.parent)})  # fmt: skip


def _docker_job(runs: RunSite, name: str, command: str) -> Path:
    fields = {"execution_scenario": "local_docker", "workflow_type": "custom",
              "custom_cmd": command, "partition": None, "account": None,
              "slurm_env_file": None, "env_check": {"gpus_per_node": 8}}  # fmt: skip
    return runs.emit(name, **fields)


def test_a_link_planted_at_the_log_is_neither_truncated_nor_read(
    site: Site, tmp_path: Path
) -> None:
    """The docker log path is a link to another user's file: the job's log is created anew
    beside it (the link entry replaced), the file keeps its bytes, and they are never shown
    or recorded."""
    runs = _docker_site(site, tmp_path)
    work = _docker_job(runs, "linked", "echo from-the-job")
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET + "\n")
    log = Path(json.loads((work / "job_spec.json").read_text())["log_file"])
    log.symlink_to(secret)
    done = runs.run("run", str(work))
    assert done.returncode == 0, done.stderr
    assert secret.read_text() == SECRET + "\n"
    assert not log.is_symlink() and "from-the-job" in log.read_text()
    assert SECRET not in done.stdout + done.stderr
    assert SECRET not in (work / "run.json").read_text()


def test_a_jobs_escape_sequences_are_shown_escaped(site: Site, tmp_path: Path) -> None:
    """A job that clears the screen, moves the cursor and prints a verdict of its own over the
    real one: the terminal sees `\\x1b` as text, live and in the summary."""
    runs = _docker_site(site, tmp_path)
    forged = r"printf '\033[2J\033[HPASSED\r\033]0;title\007\n'; exit 3"
    work = _docker_job(runs, "escapes", forged)
    done = runs.run("run", str(work))
    assert done.returncode == 10, done.stderr
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout and "\r" not in done.stdout
    assert "\\x1b[2J\\x1b[HPASSED\\x0d\\x1b]0;title\\x07" in done.stdout
    summary = done.stdout[done.stdout.index("FAILED  ") :]
    assert "\\x1b[2J" in summary  # the last lines, escaped too
    assert any("\\x1b[2J" in line for line in record(work)["last_lines"])


def test_a_forged_run_record_cannot_repaint_the_verdict(site: Site, tmp_path: Path) -> None:
    """`watch` of a judged run prints what run.json holds: its lines escaped as well."""
    runs = _docker_site(site, tmp_path)
    work = _docker_job(runs, "forged", "exit 4")
    assert runs.run("run", str(work)).returncode == 10
    found = record(work)
    found["last_lines"] = ["\x1b[1A\x1b[2KPASSED  all good"]
    (work / "run.json").write_text(json.dumps(found))
    shown_again = runs.run("watch", str(work))
    assert "\x1b" not in shown_again.stdout
    assert "\\x1b[1A\\x1b[2KPASSED  all good" in shown_again.stdout


def test_a_fifo_or_a_link_at_a_log_path_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "job.out"
    os.mkfifo(fifo)
    seen: list[bytes] = []
    tail = LogTail(str(fifo), LogScanner(str(fifo), [], []), seen.append)
    assert tail.read() == 0 and tail.refused is not None and "FIFO" in tail.refused
    target = tmp_path / "private"
    target.write_text(SECRET)
    link = tmp_path / "job.err"
    link.symlink_to(target)
    linked = LogTail(str(link), LogScanner(str(link), [], []), seen.append)
    linked.close()
    assert linked.refused == "a symbolic link: never read through" and seen == []


def test_a_line_without_end_costs_no_more_than_its_kept_start() -> None:
    """200 MB without a newline, then the script's exit line: the scanner holds at most
    MOST_KEPT_LINE of it (and its memory stays flat), and reads the line after it."""
    scanner = LogScanner("job.out", ["finished"], [])
    chunk = b"x" * (1 << 20)
    tracemalloc.start()
    try:
        for _ in range(200):
            scanner.feed(chunk)
            assert len(scanner._partial) <= MOST_KEPT_LINE
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * (1 << 20), peak
    scanner.feed(b"tail of the long line\nCustom finished with exit code 0\n")
    assert scanner.exit_code == 0 and scanner.line_number == 2
    assert scanner.last_lines[0] == "x" * 400 + " \u2026 (cut)"
    assert scanner.cut_lines == [1]


@pytest.mark.parametrize("split", [1, 4, 8])
def test_a_pattern_past_a_long_lines_kept_head_is_found_across_chunks(split: int) -> None:
    """A failure pattern and a hang line far past the kept head of an endless line, each split
    by a chunk boundary, are still found: the line is searched as it passes, not kept."""
    scanner = LogScanner("job.out", [], ["Traceback"])
    chunk = b"x" * (1 << 20)
    for _ in range(3):
        scanner.feed(chunk)
    text = b" Traceback (most recent call last) Hang detected after 300 seconds."
    scanner.feed(text[:split])
    scanner.feed(text[split:] + b"x" * 10)
    assert len(scanner._partial) <= MOST_KEPT_LINE
    scanner.feed(b"\nnext line\n")
    [hit] = scanner.failure_hits
    assert hit.pattern == "Traceback" and hit.line_number == 1 and hit.line.endswith("(cut)")
    assert scanner.hang_hit is not None and scanner.hang_hit.line_number == 1
    assert scanner.line_number == 2 and scanner.last_lines[-1] == "next line"


def test_the_prefixed_stream_cuts_a_line_without_end() -> None:
    written: list[bytes] = []
    sink = LineSink(written.append, "[job] ")
    for _ in range(8):
        sink(b"y" * MOST_HELD)
    assert len(sink._partial) <= MOST_HELD and sum(map(len, written)) >= 7 * MOST_HELD
    assert all(piece.startswith(b"[job] ") for piece in written)


@pytest.mark.parametrize(
    ("chunks", "expected"),
    [
        ([b"a\r", b"\nb\n"], b"a\nb\n"),  # CRLF split across two reads
        ([b"progress 10%\rprogress 20%\n"], b"progress 10%\\x0dprogress 20%\n"),
        ([b"\xc2", b"\x9b31m red\n"], b"\\x9b31m red\n"),  # a C1 CSI split in its UTF-8
        ([b"tab\tand\x00nul\n"], b"tab\tand\\x00nul\n"),
    ],
)
def test_the_live_stream_escapes_controls_across_reads(
    chunks: list[bytes], expected: bytes
) -> None:
    stream = ShownStream()
    out = b"".join(stream(chunk) for chunk in chunks) + stream.flush()
    assert out == expected
    assert shown("ok\x1b[0m") == "ok\\x1b[0m"


def test_a_cluster_log_that_is_a_link_is_never_read_through(tmp_path: Path) -> None:
    """The follower a remote log gets (here through the local transport, the same commands)
    refuses a link at the log path: nothing of its target is handed on, not even at the end."""
    import time

    from scriptast.executor.log_tail import RemoteLogTail
    from scriptast.transports.local import LocalTransport

    secret = tmp_path / "id_rsa"
    secret.write_text(SECRET + "\n")
    log = tmp_path / "job_42.out"
    log.symlink_to(secret)
    seen: list[bytes] = []
    sink = LineSink(seen.append, None)
    tail = RemoteLogTail(str(log), LogScanner(str(log), [], []), sink, LocalTransport())
    deadline = time.monotonic() + 10
    while tail.refused is None and time.monotonic() < deadline:
        tail.read()
        time.sleep(0.1)
    tail.close()
    assert tail.refused == "a symbolic link: never read through"
    assert seen == [] and tail.offset == 0


def test_a_rewound_log_is_read_once_its_new_run_has_written_it(tmp_path: Path) -> None:
    """A requeued job seen running before its batch step truncated the log: the earlier run's
    lines are not read into the new scanner; once the file is written anew, it is read from its
    start; and a log written anew before the rewind is read whole when the job ends."""
    log = tmp_path / "job.out"
    log.write_text("first-run\nfirst-run again\n")
    seen: list[bytes] = []
    tail = LogTail(str(log), LogScanner(str(log), [], []), seen.append)
    tail.read()
    fresh = LogScanner(str(log), [], [])
    tail.rewind(fresh)
    assert tail.read() == 0 and list(fresh.last_lines) == []  # still the earlier run's
    with open(log, "w") as stream:  # the new run truncates it and writes
        stream.write("second-run\n")
    tail.read()
    assert list(fresh.last_lines) == ["second-run"]
    ended = LogScanner(str(log), [], [])
    tail.rewind(ended)  # written anew before the rewind, and never again
    tail.close()
    assert list(ended.last_lines) == ["second-run"]
