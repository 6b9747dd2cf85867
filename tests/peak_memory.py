"""Run a command and read its own peak resident memory: from a small launcher process, because
the kernel's count for a child forked from pytest starts at pytest's own high-water mark (a
fork or vfork carries the parent's memory until exec, and exec keeps the larger count)."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO

_LAUNCHER = """
import os, subprocess, sys, threading
seconds, report, argv = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
process = subprocess.Popen(argv)
killer = threading.Timer(seconds, process.kill)
if seconds > 0:
    killer.start()
_, status, usage = os.wait4(process.pid, 0)
killer.cancel()
os.write(report, f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss * 1024}".encode())
"""


@dataclass(frozen=True)
class Finished:
    returncode: int  # -9 when killed past the time bound
    peak_bytes: int


def run_measured(argv: list[str], *, seconds: float = 0.0, env: dict[str, str] | None = None,
                 stdout: int | IO[bytes] | None = subprocess.DEVNULL,
                 stderr: int | IO[bytes] | None = subprocess.DEVNULL,
                 cwd: Path | None = None) -> Finished:  # fmt: skip
    """Run ARGV to its end (killed after SECONDS when given): its exit code and peak bytes."""
    read_end, write_end = os.pipe()
    try:
        launcher = subprocess.Popen(
            [sys.executable, "-c", _LAUNCHER, str(seconds), str(write_end), *argv],
            env=env, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL, cwd=cwd,
            pass_fds=(write_end,),
        )  # fmt: skip
        os.close(write_end)
        write_end = -1
        report = b""
        while chunk := os.read(read_end, 64):
            report += chunk
        launcher.wait()
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)
    assert launcher.returncode == 0 and report, f"the launcher failed ({launcher.returncode})"
    code, peak = report.split()
    return Finished(returncode=int(code), peak_bytes=int(peak))
