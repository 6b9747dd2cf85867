"""All or nothing: work_dir is the new set of files or as it was, on errors, signals, kills and
concurrent emits; job_spec.json (written last) names every file with its sha256."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scriptast.pipeline.emit_job import generate, write_outputs
from scriptast.workdir.files import TEMP_PREFIX, WriteError
from scriptast.workdir.journal import JOURNAL_PREFIX
from scriptast.workdir.write import Interrupted, work_dir_held, write_all
from tests.site import Site

BENCH = "trtllm-bench --model org/{model} throughput --tp 2"


def snapshot_dir(folder: Path) -> dict[str, bytes]:
    """Every entry of a folder (hidden ones too) with its bytes; directories as b'<dir>'."""
    if not folder.exists():
        return {}
    return {p.name: (b"<dir>" if p.is_dir() else p.read_bytes()) for p in sorted(folder.iterdir())}


def bench_output(site: Site, model: str = "Llama-7B", **fields: Any) -> Any:
    request = site.request(workflow_type="bench", bench_cmd=BENCH.format(model=model), **fields)
    return generate(request, home=str(site.home))


def consistent(work: Path) -> dict[str, Any]:
    """job_spec.json's `files` digests match the files on disk, and nothing else is there."""
    spec = json.loads((work / "job_spec.json").read_text())
    for name, digest in spec["files"].items():
        assert hashlib.sha256((work / name).read_bytes()).hexdigest() == digest, name
    assert sorted(p.name for p in work.iterdir()) == sorted([*spec["files"], "job_spec.json"])
    return spec  # type: ignore[no-any-return]


def test_a_written_set_is_consistent_and_replaces_the_earlier_one(site: Site) -> None:
    work = site.work("job")
    write_outputs(bench_output(site, "Llama-7B"))
    assert consistent(work)["model_name"] == "llama_7b"
    write_outputs(bench_output(site, "Qwen-7B"))
    spec = consistent(work)
    # the earlier emit's script is gone with it: the folder holds one request's files
    assert spec["model_name"] == "qwen_7b"
    assert not (work / "llama_7b_bench.slurm").exists()


def test_a_file_changed_by_hand_is_not_removed_as_stale(site: Site) -> None:
    work = site.work("job")
    write_outputs(bench_output(site, "Llama-7B"))
    (work / "llama_7b_bench.slurm").write_text("#!/bin/bash\n# edited\n")
    write_outputs(bench_output(site, "Qwen-7B"))
    assert (work / "llama_7b_bench.slurm").read_text().endswith("# edited\n")


def test_a_directory_in_the_way_writes_nothing(site: Site) -> None:
    work = site.work("job")
    write_outputs(bench_output(site, "Llama-7B"))
    before = snapshot_dir(work)
    (work / "job_spec.json").unlink()
    (work / "job_spec.json").mkdir()
    before = snapshot_dir(work)
    with pytest.raises(WriteError, match="a directory is in the way"):
        write_outputs(bench_output(site, "Qwen-7B"))
    assert snapshot_dir(work) == before


def test_a_directory_in_the_way_through_the_cli_is_one_line(site: Site) -> None:
    work = site.work("job")
    work.mkdir(parents=True)
    (work / "job_spec.json").mkdir()
    result = run_cli(site, "Llama-7B")
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: cannot write ")
    assert snapshot_dir(work) == {"job_spec.json": b"<dir>"}


