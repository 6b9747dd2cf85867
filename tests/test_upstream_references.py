"""Figures judged against upstream's own accuracy references (tests/fixtures/upstream_references,
each file's upstream commit in its SOURCES.md), as accuracy_core.py judges them: a value just
above and just below each task's threshold, a model with no entry, a quantization with no entry,
an explicit threshold. The thresholds here are worked out from accuracy_core.py's formula and
each task class's alpha, sigma and NUM_SAMPLES (or the entry's num_samples)."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from scriptast.contract.measured import Figure, Measures, Source
from scriptast.results.accuracy import accuracy_check
from scriptast.results.eval_lines import EvalLines

REPO = str(Path(__file__).resolve().parent / "fixtures/upstream_references")
STEP = 0.001


def judged(name: str, value: float, model: str, **specs: object) -> Figure:
    figure = Figure(name=name, value=value, unit="%", source=Source(file="job.out", line=1))
    measures = msgspec.structs.replace(
        Measures(kind="eval", model=model, quantization_known=True), **specs
    )
    return accuracy_check(figure, measures, REPO).figure


@pytest.mark.parametrize(
    ("name", "model", "specs", "threshold", "higher"),
    [
        # MMLU: alpha 0.05, sigma 50, n 4096 (the class's; never the log's 14042)
        ("mmlu accuracy", "meta-llama/Llama-3.1-8B-Instruct", {}, 66.35268, True),
        # PassKeyRetrieval64k: alpha 0.5, sigma 0: the threshold is the reference itself
        ("passkey_retrieval_64k accuracy", "meta-llama/Llama-3.1-8B", {}, 99.0, True),
        ("passkey_retrieval_64k accuracy", "meta-llama/Llama-3.1-8B",
         {"quant_algo": "FP8_PER_CHANNEL_PER_TOKEN"}, 99.0, True),
        # SlimPajama6B: lower is better, alpha 0.01, sigma 4.48, n 86
        ("slimpajama_6b perplexity", "gradientai/Llama-3-8B-Instruct-Gradient-1048k", {},
         9.25235, False),
        # ZeroScrolls: alpha 0.002, sigma 6.97, n 80
        ("zero_scrolls rouge1", "Yukang/LongAlpaca-7B", {}, 27.71111, True),
        # VideoMME: the entry's num_samples (300)
        ("videomme accuracy", "Qwen/Qwen3-VL-2B-Instruct", {}, 47.78491, True),
        # VoxPopuli: WER, lower is better; the entry's `wer` and its num_samples (1842)
        ("voxpopuli wer", "nvidia/Nemotron-3-Nano-Omni-30B-A3B-Reasoning-FP8",
         {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}, 8.90999, False),
        # Humaneval: alpha 0.002, sigma 15.08, n 164
        ("humaneval rouge1", "bigcode/santacoder", {}, 26.89498, True),
        ("passkey_retrieval_128k accuracy", "gradientai/Llama-3-8B-Instruct-Gradient-1048k", {},
         99.0, True),
        # LongBenchV2: alpha 0.05, sigma 50, n 215; the entry needs its quantization and MTP
        ("longbench_v2 accuracy", "DeepSeek-R1-0528",
         {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8", "spec_dec_algo": "MTP"}, 37.06781,
         True),
        ("json_mode_eval accuracy", "meta-llama/Llama-3.1-8B-Instruct",
         {"spec_dec_algo": "Eagle"}, 62.36913, True),
        ("gpqa_diamond accuracy", "meta-llama/Llama-3.3-70B-Instruct", {}, 37.69430, True),
        # an explicit threshold replaces the computed one
        ("gsm8k_inferencemax accuracy", "nvidia/MiniMax-M3-NVFP4",
         {"quant_algo": "MIXED_PRECISION"}, 94.0, True),
        ("gsm8k_inferencex accuracy", "nvidia/MiniMax-M3-NVFP4",
         {"quant_algo": "MIXED_PRECISION", "kv_cache_quant_algo": "FP8",
          "spec_dec_algo": "Eagle3"}, 94.0, True),
    ],
)  # fmt: skip
def test_a_value_just_past_the_threshold_passes_and_just_short_of_it_does_not(
    name: str, model: str, specs: dict[str, object], threshold: float, higher: bool
) -> None:
    better, worse = (threshold + STEP, threshold - STEP) if higher else (
        threshold - STEP, threshold + STEP)  # fmt: skip
    passing, failing = judged(name, better, model, **specs), judged(name, worse, model, **specs)
    assert passing.check is not None and failing.check is not None, passing.unchecked
    bound = passing.check.lower if higher else passing.check.upper
    assert bound == pytest.approx(threshold, abs=1e-4)
    assert (passing.check.ok, failing.check.ok) == (True, False)
    if threshold in (94.0,):
        assert "explicit threshold" in passing.check.origin


def test_a_model_with_no_entry_is_never_judged_by_another_models() -> None:
    figure = judged("mmlu accuracy", 10.0, "someorg/Llama-3.1-8B-Instruct")
    assert figure.check is None and figure.unchecked is not None
    assert "no entry for model someorg/Llama-3.1-8B-Instruct" in figure.unchecked


def test_a_quantization_with_no_entry_is_never_judged_by_another() -> None:
    figure = judged("mmlu accuracy", 10.0, "meta-llama/Llama-3.1-8B-Instruct", quant_algo="NVFP4")
    assert figure.check is None and figure.unchecked is not None
    assert "no entry for meta-llama/Llama-3.1-8B-Instruct with NVFP4" in figure.unchecked


def test_entries_that_need_an_extra_spec_are_not_taken_without_it() -> None:
    """Every longbench_v1 entry names an extra_acc_spec; a run that names none matches none."""
    figure = judged("longbench_v1 accuracy", 10.0, "Qwen3/Qwen3-30B-A3B-Instruct-2507")
    assert figure.check is None and "has no entry for" in (figure.unchecked or "")


def test_every_entry_of_every_upstream_file_passes_the_checks() -> None:
    """The checks that refuse a bad entry (a non-finite score, alpha outside (0, 1), ...) take
    every entry of every upstream file kept, so they never call a real reference bad; `{}`
    (mixed_modality_qwen_vl.yaml) is read as no entries."""
    from scriptast.common.bounded_yaml import load_bounded
    from scriptast.results.accuracy import _checked_entry

    folder = Path(REPO) / "tests/integration/defs/accuracy/references"
    entries = 0
    for path in sorted(folder.glob("*.yaml")):
        table, lines = load_bounded(path.read_bytes())
        assert isinstance(table, dict), path
        if path.name == "acceptance_length.yaml":
            continue
        for model, listed in table.items():
            for entry in listed:
                key = "wer" if "wer" in entry else "accuracy"
                assert _checked_entry(entry, lines, str(path), key) is None, (path, model)
                entries += 1
    assert entries >= 60
    assert load_bounded((folder / "mixed_modality_qwen_vl.yaml").read_bytes())[0] == {}


def test_a_task_with_no_class_in_accuracy_core_is_not_judged() -> None:
    figure = Figure(name="mixed_modality_omni accuracy", value=1.0, unit="%",
                    source=Source(file="x", line=1))  # fmt: skip
    measures = Measures(kind="eval", model="nvidia/Nemotron-3-Nano-Omni-30B-A3B-Reasoning-BF16")
    assert accuracy_check(figure, measures, REPO).figure == figure


@pytest.mark.parametrize(
    ("line", "name", "value"),
    [
        ("[TRT-LLM] [I] lm-eval gsm8k_inferencemax exact_match,strict-match accuracy: 95.60",
         "gsm8k_inferencemax accuracy", 95.6),
        ("[TRT-LLM] [I] lm-eval gsm8k average accuracy: 74.52", "gsm8k accuracy", 74.52),
        ("[TRT-LLM] [I] lm-eval longbench average 'score' across 6 subgroups: 47.12",
         "longbench_v1 accuracy", 47.12),
    ],
)  # fmt: skip
def test_lm_evals_score_lines_are_read_as_upstreams_evaluators_print_them(
    line: str, name: str, value: float
) -> None:
    """lm_eval.py logs `lm-eval <task> <scores_filter> accuracy: X` when the task's class names
    a filter, `... average accuracy: X` otherwise, and LongBench v1's subgroup mean."""
    reader = EvalLines()
    reader.block(line.encode(), "eval.log", 1)
    assert {f.name: f.value for f in reader.figures()} == {name: value}
