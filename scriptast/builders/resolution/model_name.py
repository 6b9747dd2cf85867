"""The short model name of a job by one rule for every workflow: the model's own name (an HF id
or a path's last component) lowercased, non-alphanumeric runs -> `_`. pytest reads it from the
test class's MODEL_NAME, as upstream's accuracy tests declare it; a class without one has its
name split where TRT-LLM's class names join the model name's words (`Llama3_1_8BInstruct`)."""

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


def from_test(names: tuple[str, ...], declared: str | None = None) -> str | None:
    """The model the test class declares (MODEL_NAME), else the class without `Test`, else
    the function without `test_`."""
    if declared:
        return normalize_model_name(posixpath.basename(declared.rstrip("/"))) or None
    for name in names:
        if name.startswith("Test"):
            return normalize_model_name(_split_words(name[len("Test") :])) or None
    if names:
        function = names[-1]
        return normalize_model_name(function.removeprefix("test_")) or None
    return None


def _split_words(joined: str) -> str:
    """`Llama3_1_8BInstruct` -> `Llama_3_1_8B_Instruct`: a lowercase letter before an uppercase
    one or a digit, and an uppercase run or a digit before a capitalized word, start a word."""
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z0-9])", "_", joined)
    return re.sub(r"(?<=[A-Z0-9])(?=[A-Z][a-z])", "_", spaced)


def from_config(path: str) -> str:
    """A perf config's file stem."""
    return normalize_model_name(posixpath.splitext(posixpath.basename(path))[0]) or "perf_sanity"
