"""perf_sanity's record: Category 4, the repository's submit.py writes the launch script from a
perf config (or a perf-sanity test id) with the job's final paths; a multi-node eval comes here
too."""

from __future__ import annotations

from scriptast.builders.category import (
    Category,
    MeasuresRule,
    Patterns,
    ResolveRule,
    SubmitRule,
    TakeOverRule,
)
from scriptast.builders.request.parts import PerfSanityRequest
from scriptast.contract.axes import SLURM
from scriptast.contract.job_spec import LAUNCH_SCRIPT_CANCELS

WORK = "scriptast.builders.categories.perf_sanity.work"
LAUNCH_WRITTEN = "scriptast.builders.categories.perf_sanity.launch_written"
MEASURES = "scriptast.builders.categories.perf_sanity.measures"

CATEGORY = Category(
    name="perf_sanity",
    suffix="perf_sanity",
    cli_name="perf-sanity",
    cli_help="Run the repository's submit.py on a perf config.",
    docs="Category 4: the repository's `submit.py` writes `slurm_launch.sh` (and "
    "`test_list.txt`) with the job's final paths; scriptast takes back what it wrote, writes it "
    "all or nothing with job_spec.json, and reads `slurm_params`, `container_name` and the "
    "summary back from the launch script. For remote_slurm it gets the local launch draft and "
    "the cluster `--work-dir`/`--llm-src`; what it writes under the cluster work dir on this "
    "machine is moved into work_dir and listed in `extra_files` with its cluster path. "
    "submit.py names its container after the time it ran (shown as `<timestamp>`). It passes "
    "`--cluster-name` (the request's `cluster_name`, else slurm_env.json's, which "
    "`probe-slurm` reads from ClusterName): submit.py picks the cluster's UCX settings by it. "
    "The launch script is checked against slurm_env.json as `verify --slurm-env-file` does: "
    "submit.py always writes `#SBATCH --segment`, which needs Slurm 24.05: on a cluster whose "
    "`probe.slurm_version` predates block topology (23.11) the line is kept as a comment saying "
    "why (no segment can be asked for there), on 23.11 it is refused (the example "
    "slurm_env.json records 24.05.4), and a size the partition cannot hold is a warning.",
    examples=(
        "scriptast emit perf-sanity <slurm> --perf-config-yaml "
        "tests/fixtures/trtllm/tests/scripts/perf-sanity/aggregated/llama_8b_aggr.yaml "
        "--perf-test-name llama_8b_tp4",
        "scriptast emit perf-sanity --request examples/perf_sanity_remote_slurm.json",
    ),
    options=("perf_config_yaml", "perf_test_name", "test_cmd"),
    # the seed's 8_done_, and what upstream's launch drafts print when they end well
    needs=("perf_config_yaml", "test_cmd"),
    request_part=PerfSanityRequest,
    patterns=Patterns(success=("8_done_", "completed successfully"), failure=("FAILED", "Error")),
    resolve=ResolveRule(WORK, "resolve"),
    take_over=TakeOverRule(WORK, "take_over"),
    submit=SubmitRule(LAUNCH_WRITTEN, "submitted"),
    measures=MeasuresRule(MEASURES, "measures"),
    only_on=SLURM,
    allocation_refusal=LAUNCH_SCRIPT_CANCELS,
    refusal="perf_sanity (benchmark) jobs need Slurm: {scenario} is not supported",
)
