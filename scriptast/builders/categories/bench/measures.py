"""What a bench job measures: trtllm-bench's PERFORMANCE OVERVIEW for the model its `--model`
names, and the `--report_json` file it writes (a relative path is the project folder's, where
the job runs)."""

from __future__ import annotations

import posixpath

from scriptast.builders.categories.bench.work import last_bench_invocation
from scriptast.builders.request.parts import BenchRequest
from scriptast.builders.resolution.job import ResolvedJob
from scriptast.contract.measured import Measures
from scriptast.readers.shellwords import flag_value, whole_flag


def measures(job: ResolvedJob) -> Measures | None:
    """The last trtllm-bench invocation's model and report file."""
    bench_cmd = job.request.part(BenchRequest).bench_cmd
    if not bench_cmd:
        return None
    argv = last_bench_invocation(bench_cmd)
    report = flag_value(argv, "--report_json")
    if report is not None and "$" in report:
        report = None  # a shell expansion: where it lands is not known before the job runs
    elif report is not None:
        report = posixpath.normpath(posixpath.join(job.project_path, report))
    return Measures(
        kind="bench",
        model=flag_value(argv, "--model", "-m"),
        report_json=report,
        gpu_type=job.request.device_type,
        concurrency=whole_flag(argv, "--concurrency"),
        max_batch_size=whole_flag(argv, "--max_batch_size"),
    )
