"""The seam a transport fills: where a scheduler's commands run and its files are (this machine,
or a cluster over ssh). Scheduler clients take a Transport; neither side imports the other."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import msgspec

if TYPE_CHECKING:  # a type only: importing subprocess costs emit, which runs nothing, ~14 ms
    import subprocess


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
    """Runs commands where the scheduler's tools are, and moves files to and from there:
    `run` an argv, `run_shell` a shell command line (with `data` on its stdin), `stream` a
    long-running command's stdout, `fetch` a file's bytes, `put` a file whole."""

    @property
    def where(self) -> str: ...

    def run(
        self, argv: Sequence[str], *, timeout: float = 60.0, cwd: str | None = None
    ) -> Completed: ...

    def run_shell(
        self, command: str, *, timeout: float = 60.0, data: bytes | None = None
    ) -> Completed: ...

    def stream(self, command: str) -> subprocess.Popen[bytes]: ...

    def fetch(self, path: str) -> bytes | None: ...

    def close(self) -> None:
        """Close what this transport opened (an ssh master it started)."""
        ...

    def put(
        self, path: str, data: bytes, *, executable: bool = False, sha256: str | None = None
    ) -> Completed:
        """Write `path` whole: under a temporary name, checked (`sha256`: its digest there)
        before it is renamed into place; never through a link."""
        ...
