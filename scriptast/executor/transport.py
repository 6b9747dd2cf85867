"""Where `run` runs Slurm's commands: here as child processes. (The ssh transport for a remote
cluster has the same shape, so submit, follow, judge and cancel are one code over both.)"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from typing import Protocol

import msgspec

from scriptast.errors import RunError


class Completed(msgspec.Struct, frozen=True):
    """A finished command: its exit code and its output as text."""

    code: int
    out: str
    err: str

    def last_line(self) -> str:
        """The command's last non-empty line of stderr (else stdout): what it said last."""
        for text in (self.err, self.out):
            lines = [line.strip() for line in text.splitlines() if line.strip()]
            if lines:
                return lines[-1]
        return f"exit code {self.code}"


class Transport(Protocol):
    """Runs a command where the cluster's tools are, and says where that is."""

    @property
    def where(self) -> str: ...

    def run(
        self, argv: Sequence[str], *, timeout: float = 60.0, cwd: str | None = None
    ) -> Completed: ...


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


def _stop(process: subprocess.Popen[str]) -> None:
    """SIGINT, then after a few seconds SIGKILL, and reap."""
    import signal

    process.send_signal(signal.SIGINT)
    try:
        process.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
