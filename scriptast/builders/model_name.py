"""The short model name of a job by the seed's rule: lowercase, non-alphanumeric runs -> `_`."""

from __future__ import annotations

import posixpath
import re

from scriptast.readers.shellwords import flag_value, words


def normalize_model_name(text: str) -> str:
    """`Llama-3.1-8B-Instruct` -> `llama_3_1_8b_instruct`."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def from_model_flag(command: str, what: str) -> str | None:
    """The last path component of the last `--model`/`--model_path` in a command."""
    value = flag_value(words(command, what), "--model", "--model_path")
    if not value:
        return None
    name = normalize_model_name(posixpath.basename(value.rstrip("/")))
    return name or None


def from_test(names: tuple[str, ...]) -> str | None:
    """The test class without `Test`, else the function without `test_`."""
    for name in names:
        if name.startswith("Test"):
            return normalize_model_name(name[len("Test") :]) or None
    if names:
        function = names[-1]
        return normalize_model_name(function.removeprefix("test_")) or None
    return None


def from_config(path: str) -> str:
    """A perf config's file stem."""
    return normalize_model_name(posixpath.splitext(posixpath.basename(path))[0]) or "perf_sanity"
