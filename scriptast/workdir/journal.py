"""work_dir's one crash journal. Before a step changes files there, it writes a note of how to
put them back (`.scriptast_journal-<pid>.json`): an emit's renames (`Renames`), or what a program
emit runs may write (`ProgramWrites`: submit.py). The step's own process puts them back from
that very record when the step fails (`put_back`) and removes the note when the step ends; the
next process to take work_dir's lock puts back what a killed step's note says (`recover`). A
file replaced whole (`Replaced`: run.json as a submission begins) is put back the same way when
the step is refused, with no note: what a killed submission wrote must stay."""

from __future__ import annotations

import contextlib
import hashlib
import os
import posixpath
import stat

import msgspec

from scriptast.common.new_files import created_anew
from scriptast.workdir.files import WriteError, regular_bytes, remove_dirs, replace_file

JOURNAL_PREFIX = ".scriptast_journal-"
Signature = tuple[int, int, int, int]
"""A regular file's (inode, size, mtime in ns, mode): the file changed when this did."""


class Renames(msgspec.Struct, frozen=True, kw_only=True, tag="renames"):
    """The renames of one emit: each file's final path, the backup of the file it replaces (None:
    there was none) and the sha256 of the new text; each earlier file retired and its backup;
    the folders it created."""

    renames: tuple[tuple[str, str | None, str], ...]
    retired: tuple[tuple[str, str], ...]
    folders: tuple[str, ...] = ()


class ProgramWrites(msgspec.Struct, frozen=True, kw_only=True, tag="program_writes"):
    """What a program may change in `folders`: files at `names`, and anything inside
    `sub_folders`; the regular files there before it ran with their signatures (`before`,
    absolute paths; None: not known, so its backup is put back whatever it is now), the bytes of
    those it may rewrite in place (`backups`), the links set aside meanwhile (`aside`: where
    each is now, where it belongs), and the folders made for it (`created`, outermost first)."""

    folders: tuple[str, ...]
    names: tuple[str, ...]
    sub_folders: tuple[str, ...]
    before: dict[str, Signature | None]
    backups: dict[str, bytes] = {}
    aside: tuple[tuple[str, str], ...] = ()
    created: tuple[str, ...] = ()


class Replaced(msgspec.Struct, frozen=True, kw_only=True, tag="replaced"):
    """One file replaced whole (run.json, as a submission begins): its bytes before (None: it
    did not exist). Put back by its own process only when the step is refused: a killed
    submission's record must stay, so that `watch` finds the job it may have submitted, and no
    note of it is written."""

    path: str
    before: bytes | None


Step = Renames | ProgramWrites | Replaced


def listing(folder: str, names: tuple[str, ...], sub_folders: tuple[str, ...]) -> list[str]:
    """The entries at `names` in `folder`, and inside its `sub_folders` (`sub/name`); a link at
    one of them as itself, never followed."""
    found: list[str] = []
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            if entry.name not in names and entry.name not in sub_folders:
                continue
            if entry.name in sub_folders and entry.is_dir(follow_symlinks=False):
                with contextlib.suppress(OSError), os.scandir(entry.path) as inner:
                    found += [f"{entry.name}/{e.name}" for e in inner]
            else:
                found.append(entry.name)
    return sorted(found)


def inventory(folder: str, names: tuple[str, ...], sub_folders: tuple[str, ...]
              ) -> dict[str, Signature]:  # fmt: skip
    """The regular files of `listing`, each with its signature."""
    found: dict[str, Signature] = {}
    for relative in listing(folder, names, sub_folders):
        try:
            info = os.lstat(posixpath.join(folder, relative))
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            found[relative] = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_mode)
    return found


def open_journal(work_dir: str, step: Step) -> str:
    """Write the note of `step` into work_dir; its path. It is written in place, not through a
    temporary and a rename, and not synced: it guards against its process dying among its
    changes (kill -9, out of memory), which the page cache outlives, as do the files it guards
    (not synced either); a note cut short by that death is no note (`recover` removes it
    unread), and nothing was changed before it was whole. A sweep writes a thousand of them:
    each metadata operation saved is kernel time a job."""
    path = posixpath.join(work_dir, f"{JOURNAL_PREFIX}{os.getpid()}.json")
    data = memoryview(msgspec.json.encode(step))
    try:
        descriptor = created_anew(path)
    except OSError as error:
        raise WriteError(f"cannot write {path}: {error.strerror}") from None
    try:
        try:
            while data:
                data = data[os.write(descriptor, data) :]
        finally:
            os.close(descriptor)
    except OSError as error:
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise WriteError(f"cannot write {path}: {error.strerror}") from None
    return path


def close_journal(path: str) -> None:
    """The step ended, or was put back by its own process: its note is not needed."""
    with contextlib.suppress(OSError):
        os.unlink(path)


