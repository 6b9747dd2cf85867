"""Reading a user's files: bytes remembered only while the file stays the same, and only once
it has settled; errors as reading raises them."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scriptast.common import text_files
from scriptast.common.text_files import file_bytes, read_text_file
from scriptast.errors import InputError


@pytest.fixture(autouse=True)
def _forget() -> Iterator[None]:
    text_files._CONTENTS.clear()
    yield
    text_files._CONTENTS.clear()


def _settle(path: Path, seconds_ago: float) -> None:
    """Set the file's modification time that far back (its change time stays now: a test
    that wants the file remembered lowers SETTLED_NS instead)."""
    then = time.time() - seconds_ago
    os.utime(path, (then, then))


def test_a_settled_file_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"one")
    monkeypatch.setattr(text_files, "SETTLED_NS", -(10**12))
    assert file_bytes(path) == b"one"
    opened: list[object] = []
    real_open = open

    def counting_open(*args: Any, **kwargs: Any) -> Any:
        opened.append(args[0])
        return real_open(*args, **kwargs)

    monkeypatch.setattr("builtins.open", counting_open)
    assert file_bytes(path) == b"one"
    assert not opened


def test_a_changed_file_is_read_again_even_at_the_same_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"one")
    _settle(path, 60)
    monkeypatch.setattr(text_files, "SETTLED_NS", -(10**12))
    assert file_bytes(path) == b"one"
    path.write_bytes(b"two")
    _settle(path, 30)
    assert file_bytes(path) == b"two"


def test_a_file_that_just_changed_is_not_remembered(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"one")
    assert file_bytes(path) == b"one"
    assert len(text_files._CONTENTS) == 0
    path.write_bytes(b"two")  # the same size, quite likely the same timestamp
    assert file_bytes(path) == b"two"


def test_a_replaced_file_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text_files, "SETTLED_NS", -(10**12))
    path = tmp_path / "f"
    path.write_bytes(b"one")
    assert file_bytes(path) == b"one"
    other = tmp_path / "g"
    other.write_bytes(b"two")
    os.replace(other, path)
    assert file_bytes(path) == b"two"


def test_errors_are_those_of_reading(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"cannot read test file .*: No such file or directory"):
        read_text_file(tmp_path / "absent", "test file")
    with pytest.raises(InputError, match="Is a directory"):
        read_text_file(tmp_path, "test file")
    path = tmp_path / "bad"
    path.write_bytes(b"\xff")
    with pytest.raises(InputError, match="not UTF-8 text: byte 0xff"):
        read_text_file(path, "test file")
