"""`emit pytest --ci-stage NAME` on stand-ins shaped as upstream's files (the stage list
jenkins/scripts/test_stage_configs.json, the test-db YAML, waives.txt): the stage's tests as
the test-db selects them, its GPUs and nodes, pytest with CI's flags, every split with
--all-splits; and each bad input as one error line naming the file and the line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scriptast.builders.categories.pytest.ci.conditions import stage_query
from scriptast.builders.categories.pytest.ci.testdb_match import Block, matches
from scriptast.builders.categories.pytest.work import PytestWork
from scriptast.errors import ScriptastError
from scriptast.pipeline.emit_job import Output, generate, write_outputs
from tests.site import Site

SCRIPTAST = str(Path(sys.executable).parent / "scriptast")
TEST_DB = "tests/integration/test_lists/test-db"


def stage(site: Site, name: str, **more: Any) -> Output:
    return generate(site.request(workflow_type="pytest", ci_stage=name, **more),
                    machine="x86_64", home=str(site.home))  # fmt: skip


def written(site: Site, name: str, **more: Any) -> tuple[Output, list[str], list[str]]:
    """The stage's job written: its output, its test list's lines, its pytest argv."""
    output = stage(site, name, **more)
    write_outputs(output)
    work = Path(output.job.work_dir)
    test = output.job.work_as(PytestWork).test
    return output, (work / "test_list.txt").read_text().splitlines(), list(test.argv or ())


@pytest.mark.parametrize(
    ("name", "query"),
    [
        ("DGX_H100-PyTorch-3", {"stage": "pre_merge", "backend": "pytorch",
                                "auto_trigger": "others", "orchestrator": "mpi"}),
        ("DGX_B200-4_GPUs-PyTorch-2", {"stage": "pre_merge", "backend": "pytorch",
                                       "auto_trigger": "others", "orchestrator": "mpi",
                                       "gpu": "DGX_B200", "system_gpu_count": "4"}),
        ("DGX_H200-8_GPUs-PyTorch-Post-Merge-1", {"stage": "post_merge", "backend": "pytorch",
                                                  "auto_trigger": "others", "orchestrator": "mpi",
                                                  "gpu": "DGX_H200", "system_gpu_count": "8"}),
        ("DGX_H100-4_GPUs-PyTorch-DeepSeek-1", {"stage": "pre_merge", "backend": "pytorch",
                                                "auto_trigger": "deepseek", "orchestrator": "mpi",
                                                "gpu": "DGX_H100", "system_gpu_count": "4"}),
        ("DGX_H100-4_GPUs-PyTorch-Ray-1", {"stage": "pre_merge", "backend": "pytorch",
                                           "auto_trigger": "others", "orchestrator": "ray",
                                           "gpu": "DGX_H100", "system_gpu_count": "4"}),
        ("A30-CPP-1", {"stage": "pre_merge", "backend": "cpp", "auto_trigger": "others",
                       "orchestrator": "mpi"}),
        ("GB200-8_GPUs-2_Nodes-PyTorch-2", {"stage": "pre_merge", "backend": "pytorch",
                                            "auto_trigger": "others", "orchestrator": "mpi",
                                            "gpu": "GB200", "system_gpu_count": "8"}),
    ],
)  # fmt: skip
def test_the_query_is_what_get_mako_args_from_stage_name_gives(
    name: str, query: dict[str, str]
) -> None:
    assert {key: value for key, value, _ in stage_query(name)} == query


def test_a_block_matches_as_trt_test_db_reads_its_conditions() -> None:
    block = Block(line=3, ranges={"system_gpu_count": {"gte": 4.0, "lte": 4.0}},
                  wildcards={"gpu": ("*b200*",), "cpu": ("x86_64",)},
                  terms={"stage": "pre_merge", "supports_fp8": "true"}, tests=("t.py",))  # fmt: skip
    query = {"stage": "pre_merge", "gpu": "DGX_B200", "system_gpu_count": "4"}
    assert matches(block, query)  # cpu and supports_fp8: keys the query lacks, not checked
    assert not matches(block, {**query, "gpu": "DGX_GB300"})  # '*b200*' is not in it
    assert matches(block, {**query, "gpu": "GB200"})  # it is: as trt-test-db's wildcard
    assert not matches(block, {**query, "system_gpu_count": "8"})
    assert not matches(block, {**query, "stage": "post_merge"})
    assert not matches(block, {**query, "supports_fp8": "false"})
    assert not matches(block, {**query, "system_gpu_count": "four"})


@pytest.mark.parametrize(
    ("name", "gpus", "lines"),
    [
        # 1 GPU, pre-merge: l0_h100's first block (pytorch), not its cpp or post-merge ones
        ("DGX_H100-PyTorch-3", 1, [
            "unittest/_torch/attention/test_attention_mla.py",
            "accuracy/test_llm_api_pytorch.py::TestLlama3_1_8BInstruct::test_fp8[fp8kv=False-attn_backend=TRTLLM-torch_compile=False]",
            "accuracy/test_llm_api_pytorch.py::TestLlama3_1_8BInstruct::test_chunked_prefill[attn_backend=TRTLLM] TIMEOUT (90)",
            'unittest/llmapi/test_llm_pytorch.py -k "not lora"',
            "test_e2e.py::test_openai_chat_example ISOLATION",
            "test_unmarked.py::test_plain",
            "accuracy/test_llm_api_pytorch.py::TestLlama3_1_8BInstruct::test_listed_on_one",
            "accuracy/test_llm_api_pytorch.py::TestLlama3_1_8BInstruct::test_listed_on_several",
        ]),
        # 4 GPUs, pre-merge: l0_dgx_b200's 4-GPU mpi block, not the 2- or 8-GPU ones, not ray
        ("DGX_B200-4_GPUs-PyTorch-2", 4, [
            "accuracy/test_llm_api_pytorch.py::TestNemotronV3Super::test_nvfp4_4gpu_mtp_ar TIMEOUT (60)",
            "accuracy/test_llm_api_pytorch.py::TestQwen3_5_397B_A17B::test_nvfp4[adp4_cutedsl]",
            "disaggregated/test_disaggregated.py::test_disaggregated_deepseek_v3_lite_fp8_nixl[DeepSeek-V3-Lite-fp8]",
            'unittest/_torch/modules/moe/test_moe_module.py::test_configurable_moe_multi_gpu -k "CUTLASS and NVFP4"',
            "test_e2e.py::test_openai_kv_cache_contamination TIMEOUT (120)",
        ]),
        # 8 GPUs, post-merge: l0_dgx_h200's 8-GPU block, not its 4-GPU one
        ("DGX_H200-8_GPUs-PyTorch-Post-Merge-1", 8, [
            "accuracy/test_llm_api_pytorch.py::TestDeepSeekR1::test_fp8_blockscale[throughput] TIMEOUT (180)",
            "accuracy/test_llm_api_pytorch.py::TestLlama4MaverickInstruct::test_auto_dtype[tp8-cuda_graph=True]",
            "disaggregated/test_disaggregated.py::test_disaggregated_deepseek_v3_lite_bf16_cache_aware_balance[DeepSeek-V3-Lite-bf16]",
        ]),
        # 8 GPUs, pre-merge, with an ISOLATION line
        ("DGX_B200-8_GPUs-PyTorch-4", 8, [
            "accuracy/test_disaggregated_serving.py::TestQwen3_8B::test_auto_dtype_with_helix[fifo_v2-cudagraph:with_padding-pp1tp2cp2-overlap_on] TIMEOUT (60)",
            "accuracy/test_llm_api_pytorch.py::TestDeepSeekR1::test_nvfp4_multi_gpus[throughput] TIMEOUT (60)",
            "accuracy/test_llm_api_pytorch.py::TestDeepSeekV4Flash::test_mixed_breakable_cuda_graph TIMEOUT (120) ISOLATION",
            "unittest/_torch/visual_gen/multi_gpu/test_attn2d_attention.py",
            "accuracy/test_llm_api_pytorch.py::TestLlama3_1_8BInstruct::test_listed_on_eight",
        ]),
        # the DeepSeek trigger selects its block only (the others' block says auto_trigger)
        ("DGX_H100-4_GPUs-PyTorch-DeepSeek-1", 4, [
            "accuracy/test_llm_api_pytorch.py::TestDeepSeekV3Lite::test_fp8_block_scales_4gpus[tp4-mtp_nextn=0-fp8kv=False-attention_dp=False-cuda_graph=False-overlap_scheduler=False]",
            "disaggregated/test_disaggregated.py::test_disaggregated_deepseek_v3_lite_fp8[DeepSeek-V3-Lite-fp8]",
        ]),
        # a Ray stage runs the ray block and the blocks that name no orchestrator, as
        # upstream's comment says ("only tests with orchestrator=ray or unspecified")
        ("DGX_H100-4_GPUs-PyTorch-Ray-1", 4, [
            "unittest/_torch/multi_gpu",
            'unittest/llmapi/test_llm_multi_gpu_pytorch.py -m "gpu4"',
            "accuracy/test_llm_api_pytorch.py::TestLlama3_1_8BInstruct::test_bfloat16_4gpus[tp4-attn_backend=TRTLLM-torch_compile=False]",
            "unittest/_torch/ray_orchestrator/multi_gpu/test_multi_instance.py",
            "examples/test_ray.py::test_llm_inference_distributed_ray[tp2pp2]",
            "accuracy/test_llm_api_pytorch.py::TestLlama3_1_8BInstruct::test_listed_on_several",
        ]),
    ],
)  # fmt: skip
def test_a_stage_runs_the_tests_and_gpus_ci_gives_it(
    site: Site, name: str, gpus: int, lines: list[str]
) -> None:
    output, listed, argv = written(site, name)
    assert listed == lines
    assert output.job.required_devices == gpus and output.job.slurm is not None
    assert (output.job.slurm.nodes, output.job.slurm.ntasks) == (1, 1)
    assert output.job.slurm.gres == f"gpu:{gpus}"
    assert ("--run-ray" in argv) == ("-Ray-" in name)


def test_pytest_runs_with_ci_flags_each_with_its_source(site: Site) -> None:
    output, _, argv = written(site, "DGX_B200-4_GPUs-PyTorch-2")
    work, defs = output.job.work_dir, f"{site.repo}/tests/integration/defs"
    assert argv == [
        "pytest", "-v", "--timeout-method=thread", "--timeout=3600",
        f"--test-list={work}/test_list.txt",
        "--splitting-algorithm", "least_duration", "--splits", "3", "--group", "2",
        f"--waives-file={work}/waives.txt", "--rootdir", defs,
        "--test-prefix=DGX_B200-4_GPUs-PyTorch-2", f"--output-dir={work}/",
        "--junit-xml", f"{work}/results.xml", "-o", "junit_logging=out-err",
    ]  # fmt: skip
    assert (Path(work) / "waives.txt").read_text() == (
        site.repo / "tests/integration/test_lists/waives.txt"
    ).read_text()
    explained = output.job.explain()
    sources = {entry.value: entry.source for entry in output.job.trail
               if entry.field == "pytest_flag"}  # fmt: skip
    assert set(" ".join(sources).split()) == set(argv[1:])  # every flag, and said once
    assert sources["--splitting-algorithm least_duration --splits 3 --group 2"] == (
        f"the stage's split 2 of 3 ({site.repo}/jenkins/scripts/test_stage_configs.json)"
    )
    assert sources["--test-prefix=DGX_B200-4_GPUs-PyTorch-2"] == (
        "as L0_Test.groovy runs pytest (the stage's name)"
    )
    assert "gpuCount of DGX_B200-4_GPUs-PyTorch" in explained
    assert "l0_dgx_b200.yml: blocks at lines 21" in explained
    assert "derived (from the CI stage's name)" in explained
    assert "family DGX_B200-4_GPUs-PyTorch, split 2 of 3; CI runs it with sbatch " \
        "(runWithSbatch), on auto:dgx-b200-flex" in explained  # fmt: skip
    spec = json.loads((Path(work) / "job_spec.json").read_text())
    assert spec["measures"]["junit"] == f"{work}/results.xml"
    assert sorted(Path(p).name for p in spec["extra_files"]) == ["test_list.txt", "waives.txt"]


def test_a_durations_file_is_passed_to_pytest_split(site: Site) -> None:
    durations = site.repo / "tests/integration/defs/.test_durations"
    durations.write_text(json.dumps({"test_unmarked.py::test_plain": 12.5}))
    _, _, argv = written(site, "DGX_H100-PyTorch-1")
    index = argv.index("--durations-path")
    assert argv[index + 1] == f"{site.repo}/tests/integration/defs/.test_durations"


def test_all_splits_writes_a_work_dir_a_split(site: Site, tmp_path: Path) -> None:
    request = site.fields(workflow_type="pytest", work_dir=str(tmp_path / "stage"))
    path = tmp_path / "request.json"
    path.write_text(json.dumps(request))
    done = subprocess.run([SCRIPTAST, "emit", "pytest", "--request", str(path), "--ci-stage",
                           "DGX_H100-PyTorch-Post-Merge", "--all-splits"],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    splits = [tmp_path / "stage" / f"DGX_H100-PyTorch-Post-Merge-{k}" for k in (1, 2)]
    assert done.stdout.splitlines()[:2] == [str(s) for s in splits]
    for split, folder in enumerate(splits, 1):
        spec = json.loads((folder / "job_spec.json").read_text())
        script = (folder / spec["script_name"]).read_text()
        assert f"--splits 2 --group {split}" in script
        assert f"--test-prefix=DGX_H100-PyTorch-Post-Merge-{split}" in script
    assert (splits[0] / "test_list.txt").read_text() == (splits[1] / "test_list.txt").read_text()


def test_a_multi_node_stage_is_refused_with_the_seeds_words(site: Site) -> None:
    with pytest.raises(ScriptastError) as caught:
        stage(site, "GB200-8_GPUs-2_Nodes-PyTorch-1")
    message = str(caught.value)
    assert message.startswith("ci_stage GB200-8_GPUs-2_Nodes-PyTorch-1 runs on 2 node(s) "
                              "with 8 GPU(s)")  # fmt: skip
    assert "pytest is always single-node" in message


def emit_error(site: Site, *args: str) -> subprocess.CompletedProcess[str]:
    path = site.root / "request.json"
    path.write_text(json.dumps(site.fields(workflow_type="pytest")))
    return subprocess.run([SCRIPTAST, "emit", "pytest", "--request", str(path), *args],
                          capture_output=True, text=True)  # fmt: skip


@pytest.mark.parametrize(
    ("change", "args", "message"),
    [
        (None, ["--ci-stage", "DGX_B200-4_GPUs-Pytorch-2"],
         "ci_stage 'DGX_B200-4_GPUs-Pytorch-2' is not a stage of {stages} (closest: "
         "DGX_B200-4_GPUs-PyTorch-2, DGX_B200-8_GPUs-PyTorch-2, DGX_B200-4_GPUs-PyTorch-3)"),
        (None, ["--ci-stage", "DGX_B200-4_GPUs-PyTorch-9"],
         "ci_stage 'DGX_B200-4_GPUs-PyTorch-9' is not a stage of {stages} "
         "(DGX_B200-4_GPUs-PyTorch has 3 split(s), 1 to 3)"),
        (None, ["--ci-stage", "DGX_B200-4_GPUs-PyTorch"],
         "ci_stage 'DGX_B200-4_GPUs-PyTorch' is not a stage of {stages} (a family of 3 "
         "split(s): name one, as DGX_B200-4_GPUs-PyTorch-1)"),
        ("missing-test-db", ["--ci-stage", "DGX_B200-PyTorch-1"],
         "{db}/l0_b200.yml: the stage's test-db file is missing (testDB 'l0_b200' in the stage "
         "list)"),
        ("unknown-condition", ["--ci-stage", "DGX_B200-PyTorch-1"],
         "{db}/l0_b200.yml:12: unknown condition key 'regex': the test-db's conditions are "
         "ranges, wildcards, terms"),
        ("bad-waive", ["--ci-stage", "DGX_B200-PyTorch-1"],
         "{waives}:3: not a waive: 'accuracy/test_x.py::test_y https://nvbugs/1' (a waive is "
         "'<test id> SKIP (<reason>)')"),
        (None, ["--ci-stage", "DGX_B200-PyTorch-1", "--test-cmd", "pytest x.py"],
         "ci_stage writes the stage's pytest command: drop test_cmd (or drop ci_stage to run "
         "your own)"),
        ("no-stage-list", ["--ci-stage", "DGX_B200-PyTorch-1"],
         "{stages}: no stage list there: give the repo_root of a TensorRT-LLM checkout that "
         "has jenkins/scripts/test_stage_configs.json"),
    ],
)  # fmt: skip
def test_bad_input_is_one_error_line_naming_the_file(
    site: Site, change: str | None, args: list[str], message: str
) -> None:
    db = site.repo / TEST_DB
    waives = site.repo / "tests/integration/test_lists/waives.txt"
    stages = site.repo / "jenkins/scripts/test_stage_configs.json"
    if change == "missing-test-db":
        (db / "l0_b200.yml").unlink()
    elif change == "unknown-condition":
        text = (db / "l0_b200.yml").read_text()
        (db / "l0_b200.yml").write_text(
            text.replace("    terms:\n", "    regex:\n      gpu: b2.*\n    terms:\n")
        )
    elif change == "bad-waive":
        waives.write_text(waives.read_text().replace(
            "full:H100", "accuracy/test_x.py::test_y https://nvbugs/1\nfull:H100"))  # fmt: skip
    elif change == "no-stage-list":
        stages.unlink()
    work = site.work("job")
    done = emit_error(site, *args)
    assert (done.returncode, done.stdout) == (1, "")
    expected = message.format(stages=stages, db=db, waives=waives)
    assert done.stderr == f"error: {expected}\n"
    assert not work.exists()


def test_all_splits_writes_none_when_one_split_cannot_be_made(site: Site, tmp_path: Path) -> None:
    shutil.rmtree(site.repo / TEST_DB)
    done = emit_error(site, "--ci-stage", "DGX_H100-PyTorch-Post-Merge", "--all-splits",
                      "--work-dir", str(tmp_path / "stage"))  # fmt: skip
    assert done.returncode == 1 and "the stage's test-db file is missing" in done.stderr
    assert not (tmp_path / "stage").exists()


@pytest.mark.parametrize(
    ("test_id", "gpus", "source", "warning"),
    [
        # no mark (1 GPU), but a helper launches its two ranks: the test-db runs it on 2
        ("test_unmarked.py::test_launches_two_ranks", 2, "l0_dgx_b200.yml block at line 3",
         "test_unmarked.py::test_launches_two_ranks: its marks say none (1 GPU), the test-db lists "
         "it on l0_dgx_b200.yml:3 (2)"),
        # its mark says 4, CI runs it on 8
        ("accuracy/test_llm_api_pytorch.py::TestLlama3_1_8BInstruct::test_listed_on_eight", 8,
         "l0_dgx_b200.yml block at line 56",
         "accuracy/test_llm_api_pytorch.py::TestLlama3_1_8BInstruct::test_listed_on_eight: its "
         "marks and id say 4, the test-db lists it on l0_dgx_b200.yml:56 (8)"),
        # its module mark says 2, the test-db's 1-GPU block lists it: the marks' larger count
        ("accuracy/test_llm_api_pytorch.py::TestLlama3_1_8BInstruct::test_listed_on_one", 2,
         "skip_less_device", "accuracy/test_llm_api_pytorch.py::TestLlama3_1_8BInstruct::"
         "test_listed_on_one: its marks and id say 2, the test-db lists it on l0_h100.yml:3 (1)"),
        # listed where the marks agree: no warning
        ("test_unmarked.py::test_plain", 1, "default", None),  # the test-db agrees
        # its module mark says 2; listed on 1, 4 and 8: the smallest machine that runs it, 4
        ("accuracy/test_llm_api_pytorch.py::TestLlama3_1_8BInstruct::test_listed_on_several", 4,
         "l0_dgx_h100.yml block at line 37 (the smallest of the 3 blocks that list it that holds "
         "what its marks ask)",
         "accuracy/test_llm_api_pytorch.py::TestLlama3_1_8BInstruct::test_listed_on_several: its "
         "marks and id say 2, the test-db lists it on l0_dgx_b200.yml:76 (8), l0_dgx_h100.yml:37 "
         "(4), l0_h100.yml:3 (1)"),
    ],
)  # fmt: skip
def test_a_test_is_sized_from_the_test_db_block_that_lists_it(
    site: Site, test_id: str, gpus: int, source: str, warning: str | None
) -> None:
    output = generate(site.request(workflow_type="pytest", test_cmd=f"pytest {test_id}"),
                      machine="x86_64", home=str(site.home))  # fmt: skip
    assert output.job.required_devices == gpus
    (entry,) = [e for e in output.job.trail if e.field == "required_devices"]
    assert source in entry.source
    said = [w for w in output.job.warnings if "the test-db" in w]
    assert said == ([f"the marks, the id and the test-db disagree: {warning}"] if warning else [])


def test_a_remote_stage_sends_its_list_and_waives_with_the_script(site: Site) -> None:
    from tests.cases import CASES
    from tests.test_categories import site_fields

    fields = {**CASES["pytest_remote_slurm_aarch64"], "ci_stage": "DGX_B200-4_GPUs-PyTorch-2"}
    fields.pop("test_cmd")
    from scriptast.builders.read_request import build_request

    output = generate(build_request(site_fields(site, fields), {}), machine="x86_64",
                      home=str(site.home))  # fmt: skip
    spec = json.loads(next(f.text for f in output.files if f.path.endswith("job_spec.json")))
    remote = spec["remote_work_dir"]
    work = output.job.work_dir
    assert spec["extra_file_destinations"] == {
        f"{work}/test_list.txt": f"{remote}/test_list.txt",
        f"{work}/waives.txt": f"{remote}/waives.txt",
    }
    argv = list(output.job.work_as(PytestWork).test.argv or ())
    assert f"--test-list={remote}/test_list.txt" in argv
    assert f"--waives-file={remote}/waives.txt" in argv
    assert argv[argv.index("--rootdir") + 1] == f"{spec['remote_repo_path']}/tests/integration/defs"


@pytest.mark.parametrize(
    ("gpus", "partition", "expected"),
    [
        (16, "batch", "required_devices = 16 exceeds the maximum of 8 GPUs for pytest."),
        (8, "four", "required_devices = 8 exceeds gpus_per_node = 4"),
    ],
)
def test_the_seeds_pytest_limits_hold_for_a_stage(
    site: Site, gpus: int, partition: str, expected: str
) -> None:
    """A stage bigger than the seed lets a pytest job be (one node, 8 GPUs, the partition's
    GPUs a node) is refused with the seed's words, naming the stage's size."""
    stages = site.repo / "jenkins/scripts/test_stage_configs.json"
    data = json.loads(stages.read_text())
    data["configs"].append({"name": f"DGX_B200-{gpus}_GPUs-PyTorch", "arch": "x86",
                            "slurm": True, "platform": "auto:dgx-b200-flex",
                            "testDB": "l0_dgx_b200", "splits": 1, "gpuCount": gpus})  # fmt: skip
    stages.write_text(json.dumps(data))
    env = json.loads(site.slurm_env.read_text())
    env["partitions"].append({**env["partitions"][0], "name": "four", "gres": "gpu:4",
                              "gpus_per_node": 4})  # fmt: skip
    site.slurm_env.write_text(json.dumps(env))
    with pytest.raises(ScriptastError) as caught:
        stage(site, f"DGX_B200-{gpus}_GPUs-PyTorch-1", partition=partition)
    assert str(caught.value).startswith(f"ci_stage DGX_B200-{gpus}_GPUs-PyTorch-1 runs on 1 "
                                        f"node(s) with {gpus} GPU(s)")  # fmt: skip
    assert expected in str(caught.value)


def test_a_waives_file_of_ones_own_is_read_from_where_emit_runs(site: Site) -> None:
    """`--waives-file mine.txt` is a path on this machine, relative to where emit runs; its
    text goes into the work dir as the stage's waives."""
    mine = site.root / "mine.txt"
    mine.write_text("test_unmarked.py::test_plain SKIP (flaky here)\n")
    path = site.root / "request.json"
    path.write_text(json.dumps(site.fields(workflow_type="pytest")))
    done = subprocess.run([SCRIPTAST, "emit", "pytest", "--request", str(path), "--ci-stage",
                           "DGX_H100-PyTorch-1", "--waives-file", "mine.txt", "--explain"],
                          capture_output=True, text=True, cwd=site.root)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (site.work("job") / "waives.txt").read_text() == mine.read_text()
    (row,) = [r for r in done.stderr.splitlines() if r.startswith("waives_file")]
    assert row.split()[1] == str(mine)  # made absolute, as the request's other local paths


