"""syrupy extensions that store snapshots as plain files under the top-level snapshots/ folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

SNAPSHOT_ROOT = Path(__file__).resolve().parent.parent / "snapshots"


class _PlainFile(SingleFileSnapshotExtension):
    _write_mode = WriteMode.TEXT

    @classmethod
    def dirname(cls, *, test_location: Any) -> str:
        return str(SNAPSHOT_ROOT / test_location.basename)


class SlurmFile(_PlainFile):
    file_extension = "slurm"


class ShellFile(_PlainFile):
    file_extension = "sh"


class JsonFile(_PlainFile):
    file_extension = "json"


EXTENSIONS: dict[str, type[_PlainFile]] = {".slurm": SlurmFile, ".sh": ShellFile, ".json": JsonFile}