def test_a_failure_halfway_through_the_renames_restores_everything(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = site.work("job")
    write_outputs(bench_output(site, "Llama-7B", model_name="same"))
    before = snapshot_dir(work)
    output = bench_output(site, "Qwen-7B", model_name="same")
    real_replace = os.replace
    calls: list[str] = []

    def failing_replace(source: Any, target: Any) -> None:
        calls.append(str(target))
        if str(target).endswith("job_spec.json") and TEMP_PREFIX in str(source):
            raise OSError(28, "No space left on device")
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(WriteError, match="No space left on device"):
        write_outputs(output)
    assert any(c.endswith(".slurm") for c in calls)  # the script had been replaced already
    assert snapshot_dir(work) == before


def test_an_emit_writes_its_journal_note_in_place_and_syncs_nothing(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The note guards against the emitting process dying (kill -9), which the page cache
    outlives, as do the files the note guards (not synced either): an emit pays no fsync, and
    writes the note in place (no temporary, no rename), whole before the first rename."""
    work = site.work("job")
    write_outputs(bench_output(site, "Llama-7B", model_name="same"))
    output = bench_output(site, "Qwen-7B", model_name="same")
    synced: list[int] = []
    renamed: list[str] = []
    notes_seen: list[str] = []
    real_replace = os.replace

    def noting_replace(source: Any, target: Any) -> None:
        renamed.append(Path(str(target)).name)
        if not notes_seen:
            notes_seen.extend(p.read_text() for p in work.glob(f"{JOURNAL_PREFIX}*"))
        real_replace(source, target)

    monkeypatch.setattr(os, "fsync", synced.append)
    monkeypatch.setattr(os, "replace", noting_replace)
    write_outputs(output)
    assert synced == []
    assert not any(name.startswith(JOURNAL_PREFIX) for name in renamed)
    assert len(notes_seen) == 1 and json.loads(notes_seen[0])["type"] == "renames"
    assert consistent(work)["model_name"] == "same"
    assert not list(work.glob(f"{JOURNAL_PREFIX}*"))  # removed once the set is whole


def test_a_note_cut_short_by_its_process_dying_is_removed_unread(site: Site) -> None:
    """A note is written before anything is changed: one cut short (its process died while
    writing it) means nothing is to be put back, and the next emit removes it."""
    work = site.work("job")
    write_outputs(bench_output(site, "Llama-7B"))
    before = consistent(work)
    (work / f"{JOURNAL_PREFIX}999999.json").write_text('{"type": "renames", "renames": [["')
    write_outputs(bench_output(site, "Llama-7B"))
    assert consistent(work) == before
    assert not list(work.glob(f"{JOURNAL_PREFIX}*"))


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_emitted_files_have_their_modes_whatever_the_umask(site: Site, umask: int) -> None:
    """The script is 0755 and job_spec.json 0644 under any umask."""
    previous = os.umask(umask)
    try:
        output = bench_output(site, "Llama-7B")
        write_outputs(output)
    finally:
        os.umask(previous)
    work = site.work("job")
    modes = {p.name: p.stat().st_mode & 0o777 for p in work.iterdir()}
    assert modes == {"job_spec.json": 0o644, output.files[0].path.rsplit("/", 1)[1]: 0o755}


def test_a_new_work_dir_is_removed_again_on_failure(site: Site) -> None:
    parent = site.root / "fresh"
    output = bench_output(site, work_dir=str(parent / "job"))
    real_open = os.open

    def refuse_files(path: Any, flags: int, mode: int = 0o777, **kw: Any) -> int:
        if TEMP_PREFIX in str(path):
            raise OSError(13, "Permission denied")
        return real_open(path, flags, mode, **kw)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "open", refuse_files)
        with pytest.raises(WriteError, match="Permission denied"):
            write_outputs(output)
    assert not parent.exists()


def test_sigterm_while_writing_restores_the_folder(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = site.work("job")
    write_outputs(bench_output(site, "Llama-7B", model_name="same"))
    before = snapshot_dir(work)
    real_replace = os.replace

    def replace_then_signal(source: Any, target: Any) -> None:
        real_replace(source, target)
        if str(target).endswith(".slurm"):
            os.kill(os.getpid(), signal.SIGTERM)  # held until the write is over, then undone

    monkeypatch.setattr(os, "replace", replace_then_signal)
    with pytest.raises(Interrupted, match="SIGTERM: nothing was written"):
        write_outputs(bench_output(site, "Qwen-7B", model_name="same"))
    assert snapshot_dir(work) == before


def test_sigint_while_writing_restores_the_folder(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = site.work("job")
    write_outputs(bench_output(site, "Llama-7B"))
    before = snapshot_dir(work)
    real_open = os.open

    def open_then_signal(path: Any, flags: int, mode: int = 0o777, **kw: Any) -> int:
        if TEMP_PREFIX in str(path):
            os.kill(os.getpid(), signal.SIGINT)
        return real_open(path, flags, mode, **kw)

    monkeypatch.setattr(os, "open", open_then_signal)
    with pytest.raises(Interrupted, match="SIGINT"):
        write_outputs(bench_output(site, "Qwen-7B"))
    assert snapshot_dir(work) == before


def test_stale_temporaries_of_a_killed_emit_are_removed_by_the_next(site: Site) -> None:
    work = site.work("job")
    write_outputs(bench_output(site))
    (work / f"{TEMP_PREFIX}new-123-1-job_spec.json").write_text("torn")
    (work / f"{TEMP_PREFIX}old-123-2-x.slurm").write_text("torn")
    (work / "notes.txt").write_text("mine")
    write_outputs(bench_output(site))
    names = sorted(p.name for p in work.iterdir())
    assert names == ["job_spec.json", "llama_7b_bench.slurm", "notes.txt"]


def test_a_kill_9_in_the_middle_leaves_a_set_the_next_emit_repairs(site: Site) -> None:
    work = site.work("job")
    write_outputs(bench_output(site, "Llama-7B", model_name="same"))
    code = (
        "import os, sys\n"
        "from scriptast.pipeline.emit_job import write_outputs\n"
        "from scriptast.builders.read_request import build_request\n"
        "from scriptast.pipeline.emit_job import generate\n"
        "real = os.replace\n"
        "def die(a, b):\n"
        "    real(a, b)\n"
        "    if str(b).endswith('.slurm'):\n"
        "        os.kill(os.getpid(), 9)\n"
        "os.replace = die\n"
        "import json\n"
        "fields = json.loads(sys.argv[1])\n"
        "write_outputs(generate(build_request(fields, {}), home=sys.argv[2]))\n"
    )
    fields = site.fields(
        workflow_type="bench", bench_cmd=BENCH.format(model="Qwen-7B"), model_name="same"
    )
    killed = subprocess.run(
        [sys.executable, "-c", code, json.dumps(fields), str(site.home)], capture_output=True
    )
    assert killed.returncode == -9
    spec = json.loads((work / "job_spec.json").read_text())
    script = (work / "same_bench.slurm").read_bytes()
    # torn: the new script beside the old manifest, whose digest tells the executor so
    assert hashlib.sha256(script).hexdigest() != spec["files"]["same_bench.slurm"]
    assert any(p.name.startswith(TEMP_PREFIX) for p in work.iterdir())
    write_outputs(bench_output(site, "Qwen-7B", model_name="same"))
    consistent(work)


KILL_BEFORE_JOB_SPEC = (
    "import os, sys, json\n"
    "from scriptast.pipeline.emit_job import generate, write_outputs\n"
    "from scriptast.builders.read_request import build_request\n"
    "real = os.replace\n"
    "def die(a, b):\n"
    "    if str(b).endswith('job_spec.json'):\n"
    "        os.kill(os.getpid(), 9)\n"
    "    real(a, b)\n"
    "os.replace = die\n"
    "fields = json.loads(sys.argv[1])\n"
    "write_outputs(generate(build_request(fields, {}), home=sys.argv[2]))\n"
)
"""An emit killed by SIGKILL after its script is renamed into place, before job_spec.json is."""


def test_a_killed_emits_script_is_gone_after_the_next_complete_emit(site: Site) -> None:
    """The script of an emit killed before its job_spec.json went in (a name no manifest lists)
    is removed by the next emit, which first undoes the killed one's renames from its journal."""
    work = site.work("job")
    write_outputs(bench_output(site, "Llama-7B"))
    fields = site.fields(workflow_type="bench", bench_cmd=BENCH.format(model="Qwen-7B"))
    killed = subprocess.run(
        [sys.executable, "-c", KILL_BEFORE_JOB_SPEC, json.dumps(fields), str(site.home)],
        capture_output=True,
    )
    assert killed.returncode == -9, killed.stderr
    assert (work / "qwen_7b_bench.slurm").is_file()  # torn: listed by no job_spec.json
    write_outputs(bench_output(site, "Mistral-7B"))
    names = sorted(p.name for p in work.iterdir())
    assert names == ["job_spec.json", "mistral_7b_bench.slurm"], names
    consistent(work)


def test_a_killed_emit_is_undone_before_run_or_emit_looks_at_the_folder(site: Site) -> None:
    """Once the lock is taken again, the killed emit's renames are undone: the folder is the
    complete set of the emit before it, its replaced script back."""
    work = site.work("job")
    write_outputs(bench_output(site, "Llama-7B", model_name="same"))
    before = snapshot_dir(work)
    fields = site.fields(
        workflow_type="bench", bench_cmd=BENCH.format(model="Qwen-7B"), model_name="same"
    )
    killed = subprocess.run(
        [sys.executable, "-c", KILL_BEFORE_JOB_SPEC, json.dumps(fields), str(site.home)],
        capture_output=True,
    )
    assert killed.returncode == -9
    assert any(p.name.startswith(JOURNAL_PREFIX) for p in work.iterdir())
    with work_dir_held(str(work)):
        pass
    # the killed emit's staged temporary stays until an emit sweeps temporaries; all else is back
    after = {k: v for k, v in snapshot_dir(work).items() if not k.startswith(TEMP_PREFIX)}
    assert after == before


def run_cli(site: Site, model: str, **env: str) -> subprocess.CompletedProcess[str]:
    fields = site.fields(workflow_type="bench", bench_cmd=BENCH.format(model=model))
    argv = [str(Path(sys.executable).parent / "scriptast"), "emit", "--request", "-"]
    return subprocess.run(
        argv,
        input=json.dumps(fields),
        capture_output=True,
        text=True,
        env={**os.environ, "HOME": str(site.home), **env},
    )


def test_twenty_concurrent_emits_into_one_work_dir_are_serialized(site: Site) -> None:
    work = site.work("job")
    argv = [str(Path(sys.executable).parent / "scriptast"), "emit", "--request", "-"]
    running = []
    for index in range(20):
        fields = site.fields(workflow_type="bench", bench_cmd=BENCH.format(model=f"M{index}"))
        process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "HOME": str(site.home)},
        )
        running.append((process, json.dumps(fields)))
    for process, text in running:
        process.stdin.write(text)  # type: ignore[union-attr]
        process.stdin.close()  # type: ignore[union-attr]
    for process, _ in running:
        assert process.wait(timeout=120) == 0, process.stderr.read()  # type: ignore[union-attr]
    spec = consistent(work)
    assert len(spec["files"]) == 1  # one request's set, whichever came last


