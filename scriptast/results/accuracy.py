"""Accuracy held against the repository's own references, exactly as upstream's
tests/integration/defs/accuracy/accuracy_core.py does: the task's class gives alpha, sigma, the
sample count and the direction; the model's entry is found by its exact name
(`yaml.safe_load(f).get(model_name, [])`: no entry, no check) and matched on its accuracy specs;
the entry's own alpha, sigma, num_samples and higher_is_better override the class's (never the
count a log prints); an entry's explicit `threshold` replaces the computed one
(threshold_override); else the threshold of a one-sided test, reference + z(alpha) *
sqrt(2 sigma^2 / n), the sign turned when lower is better. Every number of an entry is checked
first: a bad one is an error naming its file, line and key, never a threshold."""

from __future__ import annotations

import math
import os
from statistics import NormalDist
from typing import Any

import msgspec

from scriptast.common.bounded_yaml import BoundedYamlError, KeyLines, load_bounded
from scriptast.common.numbers import is_finite
from scriptast.common.text_files import regular_file_bytes
from scriptast.contract.measured import Check, Figure, Measures

REFERENCES_DIR = "tests/integration/defs/accuracy/references"
MOST_SAMPLES = 10_000_000
"""A sample count past any data set a reference is measured on."""


class Task(msgspec.Struct, frozen=True):
    """One accuracy task's class in accuracy_core.py: alpha, beta, sigma, the samples of its
    set (NUM_SAMPLES), the figure of a log it judges, and which way is better; `dataset` is
    its references file's name when that is not the task's."""

    alpha: float
    beta: float
    sigma: float
    num_samples: int
    figure: str
    higher_is_better: bool = True
    dataset: str | None = None


TASKS: dict[str, Task] = {
    "cnn_dailymail": Task(0.002, 0.2, 11.06, 512, "cnn_dailymail rouge1"),
    "humaneval": Task(0.002, 0.2, 15.08, 164, "humaneval rouge1"),
    "zero_scrolls": Task(0.002, 0.2, 6.97, 80, "zero_scrolls rouge1"),
    "slimpajama_6b": Task(0.01, 0.2, 4.48, 86, "slimpajama_6b perplexity", False, "SlimPajama-6B"),
    "mmlu": Task(0.05, 0.2, 50, 4096, "mmlu accuracy"),
    "gsm8k": Task(0.05, 0.2, 50, 1319, "gsm8k accuracy"),
    "gsm8k_inferencemax": Task(0.05, 0.2, 50, 1319, "gsm8k_inferencemax accuracy"),
    "gsm8k_inferencex": Task(0.05, 0.2, 50, 1319, "gsm8k_inferencex accuracy"),
    "gpqa_diamond": Task(0.05, 0.2, 50, 198, "gpqa_diamond accuracy"),
    "json_mode_eval": Task(0.05, 0.2, 50, 100, "json_mode_eval accuracy"),
    "mmmu": Task(0.05, 0.2, 50, 900, "mmmu accuracy"),
    "passkey_retrieval_64k": Task(0.5, 0.2, 0, 20, "passkey_retrieval_64k accuracy"),
    "passkey_retrieval_128k": Task(0.5, 0.2, 0, 20, "passkey_retrieval_128k accuracy"),
    "longbench_v2": Task(0.05, 0.2, 50.0, 215, "longbench_v2 accuracy"),
    "longbench_v1": Task(0.05, 0.2, 50.0, 4750, "longbench_v1 accuracy"),
    "voxpopuli": Task(0.05, 0.2, 50.0, 32, "voxpopuli wer", higher_is_better=False),
    "videomme": Task(0.05, 0.2, 50.0, 300, "videomme accuracy"),
}
"""accuracy_core.py's AccuracyTask classes, by the name of their references file (DATASET);
gsm8k_inferencex's class takes GSM8KInferenceMax's parameters (its references file says so)."""
FIGURES = frozenset(task.figure for task in TASKS.values())
"""The figures an accuracy reference may apply to."""
SPEC_KEYS = ("dtype", "quant_algo", "kv_cache_quant_algo", "spec_dec_algo", "extra_acc_spec")


class Threshold(msgspec.Struct, frozen=True):
    """A reference accuracy, the threshold the test puts on it, where both came from, the
    and the sample count the reference was measured on."""

    reference: float
    threshold: float
    higher_is_better: bool
    origin: str
    num_samples: int


