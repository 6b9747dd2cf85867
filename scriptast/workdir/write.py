"""All-or-nothing writes into work_dir: a lock, staged files, backups of what is replaced, and a
rollback on any error, SIGINT or SIGTERM, so work_dir is either the new set or as it was.

Temporary files and backups are named `.scriptast-*`; the next emit removes any a kill -9 left,
after undoing the renames of an emit killed among them (its journal, `.scriptast_commit-*`).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import posixpath
import signal
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol

import msgspec

from scriptast.common.new_files import created_anew
from scriptast.common.text_files import regular_file_bytes
from scriptast.errors import ScriptastError

TEMP_PREFIX = ".scriptast-"
LOCK_FILE = ".scriptast.lock"
EMITTED_BYTES = 64 * 1024 * 1024
"""No file an emit wrote (or a note it left) is larger."""
LOCK_SECONDS = 120.0
"""How long an emit waits for another emit into the same work_dir (SCRIPTAST_LOCK_TIMEOUT)."""
_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGHUP})
_POLL_SECONDS = 0.02


class WriteError(ScriptastError):
    """work_dir could not be written; it is as it was."""


class Interrupted(ScriptastError):
    """SIGINT or SIGTERM arrived while writing; work_dir is as it was."""


class FileToWrite(Protocol):
    """What `write_all` needs of a file: its absolute path, text and mode."""

    @property
    def path(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def executable(self) -> bool: ...


def write_all(work_dir: str, files: Sequence[FileToWrite], *, spec: str = "") -> None:
    """Write `files` (each inside `work_dir` or one folder below it, the last one last) as one
    change; a folder it has to create is removed again if the change is undone.

    `spec` names the manifest whose `files` map says which files an earlier emit wrote: those
    not written again are removed with the change, when their content is still what it
    recorded."""
    created = make_dirs(work_dir)
    try:
        with _signals_held() as pending, _locked(work_dir, pending):
            folders = sorted({posixpath.dirname(f.path) for f in files} | {work_dir})
            for folder in folders:
                _remove_stale(folder)
            change = _Change(work_dir)
            try:
                change.stage(files)
                names = {posixpath.relpath(f.path, work_dir) for f in files}
                change.plan(_earlier_files(work_dir, spec, names))
                for final, backup in change.retiring:
                    change.retire(final, backup)
                change.commit()
                signum = pending()
                if signum is not None:
                    raise Interrupted(
                        f"interrupted by {signal.Signals(signum).name}: nothing was written "
                        f"into {work_dir}"
                    )
            except BaseException:
                change.rollback()
                raise
            change.finish()
    except BaseException:
        remove_dirs(created)
        raise


@contextlib.contextmanager
def work_dir_held(work_dir: str) -> Iterator[Pending]:
    """work_dir created if missing, locked against other emits, SIGINT/SIGTERM/SIGHUP only
    noted, for a step that must change it and put it back (submit.py's run, a submission);
    yields the check for a noted signal. Folders it created are removed on the way out when
    they are empty again."""
    created = make_dirs(work_dir)
    try:
        with _signals_held() as pending, _locked(work_dir, pending):
            yield pending
    finally:
        remove_dirs(created)


def interrupted(pending: Pending, work_dir: str) -> None:
    """Raise Interrupted when a held signal arrived."""
    signum = pending()
    if signum is not None:
        raise Interrupted(
            f"interrupted by {signal.Signals(signum).name}: nothing was written into {work_dir}"
        )


def make_dirs(work_dir: str) -> list[str]:
    """Create work_dir and its missing parents; the ones created, outermost first."""
    missing: list[str] = []
    path = work_dir
    while not os.path.lexists(path):
        missing.append(path)
        parent = posixpath.dirname(path)
        if parent == path:
            break
        path = parent
    created: list[str] = []
    for folder in reversed(missing):
        try:
            os.mkdir(folder)
        except FileExistsError:
            continue
        except OSError as error:
            remove_dirs(created)
            raise WriteError(f"cannot create {folder}: {error.strerror}") from None
        created.append(folder)
    if not os.path.isdir(work_dir):
        raise WriteError(f"work_dir {work_dir} exists and is not a directory")
    return created


def remove_dirs(created: list[str]) -> None:
    """Remove the folders `make_dirs` created, innermost first, those that are empty again."""
    for folder in reversed(created):
        with contextlib.suppress(OSError):
            os.rmdir(folder)


@contextlib.contextmanager
def _signals_held() -> Iterator[Pending]:
    """Hold SIGINT, SIGTERM and SIGHUP while writing (their handlers only note them); yield a check
    for one that arrived. Handlers, not a signal mask: a process-directed signal goes to any
    thread that does not block it. Outside the main thread nothing can be held."""
    arrived: list[int] = []

    def note(signum: int, frame: object) -> None:
        arrived.append(signum)

    previous: dict[int, Any] = {}
    try:
        for signum in _SIGNALS:
            previous[signum] = signal.signal(signum, note)
    except ValueError:  # not the main thread
        yield lambda: None
        return
    try:
        yield lambda: arrived[0] if arrived else None
    finally:
        for held, handler in previous.items():
            signal.signal(held, handler)


class Pending(Protocol):
    """The check for a SIGINT/SIGTERM/SIGHUP noted while held: its number, or None."""

    def __call__(self) -> int | None: ...


@contextlib.contextmanager
def _locked(work_dir: str, pending: Pending) -> Iterator[None]:
    """An exclusive flock on work_dir (a lock file where the directory cannot be locked),
    waited for at most LOCK_SECONDS; a signal while waiting gives up with nothing written."""
    import fcntl

    descriptor = _lock_target(work_dir)
    try:
        deadline = time.monotonic() + _lock_seconds()
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                pass
            signum = pending()
            if signum is not None:
                raise Interrupted(
                    f"interrupted by {signal.Signals(signum).name} while waiting for another "
                    f"emit into {work_dir}: nothing was written"
                )
            if time.monotonic() >= deadline:
                raise WriteError(
                    f"another scriptast emit into {work_dir} still holds its lock after "
                    f"{_lock_seconds():g} s; retry, or give each job its own work_dir"
                )
            time.sleep(_POLL_SECONDS)
        undo_killed_commits(work_dir)
        undo_killed(work_dir)
        yield
    finally:
        os.close(descriptor)


def _lock_seconds() -> float:
    import math

    text = os.environ.get("SCRIPTAST_LOCK_TIMEOUT")
    if text is None:
        return LOCK_SECONDS
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds < 0:
        raise WriteError(
            f"SCRIPTAST_LOCK_TIMEOUT={text[:40]!r} is not a number of seconds >= 0: set it so, "
            f"or unset it for {LOCK_SECONDS:g}"
        )
    return seconds


def _lock_target(work_dir: str) -> int:
    import fcntl

    try:
        descriptor = os.open(work_dir, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as error:
        raise WriteError(f"cannot open work_dir {work_dir}: {error.strerror}") from None
    try:
        fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
        fcntl.flock(descriptor, fcntl.LOCK_UN)
        return descriptor
    except BlockingIOError:
        return descriptor
    except OSError as error:
        os.close(descriptor)
        if error.errno not in (errno.EBADF, errno.EINVAL, errno.ENOLCK, errno.EOPNOTSUPP):
            raise WriteError(f"cannot lock work_dir {work_dir}: {error.strerror}") from None
    # file systems that lock no directory (NFS): a lock file, left in place
    try:
        return os.open(posixpath.join(work_dir, LOCK_FILE), os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        raise WriteError(f"cannot lock work_dir {work_dir}: {error.strerror}") from None


def _remove_stale(work_dir: str) -> None:
    """Temporaries and backups an emit killed by SIGKILL left behind (none is running now)."""
    with contextlib.suppress(OSError), os.scandir(work_dir) as entries:
        for entry in entries:
            if entry.name.startswith(TEMP_PREFIX) and not entry.is_dir(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def _earlier_files(work_dir: str, spec: str, written: set[str]) -> list[str]:
    """Files the manifest of an earlier emit lists, not written now, still as it wrote them."""
    if not spec:
        return []
    try:
        recorded = json.loads(_regular_bytes(posixpath.join(work_dir, spec))).get("files")
    except (OSError, ValueError, AttributeError):
        return []
    if not isinstance(recorded, dict):
        return []
    stale = []
    for name, digest in sorted(recorded.items()):
        if not isinstance(name, str) or name in written or not _plain_relative(name):
            continue
        if "/" in name and os.path.islink(posixpath.join(work_dir, name.split("/")[0])):
            continue  # a folder that now points elsewhere: what is there is not ours
        try:
            current = hashlib.sha256(_regular_bytes(posixpath.join(work_dir, name))).hexdigest()
        except OSError:
            continue
        if current == digest:
            stale.append(name)
    return stale


def _regular_bytes(path: str) -> bytes:
    """A regular file's bytes, never through a link nor from a FIFO (see regular_file_bytes)."""
    return regular_file_bytes(path, EMITTED_BYTES, follow_links=False)[0]


def _plain_relative(name: str) -> bool:
    """`name` or `folder/name`, neither part empty, hidden, `..` nor absolute."""
    parts = name.split("/")
    return len(parts) <= 2 and all(part and not part.startswith(".") for part in parts)


class _Change:
    """One emit's change of work_dir: staged temporaries, then renames that can be undone."""

    def __init__(self, work_dir: str) -> None:
        self.work_dir = work_dir
        self.staged: list[tuple[str, str]] = []
        self.digests: dict[str, str] = {}
        self.backups: dict[str, str | None] = {}
        self.retiring: list[tuple[str, str]] = []
        self.done: list[tuple[str, str | None]] = []
        self.retired: list[tuple[str, str]] = []
        self.folders: list[str] = []
        self.serial = 0
        self.journal: str | None = None

    def _temporary(self, kind: str, final: str) -> str:
        """A temporary beside `final` (the same folder, so a rename moves it in place)."""
        self.serial += 1
        folder, name = posixpath.split(final)
        return posixpath.join(
            folder, f"{TEMP_PREFIX}{kind}-{os.getpid()}-{self.serial}-{name}"[:255]
        )

    def _folder(self, folder: str) -> None:
        if folder != self.work_dir and os.path.islink(folder):
            raise WriteError(
                f"{folder} is a symbolic link: emit writes nothing through one (it would "
                "write outside work_dir); remove it"
            )
        if os.path.isdir(folder):
            return
        try:
            os.mkdir(folder)
        except OSError as error:
            raise WriteError(f"cannot create {folder}: {error.strerror}") from None
        self.folders.append(folder)

    def stage(self, files: Sequence[FileToWrite]) -> None:
        for item in files:
            final = item.path
            if os.path.isdir(final) and not os.path.islink(final):
                raise WriteError(f"cannot write {final}: a directory is in the way")
            self._folder(posixpath.dirname(final))
            temporary = self._temporary("new", final)
            self.staged.append((temporary, final))
            try:
                descriptor = os.open(
                    temporary,
                    os.O_WRONLY | os.O_CREAT | os.O_EXCL,
                    0o755 if item.executable else 0o644,
                )
                data = item.text.encode("utf-8")
                with os.fdopen(descriptor, "wb") as stream:
                    stream.write(data)
                os.chmod(temporary, 0o755 if item.executable else 0o644)
            except OSError as error:
                raise WriteError(f"cannot write into {self.work_dir}: {error.strerror}") from None
            self.digests[final] = hashlib.sha256(data).hexdigest()

    def plan(self, retired_names: Sequence[str]) -> None:
        """Name every backup the renames will make, and write the journal that lets the next
        holder of the lock undo them if this process dies among them (kill -9)."""
        for _, final in self.staged:
            self.backups[final] = self._temporary("old", final) if os.path.lexists(final) else None
        for name in retired_names:
            final = posixpath.join(self.work_dir, name)
            self.retiring.append((final, self._temporary("old", final)))
        journal = Commit(
            renames=tuple((f, self.backups[f], self.digests[f]) for _, f in self.staged),
            retired=tuple(self.retiring),
            folders=tuple(self.folders),
        )
        self.journal = posixpath.join(self.work_dir, f"{COMMIT_PREFIX}{os.getpid()}.json")
        replace_file(self.journal, msgspec.json.encode(journal))

    def retire(self, final: str, backup: str) -> None:
        try:
            os.rename(final, backup)
        except OSError:
            return
        self.retired.append((final, backup))

    def commit(self) -> None:
        for temporary, final in self.staged:
            backup = self.backups.get(final)
            try:
                if backup is not None:
                    _keep_copy(final, backup)
                os.replace(temporary, final)
            except OSError as error:
                if backup is not None:
                    with contextlib.suppress(OSError):
                        os.unlink(backup)
                raise WriteError(f"cannot write {final}: {error.strerror}") from None
            self.done.append((final, backup))
        self._close_journal()  # the new set is whole: from here on nothing is to be undone

    def _close_journal(self) -> None:
        if self.journal is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.journal)
            self.journal = None

    def rollback(self) -> None:
        for final, backup in reversed(self.done):
            with contextlib.suppress(OSError):
                if backup is None:
                    os.unlink(final)
                else:
                    os.replace(backup, final)
        for final, backup in reversed(self.retired):
            with contextlib.suppress(OSError):
                os.replace(backup, final)
        for temporary, _ in self.staged:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        remove_dirs(self.folders)
        self._close_journal()

    def finish(self) -> None:
        for _, backup in [*self.done, *self.retired]:
            if backup is not None:
                with contextlib.suppress(OSError):
                    os.unlink(backup)


