"""Run submit.py with a job's final paths, then take back what it wrote: every file it (or the
staging before it) created or changed becomes an output file, to be written all or nothing with
job_spec.json, and the disk is put back as it was, on success and on failure alike.

submit.py asks `sinfo` (and `scontrol`) about the partition; it runs with stand-ins first on
PATH that answer from slurm_env, the same source every other category reads, so a job for a
remote cluster is not sized by whatever Slurm this machine has."""

from __future__ import annotations

import contextlib
import os
import posixpath
import shutil
import stat
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence

import msgspec

from scriptast.common.text_files import regular_file_bytes
from scriptast.contract.slurm_env import SlurmEnv
from scriptast.emitters.bash import BashEmitter
from scriptast.errors import ResolveError
from scriptast.model.script import Script
from scriptast.model.statements import Comment, If, ShellStatement, cmd
from scriptast.model.words import Param
from scriptast.readers.roundtrip.verify import verify_emitted
from scriptast.workdir.files import WriteError, make_dirs
from scriptast.workdir.journal import (
    ProgramWrites,
    Signature,
    close_journal,
    inventory,
    listing,
    open_journal,
    put_back,
)
from scriptast.workdir.write import Pending, interrupted, work_dir_held

SUBMIT_SECONDS = 300
_POLL_SECONDS = 0.05


class SubmitPyFile(msgspec.Struct, frozen=True, kw_only=True):
    """A file submit.py (or the staging) wrote: `relative` to the folder it was written in,
    `remote` the cluster path it belongs at (remote_slurm), or None."""

    relative: str
    text: str
    executable: bool
    remote: str | None = None


class WatchedFolder(msgspec.Struct, frozen=True, kw_only=True):
    """A folder submit.py writes into on this machine; `remote` is its cluster path when it
    stands for one (the cluster work dir), else None."""

    path: str
    remote: str | None = None


class SubmitPyWrites(msgspec.Struct, frozen=True, kw_only=True):
    """Where submit.py writes in a folder it is given: files at `names`, and anything inside
    the sub-folders `folders`. Nothing else there is its (or, so, scriptast's) to take."""

    names: frozenset[str]
    folders: frozenset[str]

    def listed(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Its names and its sub-folders, as work_dir's journal lists them."""
        return tuple(sorted(self.names)), tuple(sorted(self.folders))


class StagedConfig(msgspec.Struct, frozen=True, kw_only=True):
    """A file that must exist before submit.py runs (a config it reads and embeds)."""

    path: str
    text: str


def run_submit(
    argv: Sequence[str],
    *,
    cwd: str,
    work_dir: str,
    watched: Sequence[WatchedFolder],
    staged: Sequence[StagedConfig],
    slurm_env: SlurmEnv,
    extra_env: dict[str, str],
    writes: SubmitPyWrites,
) -> list[tuple[WatchedFolder, SubmitPyFile]]:
    """Run `argv` under the work_dir lock; return what it wrote in each watched folder, at the
    names it writes (`writes`): a file another process makes meanwhile elsewhere in the folder
    is neither taken nor removed."""
    owned = SubmitPyWrites(
        names=writes.names | {posixpath.basename(item.path) for item in staged},
        folders=writes.folders,
    )
    folders = [w.path for w in watched]
    with (
        work_dir_held(work_dir) as pending,
        _shims(slurm_env) as shim_dir,
        _put_back_after(work_dir, folders, owned, {w.path for w in watched if w.remote}) as before,
    ):
        for item in staged:
            descriptor = os.open(
                item.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644
            )
            with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
                stream.write(item.text)
        result = _run(argv, cwd, shim_dir, extra_env, pending)
        interrupted(pending, work_dir)
        if result.returncode != 0:
            raise ResolveError(
                f"submit.py failed (exit code {result.returncode}): {_last_line(result)}"
            )
        return [
            (folder, taken)
            for folder in watched
            for taken in _changed(folder, before.get(folder.path, {}), owned)
        ]


def _run(
    argv: Sequence[str],
    cwd: str,
    shim_dir: str,
    extra_env: dict[str, str],
    pending: Pending,
) -> subprocess.CompletedProcess[str]:
    """Run submit.py; a SIGINT or SIGTERM noted meanwhile stops it at once (the caller then
    puts the disk back and reports the signal)."""
    env = dict(os.environ)
    env["PATH"] = shim_dir + os.pathsep + env.get("PATH", os.defpath)
    env.pop("SLURM_CLUSTER_NAME", None)
    # submit.py imports modules of the checkout: a __pycache__ would be a change to the repository
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra_env)
    try:
        child = subprocess.Popen(
            list(argv),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            cwd=cwd,
            env=env,
        )
    except OSError as error:
        raise ResolveError(f"cannot run submit.py ({argv[0]}): {error.strerror}") from None
    deadline = time.monotonic() + SUBMIT_SECONDS
    with child:
        while True:
            try:
                stdout, stderr = child.communicate(timeout=_POLL_SECONDS)
                break
            except subprocess.TimeoutExpired:
                if pending() is None and time.monotonic() < deadline:
                    continue
                child.kill()
                child.communicate()
                if pending() is None:
                    raise ResolveError(
                        f"submit.py did not finish within {SUBMIT_SECONDS} s"
                    ) from None
                return subprocess.CompletedProcess(list(argv), -9, "", "")
    return subprocess.CompletedProcess(list(argv), child.returncode, stdout, stderr)


