"""All-or-nothing writes into work_dir: a lock, staged files, backups of what is replaced, and a
rollback on any error, SIGINT or SIGTERM, so work_dir is either the new set or as it was.

Temporary files and backups are named `.scriptast-*`; the next emit removes any a kill -9 left,
after undoing the renames of an emit killed among them (its note in work_dir's journal:
scriptast.workdir.journal).
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
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

import msgspec

from scriptast.errors import ScriptastError
from scriptast.workdir.files import (
    TEMP_PREFIX,
    WriteError,
    make_dirs,
    regular_bytes,
    remove_dirs,
)
from scriptast.workdir.journal import Renames, close_journal, open_journal, put_back, recover

LOCK_FILE = ".scriptast.lock"
LOCK_SECONDS = 120.0
"""How long an emit waits for another emit into the same work_dir (SCRIPTAST_LOCK_TIMEOUT)."""
_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGHUP})
_POLL_SECONDS = 0.02


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


class OutputFile(msgspec.Struct, frozen=True):
    """One file to write: absolute path, text, executable bit (a FileToWrite)."""

    path: str
    text: str
    executable: bool = False


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


def replace_one(work_dir: str, item: FileToWrite) -> None:
    """Replace one file of an existing work_dir under its lock: a temporary beside it, then one
    rename, which leaves either the old file or the new, so no journal or backup is needed."""
    from scriptast.common.new_files import created_anew

    with _signals_held() as pending, _locked(work_dir, pending):
        folder, name = posixpath.split(item.path)
        temporary = posixpath.join(folder, f"{TEMP_PREFIX}new-{os.getpid()}-{name}"[:255])
        try:
            mode = 0o755 if item.executable else 0o644
            descriptor = created_anew(temporary, mode)
            with os.fdopen(descriptor, "wb") as stream:
                os.fchmod(stream.fileno(), mode)  # the mode whatever the umask
                stream.write(item.text.encode("utf-8"))
            interrupted(pending, work_dir)
            os.replace(temporary, item.path)
        except BaseException as error:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            if isinstance(error, OSError):
                raise WriteError(f"cannot write {item.path}: {error.strerror}") from None
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
        recover(work_dir)
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
        recorded = json.loads(regular_bytes(posixpath.join(work_dir, spec))).get("files")
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
            current = hashlib.sha256(regular_bytes(posixpath.join(work_dir, name))).hexdigest()
        except OSError:
            continue
        if current == digest:
            stale.append(name)
    return stale


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
        self.step: Renames | None = None
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
                mode = 0o755 if item.executable else 0o644
                descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
                data = item.text.encode("utf-8")
                with os.fdopen(descriptor, "wb") as stream:
                    os.fchmod(stream.fileno(), mode)  # the mode whatever the umask
                    stream.write(data)
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
        self.step = Renames(
            renames=tuple((f, self.backups[f], self.digests[f]) for _, f in self.staged),
            retired=tuple(self.retiring),
            folders=tuple(self.folders),
        )
        self.journal = open_journal(self.work_dir, self.step)

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
            close_journal(self.journal)
            self.journal = None

    def rollback(self) -> None:
        """Put back what was renamed and retired, by the journal's record (as the next emit
        would, had this one been killed), and remove the temporaries and new folders."""
        if self.step is not None:
            put_back(self.step)
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
