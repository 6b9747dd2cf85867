"""Follow a log file from a byte offset, here or on a cluster (one `tail -c +N -F` over the ssh
master): each read takes only what was appended since the last, hands it to the job's scanner and
to the terminal, and never reads the file again from the top."""

from __future__ import annotations

import errno
import os
import shlex
import stat
import subprocess
import threading
from collections.abc import Callable
from typing import Protocol

from scriptast.contract.transport import Transport
from scriptast.executor.log_verdict import LogScanner
from scriptast.executor.shown import ShownStream

CHUNK = 1 << 20
REFUSED_LINK, REFUSED_KIND = 3, 4
REFUSALS = {
    REFUSED_LINK: "a symbolic link: never read through",
    REFUSED_KIND: "not a regular file (a FIFO, a device or a folder): not read",
}
"""How a cluster's log follower ends when the log is no file to follow, and what that says."""
MOST_PENDING = 4 * CHUNK
"""Bytes of a cluster log received and not yet read: past this the receiving thread waits."""
MOST_HELD = 1 << 16
"""Bytes of a line without its newline held back for the job's prefix; more are written."""


class Tail(Protocol):
    """A log followed from an offset, here or on a cluster."""

    path: str
    scanner: LogScanner
    offset: int
    refused: str | None
    """Why the log is not read (a link or a FIFO planted at its path), once that is seen."""

    def read(self) -> int: ...

    def rewind(self, scanner: LogScanner) -> None:
        """Read the log again from its start, into a new scanner (the job runs again)."""
        ...

    def close(self) -> None: ...


class LogTail:
    """One log file, read from `offset` on as it grows (a file that does not exist yet is
    empty; one that shrank was truncated and is read again from its start)."""

    def __init__(self, path: str, scanner: LogScanner, sink: Callable[[bytes], None]) -> None:
        self.path = path
        self.scanner = scanner
        self.sink = sink
        self.offset = 0
        self.refused: str | None = None
        self.stale: tuple[int, int, int] | None = None
        """What the file was when the job was seen running again (a rewind): until it changes
        (the new run truncates it as it starts), what it holds is the earlier run's."""
        self.read_whole: tuple[int, int, int] | None = None
        """What the file was when it was last read to its end: while it stays so, a read
        costs one lstat (the logs of a sweep are looked at several times a second)."""

    @property
    def exists(self) -> bool:
        """The job has created the file."""
        return os.path.exists(self.path)

    def read(self, most: int = 16 * CHUNK) -> int:
        """Read what was appended (at most `most` bytes this time); the number of bytes read."""
        if self.refused is not None:
            return 0
        if self.read_whole is not None:
            try:
                if _stamp(os.lstat(self.path)) == self.read_whole:
                    return 0
            except OSError:
                return 0
        flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            descriptor = os.open(self.path, flags)
        except OSError as error:
            if error.errno == errno.ELOOP:
                self.refused = REFUSALS[REFUSED_LINK]
            return 0
        total = 0
        try:
            status = os.fstat(descriptor)
            if not stat.S_ISREG(status.st_mode):
                self.refused = REFUSALS[REFUSED_KIND]
                return 0
            if self.stale is not None:
                if _stamp(status) == self.stale:
                    return 0  # not written since the rewind: still the earlier run's
                self.stale = None
            size = status.st_size
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
            self.read_whole = _stamp(status) if self.offset == size else None
        finally:
            os.close(descriptor)
        return total

    def rewind(self, scanner: LogScanner) -> None:
        """Read the log again from its start, into `scanner`, once the new run has written it
        (a requeued job's batch step truncates it as it starts, which may come after the job is
        seen running): the earlier run's lines never reach the new scanner."""
        self.offset, self.scanner, self.read_whole = 0, scanner, None
        try:
            self.stale = _stamp(os.stat(self.path, follow_symlinks=False))
        except OSError:
            self.stale = None

    def close(self) -> None:
        """The job is over: read what is left (a log its last run never wrote to is read
        whole: it was written anew before the rewind)."""
        self.stale = self.read_whole = None
        self.read(most=1 << 62)


def _stamp(status: os.stat_result) -> tuple[int, int, int]:
    """A file's identity and last change: inode, size, modification time."""
    return status.st_ino, status.st_size, status.st_mtime_ns


class LineSink:
    """Bytes written to a stream as they come, their control characters escaped (a job never
    drives the terminal), or, for one of several jobs, whole lines with the job's name in front
    so that interleaved logs stay readable (a line longer than MOST_HELD is cut into pieces)."""

    def __init__(self, write: Callable[[bytes], None], prefix: str | None) -> None:
        self.write = write
        self.prefix = prefix.encode() if prefix else None
        self._partial = b""
        self._shown = ShownStream()

    def __call__(self, data: bytes) -> None:
        self._take(self._shown(data))

    def _take(self, data: bytes) -> None:
        if self.prefix is None:
            if data:
                self.write(data)
            return
        *lines, self._partial = (self._partial + data).split(b"\n")
        if len(self._partial) > MOST_HELD:
            lines.append(self._partial)
            self._partial = b""
        if lines:
            self.write(b"".join(self.prefix + line + b"\n" for line in lines))

    def flush(self) -> None:
        """Write what is held: a last line that has no newline."""
        self._take(self._shown.flush())
        if self.prefix is not None and self._partial:
            self.write(self.prefix + self._partial + b"\n")
            self._partial = b""