def _last_line(result: subprocess.CompletedProcess[str]) -> str:
    """The message a failing submit.py ends with: the last line of its error output (for an
    uncaught exception, `Type: message`), else of its output."""
    for text in (result.stderr, result.stdout):
        lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
        if lines:
            return lines[-1]
    return "it printed nothing"


def _changed(
    folder: WatchedFolder, before: dict[str, Signature], owned: SubmitPyWrites
) -> list[SubmitPyFile]:
    from scriptast.common.text_files import read_text_file

    taken = []
    for relative, signature in sorted(inventory(folder.path, *owned.listed()).items()):
        if before.get(relative) == signature:
            continue
        path = posixpath.join(folder.path, relative)
        text = read_text_file(path, "a file submit.py wrote")
        remote = posixpath.join(folder.remote, relative) if folder.remote else None
        executable = bool(signature[3] & stat.S_IXUSR)
        taken.append(
            SubmitPyFile(relative=relative, text=text, executable=executable, remote=remote)
        )
    return taken


LINK_ASIDE = ".link-set-aside-by-scriptast-"
MOST_BACKUP_BYTES = 1 << 20
"""A file submit.py may rewrite in place is kept up to this size (a log or a data file is
larger, and submit.py writes none)."""


@contextlib.contextmanager
def _put_back_after(
    work_dir: str, folders: list[str], owned: SubmitPyWrites, cluster_paths: set[str]
) -> Iterator[dict[str, dict[str, Signature]]]:
    """The folders submit.py writes into, made if missing, its files there listed (yielded,
    folder by folder) and kept, and symbolic links at its names set aside (submit.py opens its
    files for writing, which would follow a link out of work_dir), all recorded in work_dir's
    journal before it runs; afterwards this process puts them back by that record, as the next
    emit would had this one been killed. `cluster_paths` are folders that stand for a cluster
    path (remote_slurm's work dir)."""
    names, sub_folders = owned.listed()
    created: list[str] = []
    aside: list[tuple[str, str]] = []
    step: ProgramWrites | None = None
    note: str | None = None
    try:
        for folder in folders:
            created += _made_here(folder, folder in cluster_paths)
        for folder in folders:
            _set_links_aside(folder, names, sub_folders, aside)
        before = {folder: inventory(folder, names, sub_folders) for folder in folders}
        step = ProgramWrites(
            folders=tuple(folders), names=names, sub_folders=sub_folders,
            before={posixpath.join(f, r): signature for f in folders
                    for r, signature in before[f].items()},
            backups=_backups(folders, before), aside=tuple(aside), created=tuple(created),
        )  # fmt: skip
        note = open_journal(work_dir, step)
        yield before
    finally:
        put_back(
            step
            or ProgramWrites(
                folders=(),
                names=names,
                sub_folders=sub_folders,
                before={},
                aside=tuple(aside),
                created=tuple(created),
            )
        )
        if note is not None:
            close_journal(note)


