"""The job pipeline: request -> resolved job -> models -> verified text, then an all-or-nothing
write into work_dir. `generate` computes everything in memory; `write_outputs` writes it."""

from __future__ import annotations

import posixpath

import msgspec

from scriptast.builders.file_names import check_inside
from scriptast.builders.job import ResolvedJob, TrailEntry
from scriptast.builders.job_spec import JobSpec, LaunchFacts, build_job_spec
from scriptast.builders.request import Request
from scriptast.builders.resolve import resolve
from scriptast.docker import DockerRun
from scriptast.emitters.bash import BashEmitter
from scriptast.emitters.job_spec_json import emit_job_spec
from scriptast.emitters.quote import pyxis_mounts
from scriptast.emitters.summary import emit_summary
from scriptast.errors import ResolveError
from scriptast.render import emit
from scriptast.script import Script

JOB_SPEC = "job_spec.json"
DOCKER_CMD = "docker_cmd.sh"


class OutputFile(msgspec.Struct, frozen=True):
    """One file to write: absolute path, text, executable bit."""

    path: str
    text: str
    executable: bool = False


class Output(msgspec.Struct, frozen=True):
    """Everything one request produces."""

    job: ResolvedJob
    files: tuple[OutputFile, ...]
    job_spec: JobSpec
    main_script: str
    summary: str
    submit_argv: tuple[str, ...] = ()
    docker_run: DockerRun | None = None


def _file(job: ResolvedJob, name: str, script: Script, executable: bool = True) -> OutputFile:
    return OutputFile(posixpath.join(job.work_dir, name), emit(script), executable)


def _mount_list(job: ResolvedJob) -> str:
    return pyxis_mounts([(m.source, m.target, m.flags) for m in job.mounts])


def generate(
    request: Request,
    *,
    machine: str | None = None,
    home: str | None = None,
    write_nothing: bool = False,
) -> Output:
    """Resolve, build, emit and verify, in memory. A perf_sanity job runs submit.py with its
    final paths under the work_dir lock and puts the disk back as it was (its files are in
    the Output); `write_nothing` refuses such a job instead."""
    job = resolve(request, machine=machine, home=home)
    if write_nothing and job.category == "perf_sanity":
        from scriptast.errors import InputError

        raise InputError(
            "a perf_sanity job is written by submit.py, which must write test_list.txt and the "
            "launch script into the work dir to make them; --stdout cannot show it without "
            "writing: drop --stdout"
        )
    _check_shell_text(job)
    files: list[OutputFile] = []
    extra: list[str] = []
    docker_cmd: str | None = None
    docker_run: DockerRun | None = None
    argv: tuple[str, ...] = ()
    perf: _PerfResult | None = None
    if job.is_docker:
        from scriptast.builders.docker_job import build_docker

        script = build_docker(job)
        main = _file(job, DOCKER_CMD, script)
        files.append(main)
        assert isinstance(script.body[0], DockerRun)
        docker_run = script.body[0]
        docker_cmd = "\n".join(BashEmitter().statement(docker_run, 0))
        script_path = None
    elif job.category == "perf_sanity":
        perf = _perf_sanity(job)
        job, main, argv = perf.job, perf.main, perf.argv
        files += [*perf.files, main]
        extra += [f.path for f in perf.files]
        script_path = main.path
    else:
        from scriptast.builders import slurm_jobs

        if job.category == "custom":
            slurm, runner = slurm_jobs.build_custom(job)
            assert job.custom_run_script_local is not None
            files.append(_file(job, posixpath.basename(job.custom_run_script_local), runner))
            extra.append(job.custom_run_script_local)
            if job.custom_script_local is not None:
                extra.append(job.custom_script_local)
        else:
            builders = {
                "pytest": slurm_jobs.build_pytest,
                "eval": slurm_jobs.build_eval,
                "bench": slurm_jobs.build_bench,
            }
            slurm = builders[job.category](job)
        main = _file(job, f"{job.job_name}.slurm", slurm)
        files.append(main)
        script_path = main.path
    spec_path = posixpath.join(job.work_dir, JOB_SPEC)
    for item in (*files, OutputFile(spec_path, "")):
        check_inside(job.work_dir, item.path, folder=perf is not None)
    spec = build_job_spec(
        job,
        script_name=posixpath.basename(main.path),
        script_path=script_path,
        extra_files=tuple(extra),
        container_mounts=_mount_list(job),
        docker_cmd=docker_cmd,
        files=_digests(job.work_dir, files),
        launch=None
        if perf is None
        else LaunchFacts(
            container_name=perf.container_name, log_file_pattern=perf.log_file_pattern
        ),
        destinations=perf.destinations if perf is not None else _destinations(job, extra),
    )
    files.append(OutputFile(spec_path, emit_job_spec(spec)))
    return Output(
        job=job,
        files=tuple(files),
        job_spec=spec,
        main_script=main.path,
        summary=emit_summary(job, spec_path, main.path),
        submit_argv=argv,
        docker_run=docker_run,
    )