class BadReference(msgspec.Struct, frozen=True):
    """A references entry that cannot be judged by: the error line naming file, line and key."""

    error: str


def threshold(reference: float, alpha: float, sigma: float, samples: int, higher: bool) -> float:
    """accuracy_core's compute_threshold: reference + z(alpha) * sqrt(2 sigma^2 / n) when
    higher is better, minus that term when lower is.

    >>> round(threshold(74.20, 0.05, 50, 1319, True), 2)
    71.0
    """
    scale = math.sqrt(2 * sigma**2 / samples)
    shift = NormalDist().inv_cdf(alpha) * scale
    return reference + shift if higher else reference - shift


def references_path(repo_root: str, task: str) -> str:
    """Where the repository keeps a task's references."""
    dataset = TASKS[task].dataset if task in TASKS and TASKS[task].dataset else task
    return os.path.join(repo_root, REFERENCES_DIR, f"{dataset}.yaml")


def task_threshold(task_name: str, measures: Measures, repo_root: str | None) -> (
    Threshold | BadReference | str
):  # fmt: skip
    """The threshold for the model's score on a task, a bad entry, or why there is none."""
    task = TASKS.get(task_name)
    if task is None:
        return f"{task_name} has no accuracy task in accuracy_core.py"
    if not repo_root:
        return "the job names no repo_root to read the accuracy references from"
    if not measures.model:
        return "the eval command names no --model"
    path = references_path(repo_root, task_name)
    try:
        data, _ = regular_file_bytes(path)
    except OSError as error:
        return f"no references file {path} ({error.strerror})"
    try:
        table, lines = load_bounded(data)
    except BoundedYamlError as error:
        return BadReference(f"{path}: {error}")
    if not isinstance(table, dict):
        return BadReference(f"{path}: not a mapping of models to entries")
    key = model_key(measures.model, [k for k in table if isinstance(k, str)])
    if key is None:
        return (f"{path} has no entry for model {measures.model} (looked up by its exact "
                "name, as accuracy_core.py does)")  # fmt: skip
    entries = table[key]
    if not isinstance(entries, list):
        return BadReference(f"{path}:{lines.of(table, key) or 1}: {key}: not a list of entries")
    entry = matching_entry(entries, measures)
    looked_up = key if key == measures.model else f"{key} (the HF id {measures.model} ends in)"
    if entry is None:
        return f"{path} has no entry for {looked_up} with {spec_words(measures)}"
    return _from_entry(task, entry, lines, f"{path}: {looked_up}, {spec_words(measures)}", path)


def load_yaml(data: bytes) -> Any:
    """A YAML document's data, read within bounds (no alias bomb); ValueError saying where it
    is not YAML."""
    return load_bounded(data)[0]


def _from_entry(task: Task, entry: dict[str, Any], lines: KeyLines, origin: str, path: str) -> (
    Threshold | BadReference | str
):  # fmt: skip
    metric = task.figure.split()[-1].lower()
    value_key = metric if metric in entry else "accuracy"
    checked = _checked_entry(entry, lines, path, value_key)
    if isinstance(checked, BadReference):
        return checked
    value = entry.get(value_key)
    if value is None:
        return f"{origin}: the entry has no {value_key} value"
    higher = bool(entry.get("higher_is_better", task.higher_is_better))
    alpha = float(entry.get("alpha", task.alpha))
    sigma = float(entry.get("sigma", task.sigma))
    count = int(entry.get("num_samples", task.num_samples))
    explicit = entry.get("threshold")
    if explicit is not None:
        bound = float(explicit)
    else:
        bound = threshold(float(value), alpha, sigma, count, higher)
    how = "explicit threshold" if explicit is not None else f"n={count}"
    return Threshold(float(value), bound, higher, f"{origin} ({how})", count)


