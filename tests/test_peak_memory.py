"""The peak memory the hostile-input and long-log tests bound is the command's own, however much
the test process itself holds (the count the kernel gives a child forked from it starts at the
parent's high-water mark, and that made every bound pass or fail on the parent's size)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.peak_memory import run_measured

MIB = 1 << 20


def test_a_small_command_measures_small_beside_a_large_test_process() -> None:
    held = b"x" * (320 * MIB)  # written, so resident: the test process's high-water mark
    naive = subprocess.Popen([sys.executable, "-c", "pass"])
    _, _, usage = os.wait4(naive.pid, 0)
    assert usage.ru_maxrss * 1024 >= 300 * MIB  # why the launcher exists
    done = run_measured([sys.executable, "-c", "pass"])
    assert done.returncode == 0
    assert done.peak_bytes < 60 * MIB, done.peak_bytes >> 20
    assert len(held) == 320 * MIB


def test_what_the_command_holds_is_counted() -> None:
    done = run_measured([sys.executable, "-c", "data = b'x' * (150 << 20)"])
    assert done.returncode == 0
    assert 150 * MIB < done.peak_bytes < 220 * MIB, done.peak_bytes >> 20


def test_the_exit_code_and_the_time_bound_are_the_commands() -> None:
    assert run_measured([sys.executable, "-c", "raise SystemExit(3)"]).returncode == 3
    slow = run_measured([sys.executable, "-c", "import time; time.sleep(30)"], seconds=0.5)
    assert slow.returncode == -9
