"""What emit says a job measures (job_spec.json's `measures`): an eval's tasks, model and
quantization, a bench run's report file, the JUnit report a pytest command is made to write in
a mounted folder, and a references file checked before anything is written."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import msgspec
import pytest

from scriptast.builders.read_request import build_request
from scriptast.contract.measured import Measures
from scriptast.pipeline.emit_job import generate, write_outputs
from scriptast.results.judging import expected_figures
from tests.site import Site

ROOT = Path(__file__).resolve().parent.parent
SCRIPTAST = str(Path(__import__("sys").executable).parent / "scriptast")
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"


def job_spec(site: Site, **fields: Any) -> dict[str, Any]:
    output = generate(site.request(**fields), home=str(site.home), machine="x86_64")
    write_outputs(output)
    loaded: dict[str, Any] = json.loads((Path(output.job.work_dir) / "job_spec.json").read_text())
    return loaded


def test_an_eval_names_its_tasks_model_and_samples(site: Site) -> None:
    spec = job_spec(site, workflow_type="eval",
                    eval_cmd=f"trtllm-eval --model {LLAMA} --tp_size 2 mmlu --num_samples 100")  # fmt: skip
    assert spec["measures"] == {
        "kind": "eval",
        "model": LLAMA,
        "quantization_known": True,  # the checkpoint has config.json and no hf_quant_config.json
        "tasks": ["mmlu"],
        "num_samples": 100,
    }


@pytest.mark.parametrize(
    ("task", "tasks", "figure"),
    [
        ("covost2 --lang_pair en_zh-CN", ["covost2_en_zh-CN"], "covost2_en_zh-CN bleu"),
        ("covost2", ["covost2_en_de"], "covost2_en_de bleu"),  # upstream's default pair
    ],
)
def test_a_covost2_eval_is_judged_on_the_bleu_of_its_language_pair(
    site: Site, task: str, tasks: list[str], figure: str
) -> None:
    spec = job_spec(site, workflow_type="eval", eval_cmd=f"trtllm-eval --model {LLAMA} {task}")
    assert spec["measures"]["tasks"] == tasks
    assert expected_figures(msgspec.convert(spec["measures"], Measures)) == [figure]


def test_an_eval_reads_the_checkpoints_quantization(site: Site) -> None:
    folder = site.models / LLAMA
    (folder / "hf_quant_config.json").write_text(
        json.dumps({"quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}})
    )
    spec = job_spec(site, workflow_type="eval", eval_cmd=f"trtllm-eval --model {LLAMA} gsm8k",
                    device_type="H100")  # fmt: skip
    measures = spec["measures"]
    assert (measures["quant_algo"], measures["kv_cache_quant_algo"]) == ("FP8", "FP8")
    assert measures["gpu_type"] == "H100"


def test_a_bench_report_json_is_a_path_where_the_job_runs(site: Site) -> None:
    bench = f"trtllm-bench --model {LLAMA} throughput --dataset /d.json --report_json out/r.json"
    spec = job_spec(site, workflow_type="bench", bench_cmd=bench)
    assert spec["measures"] == {
        "kind": "bench", "model": LLAMA, "report_json": f"{site.repo}/out/r.json"}  # fmt: skip
    expanded = job_spec(site, workflow_type="bench", bench_cmd=bench.replace("out/", "$OUT/"))
    assert "report_json" not in expanded["measures"]  # where $OUT lands is not known here


@pytest.mark.parametrize(
    ("command", "junit", "written"),
    [
        ("pytest -v test_unmarked.py::test_plain", "{work}/results.xml", True),
        ("python3 -m pytest test_unmarked.py::test_plain", "{work}/results.xml", True),
        ("pytest test_unmarked.py::test_plain --junitxml=mine.xml", "{repo}/tests/integration/defs/mine.xml",
         False),
        ("pytest test_unmarked.py::test_plain --junit-xml /abs/r.xml", "/abs/r.xml", False),
    ],
)  # fmt: skip
def test_a_pytest_command_writes_junit_xml(
    site: Site, command: str, junit: str, written: bool
) -> None:
    spec = job_spec(site, workflow_type="pytest", test_cmd=command)
    work = site.work("job")
    expected = junit.format(work=work, repo=site.repo)
    assert spec["measures"] == {"kind": "pytest", "junit": expected}
    script = next(work.glob("*.slurm")).read_text()
    assert (f"--junitxml={expected}" in script) is written
    assert mounted(script, str(work))


def mounted(script: str, folder: str) -> bool:
    """A --container-mounts entry shows `folder` at its own path in the container."""
    mounts = script.split("--container-mounts=")[1].split()[0].split(",")
    pairs = [m.split(":")[:2] for m in mounts]
    return any(src == dst and (folder + "/").startswith(src + "/") for src, dst in pairs)


def test_a_work_dir_outside_home_and_checkout_is_mounted_for_the_report(
    site: Site, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "scratch/job"
    job_spec(site, workflow_type="pytest", test_cmd="pytest test_unmarked.py::test_plain",
             work_dir=str(elsewhere))  # fmt: skip
    script = next(elsewhere.glob("*.slurm")).read_text()
    assert f"--junitxml={elsewhere}/results.xml" in script
    assert mounted(script, str(elsewhere)) and f",{elsewhere}:{elsewhere}" in script


def test_a_pytest_command_scriptast_cannot_extend_measures_nothing(site: Site) -> None:
    spec = job_spec(site, workflow_type="pytest",
                    test_cmd="pytest test_unmarked.py::test_plain && echo done")  # fmt: skip
    assert "measures" not in spec
    assert spec["success_patterns"] == ["passed"]  # judged by its patterns, as before


def test_the_references_file_is_recorded_absolute(site: Site) -> None:
    reference = ROOT / "examples/references.yaml"
    spec = job_spec(site, workflow_type="bench",
                    bench_cmd=f"trtllm-bench --model {LLAMA} throughput --dataset /d.json",
                    reference=str(reference))  # fmt: skip
    assert spec["measures"]["references"] == str(reference)


def test_a_references_file_that_does_not_parse_is_one_error_and_nothing_is_written(
    site: Site, tmp_path: Path
) -> None:
    bad = tmp_path / "refs.toml"
    bad.write_text("[broken\n")
    work = site.work("job")
    request = site.fields(workflow_type="bench", reference=str(bad),
                          bench_cmd=f"trtllm-bench --model {LLAMA} throughput")  # fmt: skip
    request_file = tmp_path / "request.json"
    request_file.write_text(json.dumps(request))
    done = subprocess.run([SCRIPTAST, "emit", "bench", "--request", str(request_file)],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"error: references file {bad} is not valid TOML")
    assert not work.exists()


def test_run_refuses_a_bad_references_file_before_submitting(site: Site, tmp_path: Path) -> None:
    output = generate(
        build_request(site.fields(workflow_type="bench", bench_cmd=f"trtllm-bench --model {LLAMA} "
                                  "throughput"), {}),
        home=str(site.home), machine="x86_64",
    )  # fmt: skip
    write_outputs(output)
    bad = tmp_path / "refs.yaml"
    bad.write_text(f"{LLAMA}:\n  batch:\n    output_throughput: {{lower: -0.1}}\n")
    done = subprocess.run([SCRIPTAST, "run", output.job.work_dir, "--reference", str(bad)],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line == (f"error: references file {bad}: {LLAMA} / batch / output_throughput has no "
                    "value: give the reference as a number")  # fmt: skip
    assert not (Path(output.job.work_dir) / "run.json").exists()


@pytest.mark.parametrize(
    ("options", "dtype", "spec_dec_algo"),
    [
        ("speculative_config:\n  decoding_type: Eagle3\n  max_draft_len: 3\n", None, "Eagle3"),
        ("speculative_config:\n  decoding_type: AUTO\n", None, "NGram"),  # AUTO runs NGram
        ("dtype: bfloat16\nkv_cache_config:\n  free_gpu_memory_fraction: 0.8\n", "bfloat16", None),
        ("dtype: auto\n", None, None),
    ],
)
def test_an_eval_reads_its_llm_api_options(
    site: Site, options: str, dtype: str | None, spec_dec_algo: str | None
) -> None:
    """The dtype and speculative decoding of `--extra_llm_api_options` (relative to the
    checkout the command runs in), as accuracy_core reads them off the LLM's args."""
    (site.repo / "extra.yaml").write_text(options)
    spec = job_spec(site, workflow_type="eval",
                    eval_cmd=f"trtllm-eval --model {LLAMA} --extra_llm_api_options extra.yaml "
                    "gsm8k")  # fmt: skip
    measures = spec["measures"]
    assert (measures.get("dtype"), measures.get("spec_dec_algo")) == (dtype, spec_dec_algo)
    assert "llm_api_unread" not in measures