def _keep_copy(final: str, backup: str) -> None:
    """A backup of `final` that leaves it in place (a hard link), else by moving it aside."""
    try:
        os.link(final, backup, follow_symlinks=False)
    except OSError:
        os.rename(final, backup)


def replace_file(path: str, text: str | bytes) -> None:
    """Write `path` whole or not at all (a temporary beside it, fsync, rename), without the
    work_dir lock: for a record that changes while its job runs. An emit that removes stale
    temporaries meanwhile costs a retry, never a half-written file."""
    folder, name = posixpath.split(path)
    temporary = posixpath.join(folder, f"{TEMP_PREFIX}{name}.{os.getpid()}")
    data = text.encode() if isinstance(text, str) else text
    for attempt in range(3):
        try:
            descriptor = created_anew(temporary)  # this process's own name
            try:
                os.write(descriptor, data)
                os.fsync(descriptor)
            finally:
                os.close(descriptor)
            os.replace(temporary, path)
            return
        except FileNotFoundError:
            if attempt == 2:
                raise WriteError(f"cannot write {path}: its temporary was removed") from None
        except OSError as error:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise WriteError(f"cannot write {path}: {error.strerror}") from None


def replace_file_streamed(path: str, chunks: Iterable[bytes]) -> None:
    """Write `path` whole or not at all from chunks as they come (a large export never whole
    in memory): a temporary beside it, fsync, rename; removed when anything fails."""
    folder, name = posixpath.split(path)
    temporary = posixpath.join(folder or ".", f"{TEMP_PREFIX}{name}.{os.getpid()}")
    try:
        descriptor = created_anew(temporary)
    except OSError as error:
        raise WriteError(f"cannot write {path}: {error.strerror}") from None
    try:
        try:
            for chunk in chunks:
                view = memoryview(chunk)
                while view:
                    view = view[os.write(descriptor, view) :]
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        os.replace(temporary, path)
    except OSError as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise WriteError(f"cannot write {path}: {error.strerror}") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


