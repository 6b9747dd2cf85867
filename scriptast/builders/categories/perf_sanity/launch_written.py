"""A job whose launch script submit.py writes: run it with the final paths under the work_dir
lock (submit_py.py takes what it wrote back and puts the disk back), then read the launch
script for the values job_spec.json and the summary report. The category's `submit`."""

from __future__ import annotations

import posixpath
import re

import msgspec

from scriptast.builders.categories.perf_sanity.call_for_job import plan_submit
from scriptast.builders.categories.perf_sanity.config_text import emit_perf_config
from scriptast.builders.categories.perf_sanity.launch_readback import read_launch_script, unexpected
from scriptast.builders.categories.perf_sanity.submit_argv import submit_argv
from scriptast.builders.categories.perf_sanity.submit_plan import (
    LAUNCH_SH,
    SUBMIT_WRITES,
    cluster_name_of,
    precheck_path,
)
from scriptast.builders.categories.perf_sanity.submit_py import (
    StagedConfig,
    SubmitPyWrites,
    WatchedFolder,
    run_submit,
)
from scriptast.builders.category import LaunchFacts, Submitted
from scriptast.builders.resolution.job import ResolvedJob
from scriptast.builders.resolution.trail import TrailEntry
from scriptast.contract.job_spec import JobLogs, SlurmParams
from scriptast.contract.slurm_env import SlurmEnv
from scriptast.errors import ResolveError
from scriptast.model.slurm_options import release_key
from scriptast.workdir.write import OutputFile


def submitted(job: ResolvedJob) -> Submitted:
    """Run submit.py with the final paths (see submit_py.py: what it writes is taken back into
    the output and the disk put back), then read its launch script for the values job_spec.json
    and the summary report."""
    assert job.slurm is not None
    remote = job.log_dir != job.work_dir
    launch = posixpath.join(job.work_dir, LAUNCH_SH)
    plan = plan_submit(job, launch)
    argv = submit_argv(plan.submit)
    watched = [WatchedFolder(path=job.work_dir)]
    if remote:
        watched.append(WatchedFolder(path=job.log_dir, remote=job.log_dir))
    staged = []
    if plan.copy is not None:
        copy = plan.copy
        text = copy.text if copy.data is None else emit_perf_config(copy.data)
        assert text is not None
        staged.append(StagedConfig(path=posixpath.join(job.log_dir, copy.name), text=text))
    staged += [
        StagedConfig(path=posixpath.join(job.log_dir, s.name), text=s.text) for s in plan.scripts
    ]
    assert job.cluster is not None  # a Slurm job: resolve read and checked slurm_env.json
    env = job.cluster.env
    taken = run_submit(
        argv,
        cwd=job.repo_root,
        work_dir=job.work_dir,
        watched=watched,
        staged=staged,
        slurm_env=env,
        extra_env={"PYTHONPATH": precheck_path(job)} if remote else {},
        writes=SubmitPyWrites(names=SUBMIT_WRITES[0], folders=SUBMIT_WRITES[1]),
    )
    files: dict[str, OutputFile] = {}
    destinations: dict[str, str] = {}
    for _folder, item in taken:
        path = posixpath.join(job.work_dir, item.relative)
        if path in files:
            raise ResolveError(f"submit.py wrote {item.relative} in two places")
        files[path] = OutputFile(path, item.text, item.executable)
        if item.remote is not None:
            destinations[path] = item.remote
    main = files.pop(launch, None)
    if main is None:
        raise ResolveError(f"submit.py exited 0 but did not write {launch}")
    beyond = unexpected(main.text, plan.submit)
    if beyond:
        raise ResolveError(
            f"the launch script submit.py wrote asks for more than scriptast passed it: "
            f"{beyond[0]}; nothing was written"
        )
    text, left_out = without_segment(main.text, env)
    read, facts = _read_launch(text, job)
    if left_out:
        read = msgspec.structs.replace(read, warnings=(*read.warnings, left_out))
    read = _checked_against_cluster(text, read, env)
    main = OutputFile(main.path, text, executable=True)
    others = tuple(files[path] for path in sorted(files))
    return Submitted(
        job=read,
        files=(*others, main),
        destinations=destinations,
        launch=facts,
        submit_argv=tuple(argv),
    )


BLOCK_TOPOLOGY = "23.11"
"""The release that brought topology/block, the only topology `--segment` means anything to."""
_SEGMENT = re.compile(r"^#SBATCH[ \t]+--segment(?:=|[ \t]+)(\S+)[ \t]*$", re.MULTILINE)


