"""The job pipeline: request -> resolved job -> models -> verified text, then an all-or-nothing
write into work_dir. `generate` computes everything in memory; `write_outputs` writes it."""

from __future__ import annotations

import posixpath
from pathlib import Path

import msgspec

from scriptast.builders.file_names import check_inside
from scriptast.builders.job import ResolvedJob
from scriptast.builders.job_spec import JobSpec, build_job_spec
from scriptast.builders.request import Request
from scriptast.builders.resolve import resolve
from scriptast.docker import DockerRun
from scriptast.emitters.bash import BashEmitter, emit
from scriptast.emitters.job_spec_json import emit_job_spec
from scriptast.emitters.quote import pyxis_mounts
from scriptast.emitters.summary import emit_summary
from scriptast.errors import ResolveError
from scriptast.script import Script
from scriptast.text_files import read_text_file

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


def generate(request: Request, *, machine: str | None = None, home: str | None = None) -> Output:
    """Resolve, build, emit and verify; nothing touches work_dir (submit.py runs in a
    temporary folder)."""
    job = resolve(request, machine=machine, home=home)
    _check_shell_text(job)
    files: list[OutputFile] = []
    extra: list[str] = []
    docker_cmd: str | None = None
    docker_run: DockerRun | None = None
    argv: tuple[str, ...] = ()
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
        main, argv, copies = _perf_sanity(job)
        files += [*copies, main]
        extra += [c.path for c in copies]
        script_path = main.path
    else:
        from scriptast.builders import slurm_jobs

        if job.category == "custom":
            slurm, runner = slurm_jobs.build_custom(job)
            assert job.custom_run_script_local is not None
            files.append(_file(job, posixpath.basename(job.custom_run_script_local), runner))
            extra.append(job.custom_run_script_local)
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
        check_inside(job.work_dir, item.path)
    spec = build_job_spec(
        job,
        script_name=posixpath.basename(main.path),
        script_path=script_path,
        extra_files=tuple(extra),
        container_mounts=_mount_list(job),
        docker_cmd=docker_cmd,
        files=_digests(files),
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
    from scriptast.emitters.lint import bash_syntax_problem
    from scriptast.emitters.verify import parse_commands
    from scriptast.errors import InputError, VerifyError

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


def _digests(files: list[OutputFile]) -> dict[str, str]:
    """`{name: sha256}` of each file written beside job_spec.json, as its UTF-8 bytes."""
    import hashlib

    return {
        posixpath.basename(f.path): hashlib.sha256(f.text.encode("utf-8")).hexdigest()
        for f in files
    }


def _perf_sanity(job: ResolvedJob) -> tuple[OutputFile, tuple[str, ...], list[OutputFile]]:
    """Run submit.py (typed argv, no shell) in a temporary folder; keep what it wrote."""
    import subprocess
    import tempfile

    from scriptast.builders.perf_job import (
        LAUNCH_SH,
        accuracy_config,
        accuracy_config_name,
        build_perf_submit,
    )
    from scriptast.emitters.perf_argv import submit_argv
    from scriptast.emitters.perf_config import emit_perf_config

    assert job.perf is not None
    copies: list[OutputFile] = []
    with tempfile.TemporaryDirectory(prefix="scriptast-submit-") as stage:
        config_copy = None
        if job.perf.accuracy:
            name = accuracy_config_name(job)
            text = emit_perf_config(accuracy_config(job))
            config_copy = posixpath.join(stage, name)
            Path(config_copy).write_text(text, encoding="utf-8")
            copies.append(OutputFile(posixpath.join(job.work_dir, name), text))
        launch = posixpath.join(stage, LAUNCH_SH)
        argv = submit_argv(build_perf_submit(job, launch, config_copy))
        try:
            result = subprocess.run(argv, capture_output=True, text=True, cwd=job.repo_root)
        except OSError as error:
            raise ResolveError(f"cannot run submit.py ({argv[0]}): {error.strerror}") from None
        if result.returncode != 0:
            message = (result.stderr.strip() or result.stdout.strip()).splitlines()
            tail = " | ".join(message[-5:]) if message else "no output"
            raise ResolveError(f"submit.py failed with exit code {result.returncode}: {tail}")
        if not Path(launch).is_file():
            raise ResolveError(f"submit.py exited 0 but did not write {LAUNCH_SH}")
        text = read_text_file(launch, "the launch script submit.py wrote")
    main = OutputFile(posixpath.join(job.work_dir, LAUNCH_SH), text, executable=True)
    return main, tuple(argv), copies


def write_outputs(output: Output) -> None:
    """Write every file or none (see scriptast.write): job_spec.json last, under a lock on
    work_dir; files an earlier emit wrote there and this one does not are removed with it."""
    from scriptast.write import write_all

    write_all(output.job.work_dir, output.files, spec=JOB_SPEC)
