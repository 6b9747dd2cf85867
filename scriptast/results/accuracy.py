"""Accuracy held against the repository's own references, as upstream's
tests/integration/defs/accuracy/accuracy_core.py does: each task's alpha, sigma and sample
count, the model's entry in references/<task>.yaml matched on its accuracy specs, and the
threshold of a one-sided hypothesis test, reference + z(alpha) * sqrt(2 sigma^2 / n), z the
standard normal quantile (the sign turned when lower is better)."""

from __future__ import annotations

import math
import os
from statistics import NormalDist
from typing import Any, TypeGuard

import msgspec

from scriptast.contract.measured import Check, Figure, Measures

REFERENCES_DIR = "tests/integration/defs/accuracy/references"


class Task(msgspec.Struct, frozen=True):
    """One accuracy task's hypothesis-test parameters: alpha, sigma, the samples of its whole
    set, the figure of trtllm-eval's log it judges, and which way is better."""

    alpha: float
    sigma: float
    num_samples: int
    figure: str
    higher_is_better: bool = True


TASKS: dict[str, Task] = {
    "cnn_dailymail": Task(0.002, 11.06, 512, "cnn_dailymail rouge1"),
    "mmlu": Task(0.05, 50, 4096, "mmlu accuracy"),
    "gsm8k": Task(0.05, 50, 1319, "gsm8k accuracy"),
    "gpqa_diamond": Task(0.05, 50, 198, "gpqa_diamond accuracy"),
    "json_mode_eval": Task(0.05, 50, 100, "json_mode_eval accuracy"),
    "mmmu": Task(0.05, 50, 900, "mmmu accuracy"),
    "longbench_v2": Task(0.05, 50, 215, "longbench_v2 accuracy"),
    "longbench_v1": Task(0.05, 50, 4750, "longbench_v1 accuracy"),
    "voxpopuli": Task(0.05, 50, 32, "voxpopuli wer", higher_is_better=False),
}
"""accuracy_core.py's AccuracyTask classes that trtllm-eval has a command for, by dataset name."""
FIGURES = frozenset(task.figure for task in TASKS.values())
"""The figures an accuracy reference may apply to."""
SPEC_KEYS = ("dtype", "quant_algo", "kv_cache_quant_algo", "spec_dec_algo", "extra_acc_spec")


class Threshold(msgspec.Struct, frozen=True):
    """A reference accuracy, the threshold the test puts on it, and where both came from."""

    reference: float
    threshold: float
    higher_is_better: bool
    origin: str


def threshold(reference: float, alpha: float, sigma: float, samples: int, higher: bool) -> float:
    """accuracy_core's threshold: reference + z(alpha) * sqrt(2 sigma^2 / n) when higher
    is better, minus that term when lower is.

    >>> round(threshold(74.20, 0.05, 50, 1319, True), 2)
    71.0
    """
    scale = math.sqrt(2 * sigma**2 / samples)
    shift = NormalDist().inv_cdf(alpha) * scale
    return reference + shift if higher else reference - shift


def references_path(repo_root: str, task: str) -> str:
    """Where the repository keeps a task's references."""
    return os.path.join(repo_root, REFERENCES_DIR, f"{task}.yaml")


def task_threshold(
    task_name: str, measures: Measures, repo_root: str | None, samples: int | None
) -> Threshold | str:
    """The threshold for the model's accuracy on a task, or why there is none."""
    task = TASKS.get(task_name)
    if task is None:
        return f"{task_name} has no accuracy task in accuracy_core.py"
    if not repo_root:
        return "the job names no repo_root to read the accuracy references from"
    if not measures.model:
        return "the eval command names no --model"
    path = references_path(repo_root, task_name)
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as error:
        return f"no references file {path} ({error.strerror})"
    try:
        table = load_yaml(data)
    except ValueError as error:
        return f"{path} is not YAML a reference can be read from ({error})"
    if not isinstance(table, dict):
        return f"{path} is not a mapping of models"
    key = model_key(measures.model, list(table))
    if key is None:
        return f"{path} has no entry for model {measures.model}"
    entry = matching_entry(table.get(key), measures)
    if entry is None:
        return f"{path} has no entry for {key} with {spec_words(measures)}"
    return _from_entry(task, entry, samples, f"{path}: {key}, {spec_words(measures)}")


def load_yaml(data: bytes) -> Any:
    """A YAML document's data; ValueError saying where it is not YAML."""
    import yaml

    from scriptast.common.text_files import yaml_problem

    try:
        return yaml.safe_load(data)
    except yaml.YAMLError as error:
        raise ValueError(yaml_problem(error)) from None
    except RecursionError:
        raise ValueError("it nests too deeply") from None


def _from_entry(
    task: Task, entry: dict[str, Any], samples: int | None, origin: str
) -> Threshold | str:
    value = entry.get(task.figure.split()[-1].lower(), entry.get("accuracy"))
    if not _number(value):
        return f"{origin}: the entry has no accuracy value"
    higher = entry.get("higher_is_better", task.higher_is_better)
    alpha = entry.get("alpha", task.alpha)
    sigma = entry.get("sigma", task.sigma)
    count = samples or entry.get("num_samples", task.num_samples)
    if not (_number(alpha) and _number(sigma) and isinstance(count, int) and count > 0):
        return f"{origin}: alpha, sigma or num_samples is not a number"
    bound = threshold(float(value), float(alpha), float(sigma), count, bool(higher))
    return Threshold(float(value), bound, bool(higher), f"{origin} (n={count})")


def _number(value: object) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def model_key(model: str, keys: list[str]) -> str | None:
    """The references' key for a model: the same name, else the one key whose last part is the
    model's last part (a local path's folder), compared without case."""
    if model in keys:
        return model
    found = [k for k in keys if isinstance(k, str) and model_tail(k) == model_tail(model)]
    return found[0] if len(found) == 1 else None


def model_tail(model: str) -> str:
    """A model's last part, without case: a local path's folder, an HF id's name."""
    return model.rstrip("/").rsplit("/", 1)[-1].lower()


def matching_entry(entries: object, measures: Measures) -> dict[str, Any] | None:
    """The first entry whose accuracy specs are the run's, as accuracy_core's
    get_hypothesis_testing_params matches (dtype defaults to 'auto', the others to None)."""
    if not isinstance(entries, list):
        return None
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


def accuracy_check(figure: Figure, measures: Measures, repo_root: str | None) -> Figure:
    """The figure with its check against the repository's reference, or why none applied."""
    task_name = next((t for t, task in TASKS.items() if task.figure == figure.name), None)
    if task_name is None:
        return figure
    found = task_threshold(task_name, measures, repo_root, figure.samples or measures.num_samples)
    if isinstance(found, str):
        return msgspec.structs.replace(figure, unchecked=found)
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
    return msgspec.structs.replace(figure, check=check)