def without_segment(text: str, env: SlurmEnv) -> tuple[str, str | None]:
    """submit.py writes `#SBATCH --segment=N` (Slurm 24.05+) whatever the cluster runs. On a
    release older than topology/block no segment can be asked for or meant (segments are cut
    from blocks), so the line is kept as a comment and said: sbatch would refuse it. From 23.11
    on a cluster may have blocks, and placement without it would differ: it stays, and the
    check against the cluster refuses it before 24.05."""
    version = env.probe.slurm_version if env.probe else None
    matched = _SEGMENT.search(text)
    if matched is None or not version or not release_key(version):
        return text, None
    if release_key(version) >= release_key(BLOCK_TOPOLOGY):
        return text, None
    why = (f"--segment={matched.group(1)} left out: Slurm {version} has no block topology "
           f"(topology/block came in {BLOCK_TOPOLOGY}, --segment in 24.05), so no segment "
           "can be asked for there")  # fmt: skip
    line = f"# scriptast: {why}"
    said = f"the launch script submit.py wrote: {why}"
    return text[: matched.start()] + line + text[matched.end() :], said


def _checked_against_cluster(text: str, job: ResolvedJob, env: SlurmEnv) -> ResolvedJob:
    """The launch script as `verify --slurm-env-file` reads it: an option the cluster's Slurm
    release does not have (sbatch would refuse the script) is an error; a size, time or plugin
    the partition does not offer is a warning (the job would pend or fail there)."""
    from scriptast.readers.linter.cluster_check import check_against
    from scriptast.readers.linter.lint import lint_text

    report = lint_text(text, context=LAUNCH_SH, batch_script=True)
    warnings = list(job.warnings)
    for finding in [*report.findings, *check_against(report, env, LAUNCH_SH)]:
        if finding.refused:
            raise ResolveError(
                f"the launch script submit.py wrote ({finding.where}): "
                f"{finding.message}: sbatch there refuses it; use a submit.py that writes "
                "for that release, or a slurm_env.json of the cluster it goes to"
            )
        warnings.append(f"the launch script submit.py wrote: {finding.where}: {finding.message}")
    return msgspec.structs.replace(job, warnings=tuple(warnings))


def _read_launch(text: str, job: ResolvedJob) -> tuple[ResolvedJob, LaunchFacts]:
    """The job with the Slurm values the launch script asks for, and what job_spec.json says
    of the script: its container name and the log files its header names."""
    assert job.slurm is not None
    launch = read_launch_script(text, "the launch script submit.py wrote")
    slurm = SlurmParams(
        partition=launch.partition or job.slurm.partition,
        account=launch.account or job.slurm.account,
        time_limit=launch.time_limit or job.slurm.time_limit,
        nodes=launch.nodes,
        ntasks=launch.ntasks,
        ntasks_per_node=launch.ntasks_per_node,
        gpus_per_node=launch.gpus_per_node,
        gres=launch.gres,
        mpi_plugin=launch.mpi_plugin,
    )
    gpus = launch.nodes * launch.gpus_per_node if launch.gpus_per_node else launch.ntasks
    cluster, cluster_source = cluster_name_of(job)
    restated = {"tp", "pp", "ep", "required_devices", "world_size", "gpus_per_node"}
    trail = (
        *(entry for entry in job.trail if entry.field not in restated),
        *(
            TrailEntry(field=field, value=str(value), source="read back from the launch script")
            for field, value in (("required_devices", gpus), ("world_size", launch.ntasks))
        ),
        *(
            TrailEntry(field=field, value=str(value), source="read back from the launch script")
            for field, value in (
                ("nodes", slurm.nodes),
                ("ntasks", slurm.ntasks),
                ("ntasks_per_node", slurm.ntasks_per_node),
                ("gpus_per_node", slurm.gpus_per_node),
                ("gres", slurm.gres or "(none)"),
                ("mpi_plugin", slurm.mpi_plugin or "(none: the cluster's MpiDefault)"),
                ("container_name", launch.container_name),
            )
        ),
        TrailEntry(field="cluster_name", value=cluster or "(none)", source=cluster_source),
    )
    read = msgspec.structs.replace(
        job, slurm=slurm, required_devices=gpus, world_size=launch.ntasks, trail=trail
    )
    output = posixpath.join(job.log_dir, launch.output or "slurm-%j.out")
    logs = JobLogs(
        output=output,
        error=posixpath.join(job.log_dir, launch.error) if launch.error else None,
        job_name=launch.job_name,
    )
    facts = LaunchFacts(
        container_name=launch.container_name,
        log_file_pattern=posixpath.basename(output),
        logs=logs,
    )
    return read, facts