def _set_links_aside(folder: str, names: tuple[str, ...], sub_folders: tuple[str, ...],
                     aside: list[tuple[str, str]]) -> None:  # fmt: skip
    """Move each symbolic link at one of submit.py's names (top level, and inside its real
    sub-folders) aside, noting each in `aside` as it goes."""
    for relative in listing(folder, names, sub_folders):
        path = posixpath.join(folder, relative)
        if os.path.islink(path):
            folder_of, name = posixpath.split(path)
            moved = posixpath.join(folder_of, LINK_ASIDE + name)
            os.rename(path, moved)
            aside.append((moved, path))


def _backups(folders: list[str], before: dict[str, dict[str, Signature]]) -> dict[str, bytes]:
    """The bytes of each file submit.py may rewrite in place (it opens with "w")."""
    kept = {}
    for folder in folders:
        for relative, signature in before[folder].items():
            path = posixpath.join(folder, relative)
            if signature[1] > MOST_BACKUP_BYTES:
                continue
            with contextlib.suppress(OSError):
                kept[path] = regular_file_bytes(path, MOST_BACKUP_BYTES, follow_links=False)[0]
    return kept


def _made_here(folder: str, cluster_path: bool) -> list[str]:
    """make_dirs, saying for a cluster path why it is made on this machine."""
    try:
        return make_dirs(folder)
    except WriteError as error:
        if not cluster_path:
            raise
        raise WriteError(
            f"remote_work_dir {folder}: submit.py creates its --work-dir on the machine it runs "
            f"on (this one) and writes there, so scriptast creates that cluster path here for "
            f"the run and removes it after, but {error}; give a remote_work_dir whose path "
            "can be created here (under /tmp, or a cluster file system mounted at the same "
            "path), or run emit on the cluster's login node"
        ) from None


def _verified(script: Script) -> str:
    """The shim's bash text, read back and checked against its model as every emitted script
    is."""
    emitter = BashEmitter()
    composition = emitter.compose(script)
    verify_emitted(composition.text, script, emitter, composition)
    return composition.text


@contextlib.contextmanager
def _shims(slurm_env: SlurmEnv) -> Iterator[str]:
    """A folder with `sinfo` and `scontrol` that answer submit.py's questions from slurm_env."""
    folder = tempfile.mkdtemp(prefix="scriptast-shims-")
    try:
        _write_shim(folder, "sinfo", _sinfo_cases(slurm_env))
        _write_shim(folder, "scontrol", _scontrol_cases(slurm_env))
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _sinfo_cases(env: SlurmEnv) -> list[tuple[str, list[str]]]:
    names = [f"{p.name}*" if p.name == env.default_partition else p.name for p in env.partitions]
    cases = [("-h -o %P", names)]
    for partition in env.partitions:
        if partition.gres is not None:
            cases.append((f"-p {partition.name} -h -o %G", [partition.gres]))
    return cases


def _scontrol_cases(env: SlurmEnv) -> list[tuple[str, list[str]]]:
    """`scontrol show config` as the cluster would answer it, for what slurm_env knows."""
    lines = []
    if env.cluster_name:
        lines.append(f"ClusterName             = {env.cluster_name}")
    if env.probe is not None and env.probe.slurm_version:
        lines.append(f"SLURM_VERSION           = {env.probe.slurm_version}")
    return [("show config", lines)] if lines else []


def shim_script(name: str, cases: list[tuple[str, list[str]]]) -> Script:
    """`name` answering each (arguments, lines) case: the lines when its arguments are
    exactly those, else exit status 1."""
    answer: ShellStatement = cmd("exit", "1")
    for arguments, lines in reversed(cases):
        answer = If(
            condition=cmd("[", Param(name="*"), "=", arguments, "]"),
            then=(cmd("printf", "%s\\n", *lines),),
            orelse=(answer,),
        )
    comment = Comment(text=f"{name} as slurm_env describes the cluster (scriptast)")
    return Script(header=(comment,), body=(answer,))


def _write_shim(folder: str, name: str, cases: list[tuple[str, list[str]]]) -> None:
    path = posixpath.join(folder, name)
    with open(path, "w", encoding="utf-8") as stream:
        stream.write(_verified(shim_script(name, cases)))
    os.chmod(path, 0o755)
