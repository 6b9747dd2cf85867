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

    @classmethod
    def get_snapshot_name(cls, *, test_location: Any, index: Any = 0) -> str:
        """A snapshot given a name is stored under that name alone."""
        if isinstance(index, str):
            return index
        return super().get_snapshot_name(test_location=test_location, index=index)


class SlurmFile(_PlainFile):
    file_extension = "slurm"


class ShellFile(_PlainFile):
    file_extension = "sh"


class JsonFile(_PlainFile):
    file_extension = "json"


class TextFile(_PlainFile):
    file_extension = "txt"


class YamlFile(_PlainFile):
    file_extension = "yaml"


class PythonFile(_PlainFile):
    file_extension = "py"


EXTENSIONS: dict[str, type[_PlainFile]] = {
    ".py": PythonFile,
    ".slurm": SlurmFile,
    ".sh": ShellFile,
    ".json": JsonFile,
    ".txt": TextFile,
    ".yaml": YamlFile,
}
