"""The local transport: a scheduler's commands as child processes of this machine, its files read
and written here (without following a link)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import posixpath
import subprocess
from collections.abc import Sequence

from scriptast.common.new_files import created_anew
from scriptast.common.text_files import regular_file_bytes
from scriptast.contract.transport import Completed
from scriptast.errors import RunError

MOST_FETCHED = 1 << 30
"""A file larger than this is not brought into memory whole."""


class LocalTransport:
    """Slurm's tools on this machine's PATH."""

    where = "this machine"

    def run(
        self, argv: Sequence[str], *, timeout: float = 60.0, cwd: str | None = None
    ) -> Completed:
        """Run `argv` without a shell; a program that is not installed is a RunError. Ctrl-C
        while it runs reaches it as SIGINT first (a waiting salloc then revokes its request)."""
        try:
            process = subprocess.Popen(
                list(argv),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                errors="replace",
                stdin=subprocess.DEVNULL,
                cwd=cwd,
            )
        except FileNotFoundError:
            raise RunError(
                f"{argv[0]} is not installed on {self.where} (is Slurm's client installed and on "
                "PATH?)"
            ) from None
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _stop(process)
            return Completed(code=124, out="", err=f"{argv[0]} did not answer in {timeout:g} s")
        except BaseException:
            _stop(process)
            raise
        return Completed(code=process.returncode, out=out, err=err)

    def run_shell(
        self, command: str, *, timeout: float = 60.0, data: bytes | None = None
    ) -> Completed:
        """`sh -c COMMAND` here, `data` on its stdin."""
        try:
            done = subprocess.run(
                ["/bin/sh", "-c", command],
                input=data if data is not None else b"",
                capture_output=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            return Completed(code=124, out="", err=f"{command!r} did not end in {timeout:g} s")
        return Completed(
            code=done.returncode,
            out=done.stdout.decode("utf-8", "replace"),
            err=done.stderr.decode("utf-8", "replace"),
        )

    def stream(self, command: str) -> subprocess.Popen[bytes]:
        """A long-running `sh -c COMMAND` whose stdout is read as it comes."""
        return subprocess.Popen(
            ["/bin/sh", "-c", command],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )

    def close(self) -> None:
        """Nothing to close here."""

    def fetch(self, path: str) -> bytes | None:
        """A regular file's bytes (None: it is not there, or is a link, a FIFO or a device)."""
        return _fetch(path)

    def put(
        self, path: str, data: bytes, *, executable: bool = False, sha256: str | None = None
    ) -> Completed:
        """Write `path` whole (a temporary beside it, checked, renamed), never through a
        link."""
        return _put(path, data, executable, sha256)


def _fetch(path: str) -> bytes | None:
    try:
        return regular_file_bytes(path, MOST_FETCHED, follow_links=False)[0]
    except OSError:
        return None


def _put(path: str, data: bytes, executable: bool, sha256: str | None) -> Completed:
    folder, name = posixpath.split(path)
    temporary = posixpath.join(folder, f".{name}.scriptast-{os.getpid()}.tmp")
    try:
        os.makedirs(folder, exist_ok=True)
        descriptor = created_anew(temporary, 0o755 if executable else 0o644)
        try:
            os.write(descriptor, data)
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        if sha256 is not None:
            written = regular_file_bytes(temporary, len(data) + 1, follow_links=False)[0]
            if hashlib.sha256(written).hexdigest() != sha256:
                os.unlink(temporary)
                why = f"{path}: the sent file's sha256 is not {sha256}"
                return Completed(code=3, out="", err=why)
        os.replace(temporary, path)
    except OSError as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        return Completed(code=1, out="", err=f"cannot write {path}: {error.strerror}")
    return Completed(code=0, out="", err="")


def _stop(process: subprocess.Popen[str]) -> None:
    """SIGINT, then after a few seconds SIGKILL, and reap."""
    import signal

    process.send_signal(signal.SIGINT)
    try:
        process.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