class RemoteLogTail:
    """A log followed through a transport by one `tail -c +N -F` (a cluster's, over the ssh
    master): a thread collects what arrives, each read hands it on; the end is read once more
    from the last offset."""

    def __init__(
        self, path: str, scanner: LogScanner, sink: LineSink, transport: Transport
    ) -> None:
        self.path = path
        self.scanner = scanner
        self.sink = sink
        self.transport = transport
        self.offset = 0
        self.refused: str | None = None
        self._chunks: list[bytes] = []
        self._room = threading.Condition()
        self._remote_pid: int | None = None
        self._pid_read = threading.Event()
        self._pending = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._reader: threading.Thread | None = None

    def _start(self) -> None:
        # tail follows a file that exists by inotify at once, one that does not yet only by
        # polling, seconds late: wait for the job to create it, then follow it
        quoted = shlex.quote(self.path)
        # the first line is the follower's pid there, so that close() ends it on the cluster
        # too (a channel closed by the client ends neither the loop nor a quiet `tail -F`)
        self._remote_pid = None
        self._pid_read = threading.Event()
        self._process = self.transport.stream(
            f"echo $$; while [ ! -e {quoted} ]; do sleep 0.2; done; "
            f"[ -L {quoted} ] && exit {REFUSED_LINK}; [ -f {quoted} ] || exit {REFUSED_KIND}; "
            f"exec tail -c +{self.offset + 1} -F -s 0.2 -- {quoted} 2>/dev/null"
        )
        self._reader = threading.Thread(target=self._collect, daemon=True)
        self._reader.start()

    def _collect(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        descriptor = self._process.stdout.fileno()
        head = b""
        while b"\n" not in head and (byte := os.read(descriptor, 1)):
            head += byte
        if head.strip().isdigit():
            self._remote_pid = int(head)
        self._pid_read.set()
        while chunk := os.read(descriptor, 65536):
            with self._room:
                # a log written faster than it is read waits in the pipe, not in memory
                while self._pending >= MOST_PENDING:
                    self._room.wait()
                self._chunks.append(chunk)
                self._pending += len(chunk)

    def _hand_on(self, data: bytes) -> None:
        self.offset += len(data)
        self.scanner.feed(data)
        self.sink(data)

    def read(self) -> int:
        """Hand on what arrived since the last read; bytes handed on. A follower that ended
        (the master dropped) is started again from the last offset."""
        if self.refused is not None:
            return 0
        if self._process is None:
            self._start()
        elif self._process.poll() is not None and self._reader is not None:
            if self._process.returncode in REFUSALS:
                self.refused = REFUSALS[self._process.returncode]
                self._process = None
                return 0
            self._end_there()
            self._drain()
            self._reader.join(timeout=5)
            self._drain()
            self._start()
        return self._drain()

    def rewind(self, scanner: LogScanner) -> None:
        """Follow the log again from its start, into `scanner`: the follower there is ended
        and what it sent is dropped; the next read starts a new one."""
        if self._process is not None:
            self._end_there()
            self._process.terminate()
            self._process.wait()
            with self._room:
                self._chunks.clear()
                self._pending = 0
                self._room.notify_all()
            if self._reader is not None:
                self._reader.join(timeout=5)
            self._process = self._reader = None
        with self._room:
            self._chunks.clear()
            self._pending = 0
        self.offset, self.scanner = 0, scanner

    def _end_there(self) -> None:
        """End the follower on the cluster (its loop waiting for the log, or its tail)."""
        self._pid_read.wait(timeout=5)
        if self._remote_pid is not None:
            self.transport.run_shell(f"kill {self._remote_pid} 2>/dev/null; true")
            self._remote_pid = None

    def _drain(self) -> int:
        with self._room:
            data = b"".join(self._chunks)
            self._chunks.clear()
            self._pending = 0
            self._room.notify_all()
        if data:
            self._hand_on(data)
        return len(data)

    def close(self) -> None:
        """Stop following, and read what the file holds past the last offset."""
        if self._process is not None:
            self._end_there()
            self._process.terminate()
            self._process.wait()
            self._drain()  # room for a reader waiting to append its last chunk
            if self._reader is not None:
                self._reader.join(timeout=5)
            self._drain()
        if self.refused is not None:
            return
        quoted = shlex.quote(self.path)
        rest = f"test ! -L {quoted} && exec tail -c +{self.offset + 1} -- {quoted} 2>/dev/null"
        streamed(self.transport, rest, self._hand_on)


def streamed(transport: Transport, command: str, take: Callable[[bytes], object]) -> bool:
    """Run `command` through the transport and hand its output on in chunks as it comes (a
    large file never whole in memory); True when it succeeded."""
    process = transport.stream(command)
    assert process.stdout is not None
    try:
        while chunk := os.read(process.stdout.fileno(), CHUNK):
            take(chunk)
    finally:
        process.stdout.close()
        code = process.wait()
    return code == 0