def test_the_summary_names_the_stages_tests_and_where_the_list_is(site: Site) -> None:
    """How many test lines the stage's list holds, the first ones, which split pytest-split
    runs of them, and the path of the whole list in the work dir."""
    request = site.request(workflow_type="pytest", ci_stage="DGX_B200-4_GPUs-PyTorch-2")
    output = generate(request, machine="x86_64", home=str(site.home))
    lines = output.summary.splitlines()
    listed = site.work("job") / "test_list.txt"
    written = next(f.text for f in output.files if f.path == str(listed)).splitlines()
    first = [line.split(" ", 1)[0] for line in written[:3]]
    assert lines[6] == f"Tests: {len(written)} test line(s) in the stage's list: " \
        f"{', '.join(first)}, ..."  # fmt: skip
    assert lines[7] == ("Runs: split 2 of 3 of them, which pytest-split (least_duration) "
                        f"chooses as CI does when the job starts; the whole list: {listed}")  # fmt: skip
    narrowed = generate(site.request(workflow_type="pytest", ci_stage="DGX_B200-4_GPUs-PyTorch-2",
                                     only_tests=[first[0]]),
                        machine="x86_64", home=str(site.home))  # fmt: skip
    assert narrowed.summary.splitlines()[6] == f"Tests: 1 test line(s) in the stage's list: " \
        f"{first[0]}"  # fmt: skip
    assert "all of them (narrowed to the tests asked for, not split)" in narrowed.summary