def _checked_entry(
    entry: dict[str, Any], lines: KeyLines, path: str, value_key: str
) -> BadReference | None:
    """The first number of the entry that cannot be used, as an error naming its line."""
    rules: list[tuple[str, Any, str]] = [
        (value_key, is_finite, "a finite number"),
        ("alpha", lambda v: is_finite(v) and 0 < v < 1, "a number between 0 and 1"),
        ("beta", lambda v: is_finite(v) and 0 < v < 1, "a number between 0 and 1"),
        ("sigma", lambda v: is_finite(v) and v >= 0, "a finite number of 0 or more"),
        ("num_samples", lambda v: isinstance(v, int) and not isinstance(v, bool)
         and 0 < v <= MOST_SAMPLES, f"a whole number from 1 to {MOST_SAMPLES:,}"),
        ("threshold", is_finite, "a finite number"),
        ("higher_is_better", lambda v: isinstance(v, bool), "true or false"),
    ]  # fmt: skip
    for key, good, what in rules:
        if key not in entry or (key == value_key and entry[key] is None):
            continue
        value = entry[key]
        if not good(value):
            line = lines.of(entry, key)
            where = f"{path}:{line}" if line else path
            shown = repr(value) if not isinstance(value, float) else str(value)
            return BadReference(
                f"{where}: {key} is {shown}, which is not {what}: the entry cannot be judged "
                "by; fix it in the references file"
            )
    return None


def model_key(model: str, keys: list[str]) -> str | None:
    """The references' key for a model: its exact name, as accuracy_core looks it up; a local
    path is the HF id it ends in (`/models/meta-llama/Llama-3.1-8B-Instruct`), whole: never a
    key that only shares the model's last part."""
    if model in keys:
        return model
    path = model.rstrip("/")
    if not (path.startswith(("/", ".")) or path.count("/") >= 2):
        return None  # an HF id: exactly its name or nothing
    found = [k for k in keys if k.count("/") == 1 and path.endswith("/" + k)]
    return found[0] if len(found) == 1 else None


def model_tail(model: str) -> str:
    """A model's last part, without case: a local path's folder, an HF id's name."""
    return model.rstrip("/").rsplit("/", 1)[-1].lower()


def matching_entry(entries: list[Any], measures: Measures) -> dict[str, Any] | None:
    """The first entry whose accuracy specs are the run's, as accuracy_core's
    get_hypothesis_testing_params matches (dtype defaults to 'auto', the others to None)."""
    specs = {
        "dtype": measures.dtype or "auto",
        "quant_algo": measures.quant_algo,
        "kv_cache_quant_algo": measures.kv_cache_quant_algo,
        "spec_dec_algo": measures.spec_dec_algo,
        "extra_acc_spec": None,
    }
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        if all(
            entry.get(key, "auto" if key == "dtype" else None) == specs[key] for key in SPEC_KEYS
        ):
            return entry
    return None


def spec_words(measures: Measures) -> str:
    """The accuracy specs the entry was looked up by, in words."""
    quant = measures.quant_algo or "no quant_algo"
    kv = measures.kv_cache_quant_algo or "no kv_cache_quant_algo"
    said = "" if measures.quantization_known else " (nothing said otherwise)"
    words = f"{quant}, {kv}{said}"
    if measures.dtype:
        words += f", dtype {measures.dtype}"
    if measures.spec_dec_algo:
        words += f", spec_dec_algo {measures.spec_dec_algo}"
    if measures.llm_api_unread:
        words += f" (LLM API options not read: {measures.llm_api_unread})"
    return words


class Accuracy(msgspec.Struct, frozen=True):
    """A figure checked against the repository's reference, a bad reference's error, and what
    the record should say of the check (a sample count that differs from the reference's)."""

    figure: Figure
    error: str | None = None
    note: str | None = None


def accuracy_check(figure: Figure, measures: Measures, repo_root: str | None) -> Accuracy:
    """The figure with its check against the repository's reference, or why none applied."""
    task_name = next((t for t, task in TASKS.items() if task.figure == figure.name), None)
    if task_name is None:
        return Accuracy(figure)
    found = task_threshold(task_name, measures, repo_root)
    if isinstance(found, str):
        return Accuracy(msgspec.structs.replace(figure, unchecked=found))
    if isinstance(found, BadReference):
        return Accuracy(msgspec.structs.replace(figure, unchecked=found.error), error=found.error)
    higher = found.higher_is_better
    margin = figure.value - found.threshold if higher else found.threshold - figure.value
    check = Check(
        reference=found.reference,
        lower=round(found.threshold, 4) if higher else None,
        upper=None if higher else round(found.threshold, 4),
        origin=found.origin,
        margin=round(margin, 4),
        ok=margin >= 0,
    )
    note = None
    run_samples = figure.samples or measures.num_samples
    if run_samples is not None and run_samples != found.num_samples:
        note = (
            f"{figure.name}: this run evaluated {run_samples} samples; the reference was "
            f"measured on {found.num_samples}, which the threshold uses, as upstream's does"
        )
    return Accuracy(msgspec.structs.replace(figure, check=check), note=note)
