"""A stand-in for a program (pip, pytest, trtllm-bench, ...): appends its name, argv, working
directory and the environment that matters to $SHIM_LOG as one JSON line, prints
$SHIM_SAY_<NAME> (what the real tool prints on success, for a test that judges the log) or,
when its variable is set, what upstream's tool prints and writes (shims/upstream.py), sleeps
$SHIM_SLEEP_<NAME> seconds, then exits with $SHIM_EXIT_<NAME> (0 by default).
trtllm-llmapi-launch runs the rest of its argv after recording on rank 0 only, as upstream's
does (tensorrt_llm/llmapi/trtllm-llmapi-launch: the other ranks run the MPI worker node, which
serves rank 0's LLM), so a multi-rank pytest writes its JUnit report once."""

import importlib
import json
import os
import sys
import time

WATCHED = ("PMI", "PMIX", "MPI", "OMPI", "SLURM")
KEPT = ("LLM_MODELS_ROOT", "FOO", "MSG", "NCCL_DEBUG", "HOME", "CUDA_VISIBLE_DEVICES")


def _mpi_rank() -> int:
    """The rank as upstream's trtllm-llmapi-launch reads it: SLURM_PROCID, else
    OMPI_COMM_WORLD_RANK, PMI_RANK, PMI_ID, else 0."""
    for key in ("SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMI_ID"):
        value = os.environ.get(key, "")
        if value.isdigit():
            return int(value)
    return 0


def main() -> int:
    name = os.path.basename(sys.argv[0])
    env = {k: v for k, v in os.environ.items() if k.startswith(WATCHED) or k in KEPT}
    record = {"prog": name, "argv": sys.argv[1:], "cwd": os.getcwd(), "env": env}
    with open(os.environ["SHIM_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps(record) + "\n")
    if name == "trtllm-llmapi-launch" and len(sys.argv) > 1:
        if _mpi_rank() != 0:
            return 0  # upstream's other ranks serve rank 0's LLM as MPI workers
        os.execvp(sys.argv[1], sys.argv[1:])
    sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0])))
    spoken = importlib.import_module("shim_upstream").speak(name, sys.argv[1:])
    key = name.upper().replace("-", "_")
    said = os.environ.get("SHIM_SAY_" + key)
    if said and spoken is None:
        print(said, flush=True)
    time.sleep(float(os.environ.get("SHIM_SLEEP_" + key, "0")))
    if spoken is not None:
        return int(spoken)
    return int(os.environ.get("SHIM_EXIT_" + key, "0"))


if __name__ == "__main__":
    sys.exit(main())
