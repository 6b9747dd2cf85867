#!/bin/bash
#SBATCH --nodes=2
#SBATCH --segment=2
#SBATCH --ntasks=8
#SBATCH --ntasks-per-node=4
#SBATCH --gpus-per-node=4
#SBATCH --gres=gpu:4
#SBATCH --partition=batch
#SBATCH --time=02:00:00
#SBATCH --account=coreai_trtllm
#SBATCH -J llama_8b_aggr_perf_sanity
#SBATCH -o /lustre/alice/work_dirs/case/slurm-%j.out
export llmSrcNode='/home/alice/scratch/TensorRT-LLM'
export jobWorkspace='/lustre/alice/work_dirs/case'
export runScript='/lustre/alice/work_dirs/case/slurm_run.sh'
export installScript='/lustre/alice/work_dirs/case/slurm_install.sh'
export configYamlPath='/lustre/alice/work_dirs/case/llama_8b_aggr.yaml'
export INSTALL_MODE='source'
export WHEEL_PATH=''
export PYTEST_COMMON_VARS="LLM_ROOT='/home/alice/scratch/TensorRT-LLM' LLM_MODELS_ROOT='/models' AGG_CONFIG_FOLDER='/lustre/alice/work_dirs/case' DISAGG_CONFIG_FOLDER='tests/scripts/perf-sanity/disaggregated' "
export PYTEST_COMMAND="pytest -v perf/test_perf_sanity.py --test-prefix=/home/alice/scratch/TensorRT-LLM/tests/integration/defs --test-list=/lustre/alice/work_dirs/case/test_list.txt --output-dir=/lustre/alice/work_dirs/case -o junit_logging=out-err"
export totalNodes=2
export gpusPerNode=4
export testOutputDir=/lustre/alice/work_dirs/case/aggr-llama_8b_aggr-llama_8b_tp8
export gpusPerNodePerServer=4
export totalGpus=8
export pytestCommand="$PYTEST_COMMON_VARS $PYTEST_COMMAND"

srunArgs=(
  "--container-name=aggr_test-<timestamp>"
  "--container-image=urm.nvidia.com#sw-tensorrt-docker/tensorrt-llm:pytorch-25.10-py3-x86_64-ubuntu24.04-trt10.13.3.9-skip-tritondevel-202511011200-8000"
  "--container-workdir=/lustre/alice/work_dirs/case"
  "--container-mounts=/home/alice:/home/alice,/home/alice/scratch/TensorRT-LLM:/home/alice/scratch/TensorRT-LLM,/data/models:/models"
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