COMMIT_PREFIX = ".scriptast_commit-"
"""An emit's journal of the renames it is making; the next emit (or run) that takes the lock
undoes those of one that died among them."""


class Commit(msgspec.Struct, frozen=True, kw_only=True):
    """The renames of one emit: each file's final path, the backup of the file it replaces (None:
    there was none) and the sha256 of the new text; each earlier file retired and its backup;
    the folders it created."""

    renames: tuple[tuple[str, str | None, str], ...]
    retired: tuple[tuple[str, str], ...]
    folders: tuple[str, ...] = ()


def undo_killed_commits(work_dir: str) -> None:
    """Put work_dir back as it was before an emit that died among its renames (this process
    holds the lock, so the emit that wrote a journal found here is gone): each file it put in
    place is the one it replaced again, or removed if it was new and is still as written; each
    file it retired is back."""
    with contextlib.suppress(OSError), os.scandir(work_dir) as entries:
        notes = [e.path for e in entries if e.name.startswith(COMMIT_PREFIX) and e.is_file()]
    for path in notes:
        try:
            commit = msgspec.json.decode(_regular_bytes(path), type=Commit)
        except (OSError, msgspec.DecodeError, msgspec.ValidationError):
            close_undo(path)
            continue
        _revert(commit)
        close_undo(path)