def test_a_held_lock_makes_the_second_emit_fail_clearly(site: Site) -> None:
    work = site.work("job")
    work.mkdir(parents=True)
    descriptor = os.open(work, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        result = run_cli(site, "Llama-7B", SCRIPTAST_LOCK_TIMEOUT="0.3")
    finally:
        os.close(descriptor)
    assert result.returncode == 1
    assert result.stderr.startswith("error: another scriptast emit into ")
    assert result.stderr.count("\n") == 1
    assert snapshot_dir(work) == {}
    assert run_cli(site, "Llama-7B").returncode == 0


def test_write_all_refuses_nothing_it_can_write(tmp_path: Path) -> None:
    class File:
        def __init__(self, path: Path, text: str) -> None:
            self.path, self.text, self.executable = str(path), text, False

    write_all(
        str(tmp_path / "w"), [File(tmp_path / "w" / "a", "1"), File(tmp_path / "w" / "b", "2")]
    )
    assert snapshot_dir(tmp_path / "w") == {"a": b"1", "b": b"2"}


def test_notes_left_by_earlier_releases_are_still_put_back(tmp_path: Path) -> None:
    """An emit killed by a release before the one journal left `.scriptast_commit-*` (its
    renames) or `.scriptast_undo-*` (what submit.py was changing): the next lock puts both
    back by the same rules, and removes them."""
    import json

    from scriptast.workdir.journal import recover

    work = tmp_path / "work"
    work.mkdir()
    (work / "run.slurm").write_text("new\n")
    (work / ".scriptast-old-1-run.slurm").write_text("old\n")
    (work / "test_list.txt").write_text("rewritten\n")
    (work / "slurm_launch.sh").write_text("made by submit.py\n")
    (work / ".scriptast_commit-7.json").write_text(json.dumps({
        "renames": [[str(work / "run.slurm"), str(work / ".scriptast-old-1-run.slurm"), "x"]],
        "retired": [], "folders": []}))  # fmt: skip
    (work / ".scriptast_undo-7.json").write_text(json.dumps({
        "folders": [str(work)], "names": ["slurm_launch.sh", "test_list.txt"],
        "sub_folders": [], "before": [str(work / "test_list.txt")], "aside": [],
        "backups": {str(work / "test_list.txt"): "ZWFybGllcgo="}}))  # fmt: skip
    recover(str(work))
    assert sorted(p.name for p in work.iterdir()) == ["run.slurm", "test_list.txt"]
    assert (work / "run.slurm").read_text() == "old\n"
    assert (work / "test_list.txt").read_text() == "earlier\n"


def test_a_note_that_is_no_journal_is_removed_and_a_link_never_read(tmp_path: Path) -> None:
    from scriptast.workdir.journal import JOURNAL_PREFIX, recover

    work = tmp_path / "work"
    work.mkdir()
    (work / "kept.txt").write_text("kept\n")
    (work / f"{JOURNAL_PREFIX}9.json").write_text('{"type": "renames", "renames": 3}')
    outside = tmp_path / "outside.json"
    outside.write_text('{"type": "renames", "renames": [], "retired": []}')
    (work / f"{JOURNAL_PREFIX}10.json").symlink_to(outside)
    recover(str(work))
    assert sorted(p.name for p in work.iterdir()) == [f"{JOURNAL_PREFIX}10.json", "kept.txt"]
    assert outside.exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_note_another_user_wrote_is_never_acted_on(tmp_path: Path) -> None:
    """A work dir shared with (or owned by) another user: a journal note they planted names
    renames that would put their file in place of this user's; the lock's recovery leaves it."""
    import json
    import pwd

    from scriptast.workdir.journal import JOURNAL_PREFIX, recover

    work = tmp_path / "work"
    work.mkdir()
    (work / "run.slurm").write_text("mine\n")
    (work / ".scriptast-old-1-run.slurm").write_text("planted\n")
    note = work / f"{JOURNAL_PREFIX}5.json"
    note.write_text(json.dumps({"type": "renames", "retired": [], "renames": [
        [str(work / "run.slurm"), str(work / ".scriptast-old-1-run.slurm"), "x"]]}))  # fmt: skip
    nobody = pwd.getpwnam("nobody")
    os.chown(note, nobody.pw_uid, nobody.pw_gid)
    recover(str(work))
    assert (work / "run.slurm").read_text() == "mine\n"
    assert note.exists()
    os.chown(note, os.geteuid(), os.getegid())
    recover(str(work))  # the same note, this user's: acted on
    assert (work / "run.slurm").read_text() == "planted\n"
    assert not note.exists()


def test_a_note_that_cannot_be_read_as_this_users_is_passed_over(tmp_path: Path) -> None:
    """A note that goes away (or cannot be stat'ed) between listing and reading is passed over;
    the others are still put back."""
    from scriptast.workdir import journal

    class Gone:
        name = f"{journal.JOURNAL_PREFIX}1.json"

        def is_file(self, follow_symlinks: bool = True) -> bool:
            raise FileNotFoundError(self.name)

    assert journal._ours(Gone(), os.geteuid()) is False  # type: ignore[arg-type]


@pytest.mark.parametrize("standing", ["nothing", "file", "link", "dangling link", "folder"])
def test_a_file_created_anew_replaces_what_stood_there_and_writes_through_no_link(
    tmp_path: Path, standing: str
) -> None:
    from scriptast.common.new_files import created_anew

    target = tmp_path / "elsewhere.txt"
    target.write_text("not ours\n")
    path = tmp_path / "note.json"
    if standing == "file":
        path.write_text("stale\n")
    elif standing == "link":
        path.symlink_to(target)
    elif standing == "dangling link":
        path.symlink_to(tmp_path / "gone")
    elif standing == "folder":
        path.mkdir()
        with pytest.raises(FileExistsError):
            created_anew(str(path))
        assert path.is_dir()
        return
    descriptor = created_anew(str(path), 0o600)
    os.write(descriptor, b"new\n")
    os.close(descriptor)
    assert not path.is_symlink() and path.read_text() == "new\n"
    assert target.read_text() == "not ours\n" and not (tmp_path / "gone").exists()


def test_one_file_is_replaced_whole_under_the_lock_and_nothing_else_is_touched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from scriptast.workdir.write import OutputFile, replace_one

    work = tmp_path / "w"
    work.mkdir()
    (work / "job_spec.json").write_text("old\n")
    (work / "other.txt").write_text("kept\n")
    replace_one(str(work), OutputFile(str(work / "job_spec.json"), "new\n"))
    assert snapshot_dir(work) == {"job_spec.json": b"new\n", "other.txt": b"kept\n"}
    assert (work / "job_spec.json").stat().st_mode & 0o777 == 0o644
    descriptor = os.open(work, os.O_RDONLY)
    fcntl.flock(descriptor, fcntl.LOCK_EX)  # another emit holds the work dir
    monkeypatch.setenv("SCRIPTAST_LOCK_TIMEOUT", "0.1")
    try:
        with pytest.raises(WriteError, match="still holds its lock"):
            replace_one(str(work), OutputFile(str(work / "job_spec.json"), "newer\n"))
    finally:
        os.close(descriptor)
    assert snapshot_dir(work) == {"job_spec.json": b"new\n", "other.txt": b"kept\n"}


def test_a_record_is_synced_unless_it_says_what_the_queue_shows_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """run.json's submission and verdict are synced to disk; a state the scheduler shows again
    (PENDING, RUNNING) is written whole but not synced, which a crash may lose."""
    from scriptast.workdir.files import replace_file

    synced: list[int] = []
    monkeypatch.setattr(os, "fsync", synced.append)
    path = tmp_path / "run.json"
    replace_file(str(path), "submitted\n")
    assert len(synced) == 1 and path.read_text() == "submitted\n"
    replace_file(str(path), "running\n", durable=False)
    assert len(synced) == 1 and path.read_text() == "running\n"
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]
