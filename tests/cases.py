"""The category x scenario matrix: request fields per case, on the fixture site."""

from __future__ import annotations

from typing import Any

DEFS = "accuracy/test_llm_api_pytorch.py"
REMOTE = {
    "execution_scenario": "remote_slurm",
    "remote_repo_path": "/home/alice/scratch/TensorRT-LLM",
    "remote_work_dir": "/home/alice/scratch/work_dirs/case",
}
DOCKER = {
    "execution_scenario": "local_docker",
    "slurm_env_file": None,
    "partition": None,
    "account": None,
    "env_check": {"gpus_per_node": 8},
}
PREPARE = (
    "trtllm-bench --model meta-llama/Llama-3.1-8B-Instruct prepare-dataset "
    "--output /tmp/dataset.json token-norm-dist --num-requests 64 --input-mean 128 "
    "--output-mean 128 --input-stdev 0 --output-stdev 0"
)
RUN = "trtllm-bench --model meta-llama/Llama-3.1-8B-Instruct throughput --dataset /tmp/dataset.json"
NASTY = (
    """python3 -c 'import os, sys; print("it'"'"'s", os.environ["FOO"], sys.argv[1:])' """
    """x "$HOME" '`not run`' && echo "rank=${SLURM_PROCID:-none}" """
).strip()
EVAL = "trtllm-eval --model meta-llama/Llama-3.1-8B-Instruct"
PERF_CONFIG = "tests/scripts/perf-sanity/aggregated/llama_8b_aggr.yaml"

CASES: dict[str, dict[str, Any]] = {
    "pytest_local_slurm": {
        "workflow_type": "pytest",
        "test_cmd": f"pytest -v {DEFS}::TestLlama3_1_8BInstruct::test_param_mark[tp2pp2]",
    },
    "pytest_local_slurm_not_persistent": {
        "workflow_type": "pytest",
        "persistent_mode": False,
        "test_cmd": "pytest -v test_unmarked.py::test_plain",
    },
    "pytest_mpi_world_size": {
        "workflow_type": "pytest",
        "test_cmd": f"pytest -v {DEFS}::TestMultiRank::test_mpi_ranks",
    },
    "pytest_repo_relative_path": {
        "workflow_type": "pytest",
        "test_cmd": f"pytest tests/integration/defs/{DEFS}::TestDeepSeekV3Lite",
    },
    "pytest_nogres": {
        "workflow_type": "pytest",
        "partition": "nogres",
        "test_cmd": f"pytest {DEFS}::TestDeepSeekV3Lite::test_class_mark",
    },
    "pytest_outside_defs": {
        "workflow_type": "pytest",
        "test_cmd": "pytest tests/unittest/test_outside_defs.py::test_two_gpus",
        "install": False,
    },
    "pytest_remote_slurm_aarch64": {
        "workflow_type": "pytest",
        "partition": "arm",
        "test_cmd": f"pytest -v {DEFS}::TestDeepSeekV3Lite::test_bare_function_mark",
        **REMOTE,
    },
    "pytest_local_docker": {
        "workflow_type": "pytest",
        "test_cmd": f"pytest -v {DEFS}::TestLlama3_1_8BInstruct::test_function_mark",
        **DOCKER,
    },
    "custom_cmd_local_slurm": {
        "workflow_type": "custom",
        "partition": "nogres",
        "custom_cmd": NASTY,
        "custom_env": "FOO=bar NCCL_DEBUG=INFO 'MSG=two words'",
        "required_devices": 2,
    },
    "custom_script_local_slurm": {
        "workflow_type": "custom",
        "custom_script": "@scripts/run_custom.sh",
        "model_name": "llama_debug",
    },
    "custom_remote_slurm": {
        "workflow_type": "custom",
        "custom_cmd": "nvidia-smi -L",
        **REMOTE,
    },
    "custom_local_docker": {
        "workflow_type": "custom",
        "custom_cmd": "python3 examples/quickstart.py --model /models/llama",
        "custom_env": "FOO=bar",
        **DOCKER,
    },
    "eval_tp1_local_slurm": {
        "workflow_type": "eval",
        "eval_cmd": "trtllm-eval --model /models/llama-3.1-8b mmlu",
    },
    "eval_tp2_hf_resolved": {
        "workflow_type": "eval",
        "eval_cmd": f"{EVAL} --tp_size 2 gsm8k",
    },
    "eval_remote_slurm": {
        "workflow_type": "eval",
        "partition": "arm",
        "eval_cmd": f"{EVAL} --tp_size 4 gsm8k",
        **REMOTE,
    },
    "eval_local_docker": {
        "workflow_type": "eval",
        "eval_cmd": f"{EVAL} gsm8k",
        **DOCKER,
    },
    "bench_tp1_no_prepare": {
        "workflow_type": "bench",
        "bench_cmd": RUN,
    },
    "bench_tp2_prepare": {
        "workflow_type": "bench",
        "bench_cmd": f"{PREPARE} && {RUN} --tp 2",
    },
    "bench_wheel_install": {
        "workflow_type": "bench",
        "bench_cmd": RUN,
        "install_mode": "wheel",
    },
    "bench_remote_slurm_aarch64": {
        "workflow_type": "bench",
        "partition": "arm",
        "bench_cmd": f"{PREPARE} && {RUN} --tp 2 --pp 2",
        **REMOTE,
    },
    "bench_local_docker": {
        "workflow_type": "bench",
        "bench_cmd": f"{PREPARE} && {RUN} --tp 2",
        **DOCKER,
    },
    "perf_sanity_local_slurm": {
        "workflow_type": "perf_sanity",
        "perf_config_yaml": f"@repo/{PERF_CONFIG}",
        "perf_test_name": "llama_8b_tp4",
    },
    "perf_sanity_remote_slurm": {
        "workflow_type": "perf_sanity",
        "perf_config_yaml": f"@repo/{PERF_CONFIG}",
        "perf_test_name": "llama_8b_tp8",
        **REMOTE,
        # submit.py creates its --work-dir on this machine (and scriptast removes it again)
        "remote_work_dir": "@root/lustre/alice/work_dirs/case",
    },
    "eval_multi_node_perf_sanity_fallback": {
        "workflow_type": "eval",
        "partition": "arm",
        "eval_cmd": "trtllm-eval --model deepseek-ai/DeepSeek-R1-0528-FP4 --tp_size 8 gsm8k",
        "perf_config_yaml": "@repo/tests/scripts/perf-sanity/disaggregated/deepseek_r1_2_nodes.yaml",
    },
    "pytest_perf_sanity_test_list": {
        "workflow_type": "pytest",
        "test_cmd": "pytest perf/test_perf_sanity.py::test_e2e[aggr-llama_8b_aggr-llama_8b_tp4]",
    },
}
