"""What a perf_sanity job measures: each benchmark client's report, which upstream's
test_perf_sanity.py writes under the `--output-dir` submit.py gives pytest (the job's work
dir where it runs), one folder a test."""

from __future__ import annotations

import posixpath

from scriptast.builders.resolution.job import ResolvedJob
from scriptast.contract.measured import Measures

CLIENT_LOGS = "*/trtllm-benchmark.*.log"
"""Each client's log, `<test labels>/trtllm-benchmark.<server>.<client>.log`."""


def measures(job: ResolvedJob) -> Measures:
    """The clients' logs under the job's output dir."""
    return Measures(
        kind="perf_sanity",
        result_glob=posixpath.join(job.log_dir, CLIENT_LOGS),
        gpu_type=job.request.device_type,
    )
