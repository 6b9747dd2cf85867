"""Eval's HuggingFace model ids resolved to a directory under the models host path (depth <= 3)."""

from __future__ import annotations

import os
from pathlib import Path

MAX_DEPTH = 3


def is_hf_id(value: str) -> bool:
    """`org/name`: has a `/`, does not start with one, and is not a relative path like ./x."""
    return "/" in value and not value.startswith(("/", ".", "~")) and value.count("/") == 1


def find_model_dir(models_host_path: str, hf_id: str) -> str | None:
    """The path, relative to the models host path, of the first directory (breadth-first,
    sorted, depth <= 3) whose name matches the id's last component case-insensitively."""
    wanted = hf_id.rsplit("/", 1)[-1].lower()
    root = Path(models_host_path)
    if not root.is_dir():
        return None
    level = [root]
    for _ in range(MAX_DEPTH):
        following: list[Path] = []
        for folder in level:
            try:
                children = sorted(p for p in folder.iterdir() if p.is_dir())
            except OSError:
                continue
            for child in children:
                if child.name.lower() == wanted:
                    return os.path.relpath(child, root)
            following.extend(children)
        level = following
    return None
