#!/bin/bash
#SBATCH --nodes=2
#SBATCH --segment=2
#SBATCH --ntasks=8
#SBATCH --ntasks-per-node=4
#SBATCH --gpus-per-node=4
#SBATCH --gres=gpu:4
#SBATCH --partition=arm
#SBATCH --time=02:00:00
#SBATCH --account=coreai_trtllm
#SBATCH -J deepseek_r1_0528_fp4_perf_sanity
#SBATCH -o /home/alice/work/job/slurm-%j.out
export llmSrcNode='/home/alice/TensorRT-LLM'
export jobWorkspace='/home/alice/work/job'
export runScript='/home/alice/work/job/slurm_run.sh'
export installScript='/home/alice/work/job/slurm_install.sh'
export configYamlPath='/home/alice/work/job/deepseek_r1_2_nodes_accuracy.yaml'
export INSTALL_MODE='source'
export WHEEL_PATH=''
export PYTEST_COMMON_VARS="LLM_ROOT='/home/alice/TensorRT-LLM' LLM_MODELS_ROOT='/models' AGG_CONFIG_FOLDER='tests/scripts/perf-sanity/aggregated' DISAGG_CONFIG_FOLDER='/home/alice/work/job' "
export PYTEST_COMMAND="pytest -v perf/test_perf_sanity.py --test-prefix=/home/alice/TensorRT-LLM/tests/integration/defs --test-list=/home/alice/work/job/test_list.txt --output-dir=/home/alice/work/job -o junit_logging=out-err"
export totalNodes=2
export gpusPerNode=4
export testOutputDir=/home/alice/work/job/disagg-e2e-deepseek_r1_2_nodes_accuracy
export pytestCommandCTXWorker="unset UCX_CUDA_IPC_ENABLE_MNNVL UCX_TLS UCX_NET_DEVICES && $PYTEST_COMMON_VARS $PYTEST_COMMAND"
export pytestCommandGENWorker="unset UCX_CUDA_IPC_ENABLE_MNNVL UCX_TLS UCX_NET_DEVICES && $PYTEST_COMMON_VARS $PYTEST_COMMAND"
export pytestCommandBenchmark="unset UCX_CUDA_IPC_ENABLE_MNNVL UCX_TLS UCX_NET_DEVICES && $PYTEST_COMMON_VARS $PYTEST_COMMAND"
export numCtxServers=1
export numGenServers=1
export nodesPerCtxServer=1
export nodesPerGenServer=1
export gpusPerNodePerCtxServer=4
export gpusPerNodePerGenServer=4
export ctPrecheckEnabled=0
export ACCURACY_CONFIG_JSON='{"enable_accuracy_test": true, "tasks": {"gsm8k": {"model": "local-completions", "model_args_extra": "num_concurrent=64,max_retries=3"}, "gpqa_custom": {"model": "local-chat-completions", "extra_kwargs": {"include_path": "/home/alice/work/job/lm_eval_configs"}}}}'
export DISAGG_SERVER_PORT=8000
export MODEL_DIR_NAME='DeepSeek-R1-0528-FP4'

srunArgs=(
  "--container-name=disagg_test-<timestamp>"
  "--container-image=urm.nvidia.com#sw-tensorrt-docker/tensorrt-llm:pytorch-25.10-py3-aarch64-ubuntu24.04-trt10.13.3.9-skip-tritondevel-202511011200-8000"
  "--container-workdir=/home/alice/work/job"
  "--container-mounts=/home/alice:/home/alice,/home/alice/TensorRT-LLM:/home/alice/TensorRT-LLM,/data/models:/models"
  "--container-env=NVIDIA_IMEX_CHANNELS"
  "--container-env=DISAGG_SERVING_TYPE"
  "--container-env=pytestCommand"
  "--container-env=ACCURACY_CONFIG_JSON"
  "--container-env=DISAGG_SERVER_PORT"
  "--container-env=MODEL_DIR_NAME"
)

run_cache_transceiver_precheck() {
    [[ "${ctPrecheckEnabled:-0}" == 1 ]] || return 0
}
# Fixture stand-in for the disaggregated launch draft that submit.py appends to its header.
fail_job() {
    echo "Error: $1"
    scancel "${SLURM_JOB_ID}"
    exit 1
}
mkdir -p "$jobWorkspace" "$testOutputDir"
run_cache_transceiver_precheck
srunArgs+=("--container-env=TRTLLM_PERF_RUN_TOKEN")
for i in $(seq 0 $((numGenServers - 1))); do
    export DISAGG_SERVING_TYPE="GEN_$i"
    srun "${srunArgs[@]}" --mpi=pmix --kill-on-bad-exit=1 \
        -N "$nodesPerGenServer" \
        --ntasks=$((nodesPerGenServer * gpusPerNodePerGenServer)) \
        --ntasks-per-node="$gpusPerNodePerGenServer" \
        bash -c "$pytestCommandGENWorker" &> "$testOutputDir/gen_server_$i.log" &
done
for i in $(seq 0 $((numCtxServers - 1))); do
    export DISAGG_SERVING_TYPE="CTX_$i"
    srun "${srunArgs[@]}" --mpi=pmix --kill-on-bad-exit=1 \
        -N "$nodesPerCtxServer" \
        --ntasks=$((nodesPerCtxServer * gpusPerNodePerCtxServer)) \
        --ntasks-per-node="$gpusPerNodePerCtxServer" \
        bash -c "$pytestCommandCTXWorker" &> "$testOutputDir/ctx_server_$i.log" &
done
export DISAGG_SERVING_TYPE="BENCHMARK"
if ! srun "${srunArgs[@]}" --kill-on-bad-exit=1 --overlap -N 1 --ntasks=1 \
    bash -c "$pytestCommandBenchmark"; then
    fail_job "Benchmark failed. See slurm-${SLURM_JOB_ID}.out"
fi
echo "Disagg server and benchmark completed successfully"