_COMMAND_FIELDS = {
    "test": "test_cmd",
    "eval": "eval_cmd",
    "bench_prepare": "bench_cmd",
    "bench_run": "bench_cmd",
    "custom": "custom_cmd",
}


def _check_shell_text(job: ResolvedJob) -> None:
    """A command that runs as its own text (`bash -c`) must be bash: bashlex reads most, and
    real `bash -n` decides what bashlex cannot read."""
    from scriptast.errors import InputError, VerifyError
    from scriptast.readers.lint import bash_syntax_problem
    from scriptast.readers.verify import parse_commands

    for name, field in _COMMAND_FIELDS.items():
        command = getattr(job, name)
        if command is None or command.argv is not None:
            continue
        try:
            parse_commands(command.text)
        except VerifyError:
            problem = bash_syntax_problem(command.text)
            if problem is not None:
                raise InputError(f"{field} is not valid bash: {problem}") from None


def _destinations(job: ResolvedJob, extra: list[str]) -> dict[str, str]:
    """remote_slurm: each extra file goes into remote_work_dir under its own name."""
    if job.log_dir == job.work_dir:
        return {}
    return {path: posixpath.join(job.log_dir, posixpath.basename(path)) for path in extra}


def _digests(work_dir: str, files: list[OutputFile]) -> dict[str, str]:
    """`{name: sha256}` of each file written with job_spec.json (its path relative to
    work_dir), as its UTF-8 bytes."""
    import hashlib

    return {
        posixpath.relpath(f.path, work_dir): hashlib.sha256(f.text.encode("utf-8")).hexdigest()
        for f in files
    }


class _PerfResult(msgspec.Struct, frozen=True, kw_only=True):
    job: ResolvedJob
    main: OutputFile
    files: tuple[OutputFile, ...]
    argv: tuple[str, ...]
    destinations: dict[str, str]
    container_name: str | None
    log_file_pattern: str


def _perf_sanity(job: ResolvedJob) -> _PerfResult:
    """Run submit.py with the final paths (see scriptast.submit_run: what it writes is taken
    back into the output and the disk put back), then read its launch script for the values
    job_spec.json and the summary report."""
    from scriptast.builders.perf_job import LAUNCH_SH, plan_submit, precheck_path
    from scriptast.emitters.perf_argv import submit_argv
    from scriptast.submit_run import Staged, Watched, run_submit

    assert job.perf is not None and job.slurm is not None
    remote = job.log_dir != job.work_dir
    launch = posixpath.join(job.work_dir, LAUNCH_SH)
    plan = plan_submit(job, launch)
    argv = submit_argv(plan.submit)
    watched = [Watched(path=job.work_dir)]
    if remote:
        watched.append(Watched(path=job.log_dir, remote=job.log_dir))
    staged = []
    if plan.copy is not None:
        from scriptast.emitters.perf_config import emit_perf_config

        copy = plan.copy
        text = copy.text if copy.data is None else emit_perf_config(copy.data)
        assert text is not None
        staged.append(Staged(path=posixpath.join(job.log_dir, copy.name), text=text))
    from scriptast.builders.slurm_env import SlurmEnv

    # resolve read and checked slurm_env.json already; its object is in the job
    env = msgspec.convert(job.slurm_env_raw, type=SlurmEnv)
    taken = run_submit(
        argv,
        cwd=job.repo_root,
        work_dir=job.work_dir,
        watched=watched,
        staged=staged,
        slurm_env=env,
        extra_env={"PYTHONPATH": precheck_path(job)} if remote else {},
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
    read = _read_launch(main.text, job)
    return _PerfResult(
        job=read[0],
        main=OutputFile(main.path, main.text, executable=True),
        files=tuple(files[path] for path in sorted(files)),
        argv=tuple(argv),
        destinations=destinations,
        container_name=read[1],
        log_file_pattern=read[2],
    )


def _read_launch(text: str, job: ResolvedJob) -> tuple[ResolvedJob, str | None, str]:
    """The job with the Slurm values the launch script asks for, its container name and the
    log file name its `-o` gives."""
    from scriptast.builders.job import SlurmParams
    from scriptast.readers.launch_readback import read_launch_script

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
    trail = (
        *job.trail,
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
    )
    read = msgspec.structs.replace(
        job, slurm=slurm, required_devices=gpus, world_size=launch.ntasks, trail=trail
    )
    pattern = posixpath.basename(launch.output) if launch.output else "slurm-%j.out"
    return read, launch.container_name, pattern


def write_outputs(output: Output) -> None:
    """Write every file or none (see scriptast.write): job_spec.json last, under a lock on
    work_dir; files an earlier emit wrote there and this one does not are removed with it."""
    from scriptast.write import write_all

    write_all(output.job.work_dir, output.files, spec=JOB_SPEC)
