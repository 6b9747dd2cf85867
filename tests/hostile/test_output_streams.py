"""A closed or full standard output after the files are written: one error line that says the
files were written (they were), exit 1, and no traceback at exit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hostile.bad_inputs import base_fields

SCRIPTAST = str(Path(sys.executable).parent / "scriptast")


def _close_stdout() -> None:
    os.close(1)


@pytest.mark.parametrize("stdout", ["full", "closed"])
@pytest.mark.parametrize("extra", [[], ["--json"]], ids=["summary", "json"])
def test_a_failing_stdout_after_writing_is_reported(
    tmp_path: Path, stdout: str, extra: list[str]
) -> None:
    request = tmp_path / "r.json"
    request.write_text(json.dumps(base_fields(tmp_path)))
    argv = [SCRIPTAST, "emit", "--request", str(request), *extra]
    if stdout == "full":
        with open("/dev/full", "w") as full:
            result = subprocess.run(argv, stdout=full, stderr=subprocess.PIPE, text=True)
    else:
        result = subprocess.run(argv, stderr=subprocess.PIPE, text=True, preexec_fn=_close_stdout)
    assert result.returncode == 1
    reason = "No space left on device" if stdout == "full" else "Bad file descriptor"
    assert result.stderr == (
        f"error: the files were written into {tmp_path / 'work'}, but standard output "
        f"failed: {reason}\n"
    )
    assert (tmp_path / "work" / "job_spec.json").is_file()


def test_stdout_mode_on_a_full_stdout_writes_nothing(tmp_path: Path) -> None:
    request = tmp_path / "r.json"
    request.write_text(json.dumps(base_fields(tmp_path)))
    with open("/dev/full", "w") as full:
        result = subprocess.run(
            [SCRIPTAST, "emit", "--request", str(request), "--stdout"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
        )
    assert result.returncode == 1
    assert (
        result.stderr
        == "error: nothing was written, but standard output failed: No space left on device\n"
    )
    assert not (tmp_path / "work").exists()