def test_unread_llm_api_options_are_said(site: Site) -> None:
    spec = job_spec(site, workflow_type="eval",
                    eval_cmd=f"trtllm-eval --model {LLAMA} --extra_llm_api_options nowhere.yaml "
                    "gsm8k")  # fmt: skip
    assert spec["measures"]["llm_api_unread"].startswith("nowhere.yaml could not be read here")


def test_the_reference_entry_of_the_speculative_decoding_is_used() -> None:
    """DeepSeek-V3-Lite's gsm8k entry with spec_dec_algo MTP (64.44), not the plain one (64.74),
    as get_hypothesis_testing_params picks it; a dtype no entry has finds none."""
    from scriptast.contract.measured import Measures
    from scriptast.results.accuracy import Threshold, task_threshold

    repo = str(ROOT / "tests/fixtures/trtllm")
    mtp = Measures(kind="eval", model="deepseek-ai/DeepSeek-V3-Lite", tasks=("gsm8k",),
                   quantization_known=True, spec_dec_algo="MTP")  # fmt: skip
    found = task_threshold("gsm8k", mtp, repo)
    assert isinstance(found, Threshold) and found.reference == 64.44
    assert "spec_dec_algo MTP" in found.origin
    plain = task_threshold("gsm8k", Measures(kind="eval", model="deepseek-ai/DeepSeek-V3-Lite",
                                             quantization_known=True), repo)  # fmt: skip
    assert isinstance(plain, Threshold) and plain.reference == 64.74
    fp32 = Measures(kind="eval", model="deepseek-ai/DeepSeek-V3-Lite", dtype="float32")
    missing = task_threshold("gsm8k", fp32, repo)
    assert isinstance(missing, str) and "dtype float32" in missing
