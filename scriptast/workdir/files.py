"""work_dir's small file operations, below its writes and its journal: replace one file whole
(a temporary beside it, fsync, rename), read a regular file never through a link, create a
folder with its missing parents and remove those again."""

from __future__ import annotations

import contextlib
import os
import posixpath
from collections.abc import Iterable

from scriptast.common.new_files import created_anew
from scriptast.common.text_files import regular_file_bytes
from scriptast.errors import ScriptastError

TEMP_PREFIX = ".scriptast-"
EMITTED_BYTES = 64 * 1024 * 1024
"""No file an emit wrote (or a note it left) is larger."""


class WriteError(ScriptastError):
    """work_dir could not be written; it is as it was."""


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
    if not (created and created[-1] == work_dir) and not os.path.isdir(work_dir):
        raise WriteError(f"work_dir {work_dir} exists and is not a directory")
    return created


def remove_dirs(created: list[str]) -> None:
    """Remove the folders `make_dirs` created, innermost first, those that are empty again."""
    for folder in reversed(created):
        with contextlib.suppress(OSError):
            os.rmdir(folder)


def regular_bytes(path: str) -> bytes:
    """A regular file's bytes, never through a link nor from a FIFO (see regular_file_bytes)."""
    return regular_file_bytes(path, EMITTED_BYTES, follow_links=False)[0]


def replace_file(path: str, text: str | bytes, *, durable: bool = True) -> None:
    """Write `path` whole or not at all (a temporary beside it, fsync unless not `durable`,
    rename), without the work_dir lock: for a record that changes while its job runs. An emit
    that removes stale temporaries meanwhile costs a retry, never a half-written file."""
    folder, name = posixpath.split(path)
    temporary = posixpath.join(folder, f"{TEMP_PREFIX}{name}.{os.getpid()}")
    data = text.encode() if isinstance(text, str) else text
    for attempt in range(3):
        try:
            descriptor = created_anew(temporary)  # this process's own name
            try:
                os.write(descriptor, data)
                if durable:
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
