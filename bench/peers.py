"""The peers' closest equivalents of scriptast's bench script, timed in their own environment.

Run by bench/run.py with the peers' interpreter; prints {peer: scripts per second} as JSON.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import per_second

COMMAND = (
    "trtllm-llmapi-launch trtllm-bench --model meta-llama/Llama-3.1-8B-Instruct "
    "throughput --dataset /tmp/dataset.json --tp 2"
)
IMAGE = "urm.nvidia.com#sw-tensorrt-docker/tensorrt-llm:pytorch-25.10-py3-x86_64"
MOUNTS = "/models:/models,/home/alice:/home/alice,/home/alice/TensorRT-LLM:/home/alice/TensorRT-LLM"
found: dict[str, Any] = {}
try:
    from submitit.slurm.slurm import _make_sbatch_string

    def submitit_build() -> Any:
        return _make_sbatch_string(
            command=COMMAND,
            folder="/tmp/logs",
            job_name="llama_bench",
            partition="batch",
            time=120,
            nodes=1,
            ntasks_per_node=2,
            gpus_per_node=2,
            account="coreai_trtllm",
            srun_args=[
                "--mpi=pmix_v4",
                "--container-image=" + IMAGE,
                "--container-mounts=" + MOUNTS,
                "--container-workdir=/home/alice/TensorRT-LLM",
            ],
            setup=["export LLM_MODELS_ROOT=/models"],
        )

    found["submitit"] = per_second(submitit_build)
except Exception as error:
    found["submitit_error"] = repr(error)
try:
    from simple_slurm import Slurm

    def simple_slurm_build() -> str:
        slurm = Slurm(
            job_name="llama_bench",
            nodes=1,
            ntasks=2,
            ntasks_per_node=2,
            gres="gpu:2",
            time="02:00:00",
            partition="batch",
            account="coreai_trtllm",
            output="/tmp/logs/llama_bench_%j.out",
        )
        slurm.add_cmd("export LLM_MODELS_ROOT=/models")
        slurm.add_cmd(
            "srun -l --ntasks=2 --mpi=pmix_v4 --container-image="
            + IMAGE
            + " --container-mounts="
            + MOUNTS
            + " bash -c "
            + repr(COMMAND)
        )
        return str(slurm)

    found["simple_slurm"] = per_second(simple_slurm_build)
except Exception as error:
    found["simple_slurm_error"] = repr(error)
try:
    import nemo_run as run
    from nemo_run.core.execution.slurm import SlurmBatchRequest

    executor = run.SlurmExecutor(
        account="coreai_trtllm",
        partition="batch",
        nodes=1,
        ntasks_per_node=2,
        gpus_per_node=2,
        time="02:00:00",
        container_image=IMAGE,
        container_mounts=MOUNTS.split(","),
        tunnel=run.LocalTunnel(job_dir="/tmp/nemo"),
    )
    executor.job_name = "llama_bench"
    executor.job_dir = "/tmp/nemo/llama_bench"

    def nemo_build() -> Any:
        request = SlurmBatchRequest(
            launch_cmd=["sbatch", "--parsable"],
            jobs=["llama_bench"],
            command_groups=[[COMMAND]],
            executor=executor,
            max_retries=0,
            extra_env={"LLM_MODELS_ROOT": "/models"},
        )
        return request.materialize()

    found["nemo_run"] = per_second(nemo_build)
except Exception as error:
    found["nemo_run_error"] = repr(error)
print(json.dumps(found))
