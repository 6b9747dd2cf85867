"""What a perf_sanity job measures: each benchmark client's report, and each accuracy run's
lm_eval table, which upstream's test_perf_sanity.py writes under the `--output-dir` submit.py
gives pytest (the job's work dir where it runs), one folder a test."""

from __future__ import annotations

import posixpath

from scriptast.builders.resolution.job import ResolvedJob
from scriptast.contract.measured import Measures

CLIENT_LOGS = "*/trtllm-benchmark.*.log"
"""Each client's log, `<test labels>/trtllm-benchmark.<server>.<client>.log`."""
ACCURACY_LOGS = "*/accuracy_eval_*.log"
"""Each accuracy run's log (a client's `accuracy_config`), `<test labels>/accuracy_eval_<task>.
<server>.log`: lm_eval's output, its results table."""


def measures(job: ResolvedJob) -> Measures:
    """The clients' logs under the job's output dir."""
    return Measures(
        kind="perf_sanity",
        result_glob=posixpath.join(job.log_dir, CLIENT_LOGS),
        accuracy_glob=posixpath.join(job.log_dir, ACCURACY_LOGS),
        gpu_type=job.request.device_type,
    )
