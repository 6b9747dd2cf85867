#!/bin/bash
# submit.py argv: ["--test-list", "perf/test_perf_sanity.py::test_e2e[aggr-llama_8b_aggr-llama_8b_tp4]", "--partition", "batch", "--account", "coreai_trtllm", "--job-name", "aggr_llama_8b_aggr_llama_8b_tp4_perf_sanity", "--image", "urm.nvidia.com#sw-tensorrt-docker/tensorrt-llm:pytorch-25.10-py3-x86_64-ubuntu24.04-trt10.13.3.9-skip-tritondevel-202511011200-8000", "--mounts", "/data/models:/models,/home/alice:/home/alice,/home/alice/TensorRT-LLM:/home/alice/TensorRT-LLM", "--work-dir", "/home/alice/work/job", "--llm-src", "/home/alice/TensorRT-LLM", "--llm-models-root", "/models", "--launch-sh", "<submit.py stage>/slurm_launch.sh", "--time", "02:00:00"]
#SBATCH --partition=batch
#SBATCH --account=coreai_trtllm
#SBATCH --job-name=aggr_llama_8b_aggr_llama_8b_tp4_perf_sanity
#SBATCH --time=02:00:00
echo 8_done_
