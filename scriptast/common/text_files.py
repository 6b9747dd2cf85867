"""A user's input files: that one given exists, and its text as UTF-8 or one InputError line that
names the file and the byte."""

from __future__ import annotations

import errno
import os
import stat
import time
from pathlib import Path

from scriptast.common.memo import Memo
from scriptast.errors import InputError, ResolveError

_CONTENTS: Memo[bytes] = Memo(64)
"""File bytes by the file's path and identity (device, inode, size, modification and change
times): a sweep reads the same repository and cluster files for every job."""
SETTLED_NS = 1_000_000_000
"""How long ago a file must have changed for its bytes to be remembered."""
MOST_INPUT_BYTES = 16 * 1024 * 1024
"""No input file of scriptast (request, sweep, slurm_env, properties, test file, config) is
larger; a larger one, or one that never ends, is refused before it exhausts memory."""


def require_file(path: str | None, field: str) -> str:
    """`path`, which must name a file; else the error names `field`."""
    if not path:
        raise ResolveError(f"{field} is required here (--{field.replace('_', '-')})", field=field)
    if not Path(path).is_file():
        raise ResolveError(f"{field} {path} does not exist or is not a file", field=field)
    return path


def decode_utf8(data: bytes, what: str) -> str:
    """`data` as UTF-8 text, or InputError naming the first byte that is not."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        hint = " (UTF-16?)" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else ""
        raise InputError(
            f"{what} is not UTF-8 text{hint}: byte 0x{data[error.start]:02x} at offset "
            f"{error.start}; save it as UTF-8"
        ) from None


def regular_file_bytes(
    path: str | Path, most: int = MOST_INPUT_BYTES, *, follow_links: bool = True
) -> tuple[bytes, os.stat_result]:
    """The bytes and status of the regular file at `path`, or OSError: not a regular file (a
    FIFO or a device is never read, and never opened so as to block), more than `most`, or
    (`follow_links` False) a symbolic link."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow_links else os.O_NOFOLLOW)
    descriptor = os.open(os.fspath(path), flags)
    try:
        status = os.fstat(descriptor)
        if stat.S_ISDIR(status.st_mode):
            raise OSError(errno.EISDIR, os.strerror(errno.EISDIR))
        if not stat.S_ISREG(status.st_mode):
            raise OSError(errno.EINVAL, "not a regular file (a FIFO, a device or a socket)")
        too_big = OSError(errno.EFBIG, f"larger than the {most // 2**20} MiB an input may be")
        if status.st_size > most:
            raise too_big
        chunks = []
        total = 0
        while chunk := os.read(descriptor, 1 << 20):
            total += len(chunk)
            if total > most:
                raise too_big
            chunks.append(chunk)
        return b"".join(chunks), status
    finally:
        os.close(descriptor)


def file_bytes(path: str | Path) -> bytes:
    """The bytes of the file at `path`, or the OSError that reading it raises (see
    regular_file_bytes). Remembered while the file's identity stays the same: a file changed
    on disk is read again."""
    name = os.fspath(path)
    data = _CONTENTS.get(_identity(name, os.stat(name)))
    if data is None:
        data, status = regular_file_bytes(name)
        # a file changed within the last second may change again within the same timestamp
        if time.time_ns() - max(status.st_mtime_ns, status.st_ctime_ns) > SETTLED_NS:
            _CONTENTS.put(_identity(name, status), data)
    return data


def _identity(name: str, status: os.stat_result) -> tuple[str, int, int, int, int, int]:
    return (name, status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns,
            status.st_ctime_ns)  # fmt: skip


def read_text_file(path: str | Path, what: str) -> str:
    """The UTF-8 text of the file `what` names, or InputError (unreadable, not UTF-8)."""
    try:
        data = file_bytes(path)
    except OSError as error:
        raise InputError(f"cannot read {what} {path}: {error.strerror}") from None
    return decode_utf8(data, f"{what} {path}")


def yaml_problem(error: Exception) -> str:
    """A YAML error as one line: `line L, column C: problem`."""
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    problem = getattr(error, "problem", None) or getattr(error, "context", None) or str(error)
    return where + " ".join(str(problem).split())
