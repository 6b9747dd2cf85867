"""How much `scriptast verify` costs: one file in its own process against shellcheck and against
`emit` (paired, a distinct file or request each run), and 200 distinct files in one process.

    python bench/verify_bench.py [--runs 15]

Prints a table of medians and of per-pair ratios; the targets are verify/emit <= 1 and under
20 ms a file for 200 files in one process.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import ENV, ROOT, distinct_requests, measuring_environment

PARTITIONS = ("batch", "gpu", "a100", "h100-80gb", "debug", "long")
IMAGES = (
    "nvcr.io/nvidia/pytorch:24.05-py3",
    "./images/trtllm.sqsh",
    "urm.nvidia.com#sw-tensorrt-docker/tensorrt-llm:pytorch-25.10-py3-x86_64",
    "nvcr.io/nvidia/nemo:sha256:1f2e3d4c5b6a",
)


def batch_script(index: int) -> str:
    """A batch script of its own: directives, a here-document job, an array, srun with pyxis."""
    nodes = 1 + index % 8
    tasks = 1 + index % 4
    image = IMAGES[index % len(IMAGES)]
    return (
        "#!/bin/bash\n"
        f"#SBATCH --job-name=train-{index}\n"
        f"#SBATCH --partition={PARTITIONS[index % len(PARTITIONS)]}\n"
        f"#SBATCH -N {nodes}\n"
        f"#SBATCH --ntasks-per-node={tasks}\n"
        f"#SBATCH --gpus-per-node={tasks}\n"
        f"#SBATCH --time=0{index % 10}:{index % 60:02d}:00\n"
        f"#SBATCH --mem={16 * tasks}G\n"
        f"#SBATCH --output=slurm-%j-{index}.out\n"
        "set -euo pipefail\n"
        f"SEEDS=({' '.join(str(index * 7 + k) for k in range(3))})\n"
        f'MOUNTS="/data/{index}:/data,$HOME:/home/me"\n'
        'for seed in "${SEEDS[@]}"; do\n'
        f"  srun --mpi=pmix --container-image={image} \\\n"
        '    --container-mounts="$MOUNTS" --container-workdir=/workspace \\\n'
        f'    python train.py --seed "$seed" --lr 0.{index:04d} --epochs {index % 9 + 1}\n'
        "done\n"
        f"cat > eval_{index}.sbatch <<'EOF'\n"
        "#!/bin/bash\n"
        f"#SBATCH --array=0-{index % 16}%4\n"
        f"#SBATCH --time={10 + index % 50}\n"
        f'srun -n {tasks} python eval.py --shard "$SLURM_ARRAY_TASK_ID"\n'
        "EOF\n"
        f"sbatch --dependency=afterok:$SLURM_JOB_ID eval_{index}.sbatch\n"
    )


def write_scripts(folder: Path, count: int, start: int) -> list[Path]:
    folder.mkdir(parents=True)
    paths = []
    for index in range(start, start + count):
        path = folder / f"job{index:05d}.sh"
        path.write_text(batch_script(index))
        paths.append(path)
    return paths


def timed(argv: list[str], cwd: Path = ROOT) -> float:
    begin = time.perf_counter()
    subprocess.run(argv, cwd=cwd, capture_output=True, env=ENV, check=False)
    return time.perf_counter() - begin


def paired(first: list[list[str]], second: list[list[str]]) -> tuple[float, float, float]:
    """A and B in turn, each run on its own input: medians of A, of B and of the ratios A/B."""
    timed(first[0])
    timed(second[0])
    a_times, b_times, ratios = [], [], []
    for a_argv, b_argv in zip(first[1:], second[1:], strict=True):
        a = timed(a_argv)
        b = timed(b_argv)
        a_times.append(a)
        b_times.append(b)
        ratios.append(a / b)
    return statistics.median(a_times), statistics.median(b_times), statistics.median(ratios)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    shellcheck = shutil.which("shellcheck") or str(Path(sys.executable).parent / "shellcheck")
    scriptast = str(Path(sys.executable).parent / "scriptast")
    runs = args.runs + 1
    with tempfile.TemporaryDirectory() as scratch:
        measured = measuring_environment(str(Path(scratch) / "pycache"))
        ENV.clear()
        ENV.update(measured)
        folder = Path(scratch)
        one = write_scripts(folder / "one", 2 * runs, 0)
        many = write_scripts(folder / "many", 200, 10_000)
        requests = distinct_requests(folder / "requests", runs, 20_000)
        verify_argv = [[scriptast, "verify", str(path)] for path in one[:runs]]
        shellcheck_argv = [[shellcheck, str(path)] for path in one[runs:]]
        emit_argv = [[scriptast, "emit", "--request", str(r), "--stdout"] for r in requests]
        verify_s, shellcheck_s, vs_shellcheck = paired(verify_argv, shellcheck_argv)
        verify_again_s, emit_s, vs_emit = paired(
            [[scriptast, "verify", str(p)] for p in one[runs:]], emit_argv
        )
        many_s = statistics.median(timed([scriptast, "verify", *map(str, many)]) for _ in range(3))
        shellcheck_many_s = timed([shellcheck, *map(str, many)])
    rows = [
        ("verify FILE, own process (median)", f"{verify_s * 1000:.1f} ms"),
        ("shellcheck FILE (median)", f"{shellcheck_s * 1000:.1f} ms"),
        ("verify / shellcheck, paired", f"{vs_shellcheck:.2f}"),
        ("verify FILE, paired with emit (median)", f"{verify_again_s * 1000:.1f} ms"),
        ("emit --request R --stdout (median)", f"{emit_s * 1000:.1f} ms"),
        ("verify / emit, paired (target <= 1)", f"{vs_emit:.2f}"),
        ("verify of 200 files in one process, per file (target < 20)", f"{many_s * 5:.1f} ms"),
        ("shellcheck of the same 200 files, per file", f"{shellcheck_many_s * 5:.1f} ms"),
    ]
    width = max(len(name) for name, _ in rows) + 2
    for name, value in rows:
        print(f"{name:<{width}}{value}")


if __name__ == "__main__":
    main()
