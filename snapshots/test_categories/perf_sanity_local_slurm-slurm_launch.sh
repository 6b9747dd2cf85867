#!/bin/bash
#SBATCH --nodes=1
#SBATCH --segment=1
#SBATCH --ntasks=4
#SBATCH --ntasks-per-node=4
#SBATCH --gpus-per-node=4
#SBATCH --gres=gpu:4
#SBATCH --partition=batch
#SBATCH --time=02:00:00
#SBATCH --account=coreai_trtllm
#SBATCH -J llama_8b_aggr_perf_sanity
#SBATCH -o /home/alice/work/job/slurm-%j.out
export llmSrcNode='/home/alice/TensorRT-LLM'
export jobWorkspace='/home/alice/work/job'
export runScript='/home/alice/work/job/slurm_run.sh'
export installScript='/home/alice/work/job/slurm_install.sh'
export configYamlPath='/home/alice/TensorRT-LLM/tests/scripts/perf-sanity/aggregated/llama_8b_aggr.yaml'
export INSTALL_MODE='source'
export WHEEL_PATH=''
export PYTEST_COMMON_VARS="LLM_ROOT='/home/alice/TensorRT-LLM' LLM_MODELS_ROOT='/models' AGG_CONFIG_FOLDER='/home/alice/TensorRT-LLM/tests/scripts/perf-sanity/aggregated' DISAGG_CONFIG_FOLDER='tests/scripts/perf-sanity/disaggregated' "
export PYTEST_COMMAND="pytest -v perf/test_perf_sanity.py --test-prefix=/home/alice/TensorRT-LLM/tests/integration/defs --test-list=/home/alice/work/job/test_list.txt --output-dir=/home/alice/work/job -o junit_logging=out-err"
export totalNodes=1
export gpusPerNode=4
export testOutputDir=/home/alice/work/job/aggr-llama_8b_aggr-llama_8b_tp4
export gpusPerNodePerServer=4
export totalGpus=4
export pytestCommand="$PYTEST_COMMON_VARS $PYTEST_COMMAND"

srunArgs=(
  "--container-name=aggr_test-<timestamp>"
  "--container-image=urm.nvidia.com#sw-tensorrt-docker/tensorrt-llm:pytorch-25.10-py3-x86_64-ubuntu24.04-trt10.13.3.9-skip-tritondevel-202511011200-8000"
  "--container-workdir=/home/alice/work/job"
  "--container-mounts=/home/alice:/home/alice,/home/alice/TensorRT-LLM:/home/alice/TensorRT-LLM,/data/models:/models"
  "--container-env=NVIDIA_IMEX_CHANNELS"
  "--mpi=pmix"
  "--container-env=pytestCommand"
)

# Fixture stand-in for the aggregated launch draft that submit.py appends to its header.
fail_job() {
    echo "Error: $1"
    scancel "${SLURM_JOB_ID}"
    exit 1
}
mkdir -p "$jobWorkspace" "$testOutputDir"
chmod +x "$runScript"
world_size=${world_size:-$((totalNodes * gpusPerNodePerServer))}
if [[ ! -f "$jobWorkspace/test_list.txt" ]]; then
    fail_job "missing $jobWorkspace/test_list.txt"
fi
if ! srun "${srunArgs[@]}" --mpi=pmix --kill-on-bad-exit=1 \
    -N "$totalNodes" \
    --ntasks="$world_size" \
    --ntasks-per-node="$gpusPerNodePerServer" \
    "$runScript"; then
    fail_job "Aggregated test failed. See slurm-${SLURM_JOB_ID}.out"
fi
echo "Aggregated test completed successfully"