def _revert(commit: Commit) -> None:
    for final, backup, digest in reversed(commit.renames):
        with contextlib.suppress(OSError):
            if backup is not None:
                if os.path.lexists(backup):
                    os.replace(backup, final)
            elif hashlib.sha256(_regular_bytes(final)).hexdigest() == digest:
                os.unlink(final)
    for final, backup in reversed(commit.retired):
        with contextlib.suppress(OSError):
            if os.path.lexists(backup) and not os.path.lexists(final):
                os.rename(backup, final)
    remove_dirs(list(commit.folders))


UNDO_PREFIX = ".scriptast_undo-"
"""A note of how to put work_dir back after a step that writes into it (submit.py), left by
an emit while the step runs; the next emit that takes the lock acts on any it finds."""


class Undo(msgspec.Struct, frozen=True, kw_only=True):
    """What a step may change in `folders`: files at `names`, and inside `sub_folders`; the
    files there before (`before`, absolute paths), their bytes (`backups`), and the links set
    aside meanwhile (`aside`: (where it is now, where it belongs))."""

    folders: tuple[str, ...]
    names: tuple[str, ...]
    sub_folders: tuple[str, ...]
    before: tuple[str, ...]
    aside: tuple[tuple[str, str], ...]
    backups: dict[str, bytes] = {}


