#!/bin/bash
# submit.py argv: ["--config-file", "/home/alice/TensorRT-LLM/tests/scripts/perf-sanity/llama_8b_aggr.yaml", "--partition", "batch", "--account", "coreai_trtllm", "--job-name", "llama_8b_aggr_perf_sanity", "--image", "urm.nvidia.com#sw-tensorrt-docker/tensorrt-llm:pytorch-25.10-py3-x86_64-ubuntu24.04-trt10.13.3.9-skip-tritondevel-202511011200-8000", "--mounts", "/data/models:/models,/home/alice:/home/alice,/home/alice/scratch/TensorRT-LLM:/home/alice/scratch/TensorRT-LLM", "--work-dir", "/home/alice/scratch/work_dirs/case", "--llm-src", "/home/alice/scratch/TensorRT-LLM", "--llm-models-root", "/models", "--launch-sh", "<submit.py stage>/slurm_launch.sh", "--time", "02:00:00"]
#SBATCH --partition=batch
#SBATCH --account=coreai_trtllm
#SBATCH --job-name=llama_8b_aggr_perf_sanity
#SBATCH --time=02:00:00
echo 8_done_