def put_back(step: Step) -> None:
    """Undo `step` as far as it went: what it renamed into place is the file it replaced again
    (or removed, when new and still as written) and what it retired is back; what a program
    wrote is removed, what it rewrote restored, the links set aside back, its folders gone."""
    if isinstance(step, Renames):
        _renames_back(step)
    elif isinstance(step, ProgramWrites):
        _program_writes_back(step)
    else:
        with contextlib.suppress(OSError, WriteError):
            if step.before is None:
                os.unlink(step.path)
            else:
                replace_file(step.path, step.before)


def recover(work_dir: str) -> None:
    """Put back every step whose note is in work_dir: the process that wrote it is gone (this
    one holds the lock), killed among its changes. Also the two notes of earlier releases. A
    note this user did not write (a shared or another user's work dir) is never acted on, nor
    one reached through a link."""
    mine = os.geteuid()
    notes: list[str] = []
    with contextlib.suppress(OSError), os.scandir(work_dir) as entries:
        for entry in entries:
            if entry.name.startswith((JOURNAL_PREFIX, *_EARLIER)) and _ours(entry, mine):
                notes.append(entry.path)
    for path in sorted(notes):
        step = _read(path)
        if step is not None and not isinstance(step, Replaced):
            put_back(step)
        close_journal(path)


def _ours(entry: os.DirEntry[str], user: int) -> bool:
    """A regular file (never a link) that `user` owns; False when it is gone or unreadable."""
    try:
        return entry.is_file(follow_symlinks=False) and entry.stat(
            follow_symlinks=False).st_uid == user  # fmt: skip
    except OSError:
        return False


def _renames_back(step: Renames) -> None:
    for final, backup, digest in reversed(step.renames):
        with contextlib.suppress(OSError):
            if backup is not None:
                if os.path.lexists(backup):
                    os.replace(backup, final)
            elif hashlib.sha256(regular_bytes(final)).hexdigest() == digest:
                os.unlink(final)
    for final, backup in reversed(step.retired):
        with contextlib.suppress(OSError):
            if os.path.lexists(backup) and not os.path.lexists(final):
                os.rename(backup, final)
    remove_dirs(list(step.folders))


def _program_writes_back(step: ProgramWrites) -> None:
    for folder in step.folders:
        now = inventory(folder, step.names, step.sub_folders)
        for relative in listing(folder, step.names, step.sub_folders):
            path = posixpath.join(folder, relative)
            if path not in step.before:
                if not os.path.isdir(path) or os.path.islink(path):
                    with contextlib.suppress(OSError):
                        os.unlink(path)
            elif step.before[path] != now.get(relative) and path in step.backups:
                _rewrite(path, step.backups[path], step.before[path])
        for sub in step.sub_folders:
            inside = posixpath.join(folder, sub)
            if os.path.isdir(inside) and not os.path.islink(inside):
                with contextlib.suppress(OSError):
                    os.rmdir(inside)  # only when the program made it: it is empty again
    for aside, path in reversed(step.aside):
        if os.path.lexists(aside):
            with contextlib.suppress(OSError):
                if os.path.lexists(path) and not os.path.isdir(path):
                    os.unlink(path)
                os.rename(aside, path)
    remove_dirs(list(step.created))


def _rewrite(path: str, data: bytes, signature: Signature | None) -> None:
    """A file the program rewrote in place, back to its bytes and mode (never through a link)."""
    with contextlib.suppress(OSError):
        descriptor = os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW)
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(data)
        if signature is not None:
            os.chmod(path, stat.S_IMODE(signature[3]))


class _EarlierRenames(msgspec.Struct, frozen=True, kw_only=True):
    renames: tuple[tuple[str, str | None, str], ...]
    retired: tuple[tuple[str, str], ...]
    folders: tuple[str, ...] = ()


class _EarlierProgramWrites(msgspec.Struct, frozen=True, kw_only=True):
    folders: tuple[str, ...]
    names: tuple[str, ...]
    sub_folders: tuple[str, ...]
    before: tuple[str, ...]
    aside: tuple[tuple[str, str], ...]
    backups: dict[str, bytes] = {}


_EARLIER = {".scriptast_commit-": _EarlierRenames, ".scriptast_undo-": _EarlierProgramWrites}
"""The notes earlier releases left (`.scriptast_commit-`, `.scriptast_undo-`), by the same
rules: an emit killed by one of them is still put back."""


def _read(path: str) -> Step | None:
    """The step a note records; None when it is no note this module (or an earlier release)
    wrote."""
    name = posixpath.basename(path)
    try:
        data = regular_bytes(path)
        if name.startswith(JOURNAL_PREFIX):
            return msgspec.json.decode(data, type=Step)
        if name.startswith(".scriptast_commit-"):
            earlier = msgspec.json.decode(data, type=_EarlierRenames)
            return Renames(renames=earlier.renames, retired=earlier.retired,
                           folders=earlier.folders)  # fmt: skip
        undo = msgspec.json.decode(data, type=_EarlierProgramWrites)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    return ProgramWrites(folders=undo.folders, names=undo.names, sub_folders=undo.sub_folders,
                         before=dict.fromkeys(undo.before), backups=undo.backups,
                         aside=undo.aside)  # fmt: skip
