"""What an eval job measures: each trtllm-eval task's score, for the model its `--model`
names, quantized as the checkpoint's hf_quant_config.json says (when it can be read here), with
the dtype and speculative decoding its `--extra_llm_api_options` file sets, on `--num_samples`
samples or the task's whole set."""

from __future__ import annotations

import json
import os
import posixpath

from scriptast.builders.categories.eval.work import EvalWork
from scriptast.builders.request.parts import EvalRequest
from scriptast.builders.resolution.job import ResolvedJob
from scriptast.common.text_files import regular_file_bytes
from scriptast.contract.measured import Measures
from scriptast.readers.shellwords import flag_value, tokenize, whole_flag

TASK_COMMANDS = frozenset(
    {
        "cnn_dailymail",
        "mmlu",
        "gsm8k",
        "gpqa_diamond",
        "gpqa_main",
        "gpqa_extended",
        "json_mode_eval",
        "mmmu",
        "longbench_v1",
        "longbench_v2",
        "voxpopuli",
        "covost2",
    }
)
"""trtllm-eval's task commands (tensorrt_llm/commands/eval.py adds one per evaluator)."""
QUANT_CONFIG = "hf_quant_config.json"


def measures(job: ResolvedJob) -> Measures | None:
    """The eval command's tasks and model, and the model's quantization when known."""
    eval_cmd = job.request.part(EvalRequest).eval_cmd
    if not eval_cmd or not isinstance(job.work, EvalWork):
        return None  # over several nodes, the perf-sanity path runs it
    argv = [t.value for t in tokenize(eval_cmd, "eval_cmd") if t.kind == "word"]
    model = flag_value(argv, "--model")
    tasks = tuple(dict.fromkeys(word for word in argv if word in TASK_COMMANDS))
    if "covost2" in tasks:  # its score is named by its language pair (en_de by default)
        pair = flag_value(argv, "--lang_pair") or "en_de"
        tasks = tuple(f"covost2_{pair}" if task == "covost2" else task for task in tasks)
    samples = flag_value(argv, "--num_samples")
    quant, kv, known = _quantization(job, model)
    dtype, spec_dec, unread = _llm_api_specs(job, argv)
    return Measures(
        kind="eval",
        model=model,
        quant_algo=quant,
        kv_cache_quant_algo=kv,
        quantization_known=known,
        dtype=dtype,
        spec_dec_algo=spec_dec,
        llm_api_unread=unread,
        tasks=tasks,
        num_samples=int(samples) if samples and samples.isdigit() else None,
        gpu_type=job.request.device_type,
        max_batch_size=whole_flag(argv, "--max_batch_size"),
    )


def _llm_api_specs(job: ResolvedJob, argv: list[str]) -> tuple[str | None, str | None, str | None]:
    """(dtype, spec_dec_algo, why unread) of the LLM API options file `--extra_llm_api_options`
    names, as accuracy_core reads them off the LLM's args: `dtype` ('auto' is the default),
    `speculative_config.decoding_type` (AUTO runs NGram). Read here at its path, or under the
    repository the command runs in."""
    path = flag_value(argv, "--extra_llm_api_options", "--config")
    if path is None:
        return None, None, None
    if job.placement.remote:
        return None, None, f"{path} is on the cluster"
    from scriptast.common.bounded_yaml import BoundedYamlError, load_bounded

    local = path if posixpath.isabs(path) else posixpath.join(job.project_path, path)
    try:
        data, _ = regular_file_bytes(local, 1 << 20)
        options = load_bounded(data)[0]
    except (OSError, BoundedYamlError) as error:
        return None, None, f"{path} could not be read here ({error})"
    if not isinstance(options, dict):
        return None, None, f"{path} is not a mapping of LLM API options"
    dtype = options.get("dtype")
    speculative = options.get("speculative_config")
    decoding = speculative.get("decoding_type") if isinstance(speculative, dict) else None
    if decoding == "AUTO":
        decoding = "NGram"
    return (
        dtype if isinstance(dtype, str) and dtype != "auto" else None,
        decoding if isinstance(decoding, str) else None,
        None,
    )


def _quantization(job: ResolvedJob, model: str | None) -> tuple[str | None, str | None, bool]:
    """(quant_algo, kv_cache_quant_algo, known) from the checkpoint's hf_quant_config.json,
    found here through the models mount; unknown when it cannot be read."""
    folder = _host_folder(job, model)
    if folder is None:
        return None, None, False
    try:
        data, _ = regular_file_bytes(posixpath.join(folder, QUANT_CONFIG), 1 << 20)
        quantization = json.loads(data).get("quantization", {})
    except FileNotFoundError:
        config = os.path.isfile(posixpath.join(folder, "config.json"))
        return None, None, config  # a checkpoint without the file is not quantized
    except (OSError, ValueError, AttributeError):
        return None, None, False
    if not isinstance(quantization, dict):
        return None, None, False
    quant = quantization.get("quant_algo")
    kv = quantization.get("kv_cache_quant_algo")
    return (quant if isinstance(quant, str) else None, kv if isinstance(kv, str) else None, True)


def _host_folder(job: ResolvedJob, model: str | None) -> str | None:
    """The model's folder on this machine: a path under llm_models_root seen through its
    mount's host path, or the host path the HF id was found at."""
    if not model or job.placement.remote or job.models_host_path is None:
        return None
    root = job.llm_models_root.rstrip("/")
    if model.startswith(root + "/"):
        return posixpath.join(job.models_host_path, model[len(root) + 1 :])
    for _, command in job.work.commands():
        local = flag_value(command.argv or (), "--model")
        if local and local.startswith(root + "/"):
            return posixpath.join(job.models_host_path, local[len(root) + 1 :])
    return None
