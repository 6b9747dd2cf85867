"""A stand-in for srun: records its argv, then runs the step's command on this host once per task
(SLURM_PROCID/SLURM_LOCALID per task; PMIX_RANK and PMI/OMPI variables when --mpi is given, and
step variables always, so tests can see which steps clear them). Exit: the first failing task's."""

import json
import os
import subprocess
import sys


def main() -> int:
    args = sys.argv[1:]
    index = 0
    options: dict[str, str] = {}
    while index < len(args) and args[index].startswith("-"):
        name, _, value = args[index].lstrip("-").partition("=")
        options[name] = value
        index += 1
    command = args[index:]
    ntasks = int(options.get("ntasks", "1"))
    with open(os.environ["SHIM_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps({"prog": "srun", "argv": args, "command": command}) + "\n")
    status = 0
    for rank in range(ntasks):
        env = dict(os.environ)
        env.update(
            SLURM_PROCID=str(rank),
            SLURM_LOCALID=str(rank),
            SLURM_STEP_ID="0",
            SLURM_NTASKS=str(ntasks),
            MPI_LOCALRANKID=str(rank),
        )
        if "mpi" in options:
            env.update(PMIX_RANK=str(rank), PMI_SIZE=str(ntasks), OMPI_COMM_WORLD_SIZE=str(ntasks))
        result = subprocess.run(command, env=env, capture_output=True, text=True)
        prefix = f"{rank}: " if "l" in options else ""
        for stream, text in ((sys.stdout, result.stdout), (sys.stderr, result.stderr)):
            for line in text.splitlines():
                stream.write(prefix + line + "\n")
        if result.returncode and not status:
            status = result.returncode
    return status


if __name__ == "__main__":
    sys.exit(main())