def open_undo(work_dir: str, undo: Undo, backups: dict[str, bytes]) -> str:
    """Write the note (with the bytes of the files the step may rewrite); its path."""
    path = posixpath.join(work_dir, f"{UNDO_PREFIX}{os.getpid()}.json")
    note = msgspec.structs.replace(undo, backups=backups)
    replace_file(path, msgspec.json.encode(note).decode())
    return path


def close_undo(path: str) -> None:
    """The step ended and was put back (or taken) by its own emit: the note is not needed."""
    with contextlib.suppress(OSError):
        os.unlink(path)


def undo_killed(work_dir: str) -> None:
    """Put back what a killed emit's step left (this process holds the lock, so the emit that
    wrote a note found here is gone): its new files removed, changed ones restored, links set
    aside put back."""
    with contextlib.suppress(OSError), os.scandir(work_dir) as entries:
        notes = [e.path for e in entries if e.name.startswith(UNDO_PREFIX) and e.is_file()]
    for path in notes:
        try:
            undo = msgspec.json.decode(_regular_bytes(path), type=Undo)
        except (OSError, msgspec.DecodeError, msgspec.ValidationError):
            close_undo(path)
            continue
        _apply(undo)
        close_undo(path)


def _apply(undo: Undo) -> None:
    before = set(undo.before)
    for folder in undo.folders:
        for name in undo.names:
            found = posixpath.join(folder, name)
            if found not in before and os.path.lexists(found) and not os.path.isdir(found):
                with contextlib.suppress(OSError):
                    os.unlink(found)
        for sub in undo.sub_folders:
            inside = posixpath.join(folder, sub)
            if os.path.islink(inside) or not os.path.isdir(inside):
                continue
            with contextlib.suppress(OSError), os.scandir(inside) as entries:
                for entry in list(entries):
                    if entry.path not in before and not entry.is_dir(follow_symlinks=False):
                        with contextlib.suppress(OSError):
                            os.unlink(entry.path)
            with contextlib.suppress(OSError):
                os.rmdir(inside)
    for path, data in undo.backups.items():
        with contextlib.suppress(OSError):
            descriptor = os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW)
            with os.fdopen(descriptor, "wb") as stream:
                stream.write(data)
    for aside, path in undo.aside:
        if os.path.lexists(aside):
            with contextlib.suppress(OSError):
                if os.path.lexists(path) and not os.path.isdir(path):
                    os.unlink(path)
                os.rename(aside, path)
