"""File names scriptast writes: one safe component inside work_dir, or an error that says why."""

from __future__ import annotations

import posixpath
import re

from scriptast.errors import InputError

NAME_MAX = 255
"""Bytes in one path component on Linux file systems (ext4, xfs, Lustre, NFS)."""
_SAFE_COMPONENT = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*\Z")


def is_safe_component(name: str) -> bool:
    """True when `name` is one plain file-name component (see check_component)."""
    return bool(_SAFE_COMPONENT.match(name)) and len(name.encode("utf-8")) <= NAME_MAX


def check_component(name: str, what: str, *, reserve: int = 0) -> str:
    """`name` if it is one plain file-name component (no `/`, no leading `.` or `-`, not `..`,
    at most NAME_MAX - `reserve` bytes), else InputError naming `what`."""
    if not _SAFE_COMPONENT.match(name):
        raise InputError(
            f"{what} {name!r} is not a safe file name: use letters, digits and _ . + - "
            "(not starting with . or -)"
        )
    size = len(name.encode("utf-8"))
    if size > NAME_MAX - reserve:
        raise InputError(
            f"{what} {name[:40]}... is {size} bytes; with the file suffixes a file name has at "
            f"most {NAME_MAX}: give a shorter --model-name"
        )
    return name


def check_inside(work_dir: str, path: str, *, folder: bool = False) -> str:
    """`path` if it is `work_dir/<one safe component>` (or, with `folder`, one safe folder
    below it), else InputError (a bug or a hostile name would otherwise write outside)."""
    parent, name = posixpath.split(path)
    if folder and posixpath.normpath(parent) != posixpath.normpath(work_dir):
        parent, sub = posixpath.split(parent)
        check_component(sub, "output folder name")
    if posixpath.normpath(parent) != posixpath.normpath(work_dir):
        raise InputError(f"refusing to write {path!r}: it is not directly inside {work_dir}")
    check_component(name, "output file name")
    return path
