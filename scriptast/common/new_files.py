"""A file created anew at a path, never written through a link: what stood there (a stale
temporary, an earlier log, a link planted to make us write another file) is removed, never
opened, and the file is created exclusively."""

from __future__ import annotations

import contextlib
import os
import stat


def created_anew(path: str, mode: int = 0o644) -> int:
    """A descriptor open for writing on a new, empty file at `path` (a folder there stays and
    makes this fail); OSError when it cannot be made."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        return os.open(path, flags, mode)
    except FileExistsError:
        pass
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            os.unlink(path)
    return os.open(path, flags, mode)
