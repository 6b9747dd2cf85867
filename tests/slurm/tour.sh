#!/usr/bin/env bash
# The README's run tour on this machine: the loopback cluster of cluster.sh, with the recording
# stand-ins of tests/shims (pip, trtllm-bench saying 512.3 tokens/s, srun) first on PATH.
#   tour.sh up DIR     start the cluster in DIR, put the stand-ins in DIR/shims/bin, and print
#                      the one `export` line that points scriptast and its jobs at them
#   tour.sh down DIR   stop the daemons `up` started
# Everything it writes is under DIR; nothing in the checkout. Run it as root (slurmd and munged
# run as root here), after `bash tests/slurm/cluster.sh install-deps` on a fresh machine.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cmd=${1:?usage: tour.sh up|down DIR}
dir=${2:?usage: tour.sh up|down DIR}

if [ "$cmd" = down ]; then
    exec bash "$here/cluster.sh" down "$dir"
fi
if [ "$cmd" != up ]; then
    echo "usage: tour.sh up|down DIR" >&2
    exit 2
fi
python=${PYTHON:-$root/.venv/bin/python}
if [ ! -x "$python" ]; then
    echo "no $python: run the README's first set-up command (or set PYTHON)" >&2
    exit 1
fi
conf=$(bash "$here/cluster.sh" up "$dir")
rm -rf "$dir/shims"
# the stand-ins are written by the tests' own recorder; importing it must leave no cache behind
PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$root" "$python" -c \
    'import sys, pathlib; from tests.shim_recorder import Shims; Shims(pathlib.Path(sys.argv[1]))' \
    "$dir/shims"
printf 'export SLURM_CONF=%q SHIM_LOG=%q SHIM_BENCH_TPS=512.3 PATH=%q:"$PATH"\n' \
    "$conf" "$dir/shims/shim.jsonl" "$dir/shims/bin"
