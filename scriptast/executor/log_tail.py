"""Follow a log file from a byte offset: each read takes only what was appended since the last,
hands it to the job's scanner and to the terminal, and never reads the file again from the top."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Protocol

from scriptast.executor.judge import LogScanner

CHUNK = 1 << 20


class Tail(Protocol):
    """A log followed from an offset, here or on a cluster."""

    path: str
    scanner: LogScanner
    offset: int

    def read(self) -> int: ...

    def close(self) -> None: ...


class LogTail:
    """One log file, read from `offset` on as it grows (a file that does not exist yet is
    empty; one that shrank was truncated and is read again from its start)."""

    def __init__(self, path: str, scanner: LogScanner, sink: Callable[[bytes], None]) -> None:
        self.path = path
        self.scanner = scanner
        self.sink = sink
        self.offset = 0

    @property
    def exists(self) -> bool:
        """The job has created the file."""
        return os.path.exists(self.path)

    def read(self, most: int = 16 * CHUNK) -> int:
        """Read what was appended (at most `most` bytes this time); the number of bytes read."""
        try:
            descriptor = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            return 0
        total = 0
        try:
            size = os.fstat(descriptor).st_size
            if size < self.offset:
                self.offset = 0
            while total < most and self.offset < size:
                data = os.pread(descriptor, min(CHUNK, most - total), self.offset)
                if not data:
                    break
                self.offset += len(data)
                total += len(data)
                self.scanner.feed(data)
                self.sink(data)
        finally:
            os.close(descriptor)
        return total

    def close(self) -> None:
        """The job is over: read what is left."""
        self.read(most=1 << 62)


class LineSink:
    """Bytes written to a stream as they come, or, for one of several jobs, whole lines with
    the job's name in front so that interleaved logs stay readable."""

    def __init__(self, write: Callable[[bytes], None], prefix: str | None) -> None:
        self.write = write
        self.prefix = prefix.encode() if prefix else None
        self._partial = b""

    def __call__(self, data: bytes) -> None:
        if self.prefix is None:
            self.write(data)
            return
        *lines, self._partial = (self._partial + data).split(b"\n")
        if lines:
            self.write(b"".join(self.prefix + line + b"\n" for line in lines))

    def flush(self) -> None:
        """Write a last line that has no newline."""
        if self.prefix is not None and self._partial:
            self.write(self.prefix + self._partial + b"\n")
            self._partial = b""
