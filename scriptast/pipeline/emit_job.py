"""The job pipeline: request -> resolved job -> models -> verified text, then an all-or-nothing
write into work_dir. `generate` computes everything in memory; `write_outputs` writes it."""

from __future__ import annotations

import os
import posixpath
from typing import Any

import msgspec

from scriptast.builders.categories import category
from scriptast.builders.category import Category, Submitted
from scriptast.builders.request.fields import Request
from scriptast.builders.request.forwarded import (
    kept_fields,
    kept_monitor_timeout,
    readable_job_spec,
)
from scriptast.builders.resolution.job import ResolvedJob
from scriptast.builders.resolve import resolve
from scriptast.common.file_names import check_component, check_inside
from scriptast.contract.axes import DOCKER
from scriptast.contract.measured import Measures
from scriptast.contract.work_dir_names import JOB_SPEC
from scriptast.emitters.bash import BashEmitter
from scriptast.emitters.job_spec_json import emit_job_spec
from scriptast.emitters.quote import pyxis_mounts
from scriptast.emitters.summary import emit_summary
from scriptast.errors import InputError
from scriptast.model.script import Script
from scriptast.pipeline.file_set import JobFiles, Output
from scriptast.pipeline.spec_of_job import build_job_spec
from scriptast.pipeline.verified_emit import emit
from scriptast.schedulers.backend import Lowered
from scriptast.schedulers.registry import scheduler
from scriptast.workdir.write import OutputFile

__all__ = ["JOB_SPEC", "Output", "OutputFile", "generate", "write_outputs"]


def _file(job: ResolvedJob, name: str, script: Script, executable: bool = True) -> OutputFile:
    return OutputFile(posixpath.join(job.work_dir, name), emit(script), executable)


def generate(
    request: Request,
    *,
    machine: str | None = None,
    home: str | None = None,
    write_nothing: bool = False,
    container_suffix: str | None = None,
) -> Output:
    """Resolve, build, emit and verify, in memory. A job whose launch script submit.py
    writes runs it with its final paths under the work_dir lock and puts the disk back as it
    was (its files are in the Output); `write_nothing` refuses such a job instead. A docker
    job's container is named `<job name>_<container_suffix>` when one is given (the docker
    jobs of a sweep run side by side, and docker names one container once)."""
    job = resolve(request, machine=machine, home=home)
    if container_suffix is not None and job.placement.scheduler == DOCKER:
        named = check_component(f"{job.job_name}_{container_suffix}", "container name", reserve=16)
        job = msgspec.structs.replace(job, job_name=named)
    chosen = category(job.category)
    if write_nothing and chosen.submit is not None:
        raise InputError(
            f"a {chosen.name} job is written by submit.py, which must write test_list.txt and "
            "the launch script into the work dir to make them; --stdout cannot show it without "
            "writing: drop --stdout"
        )
    _check_shell_text(job)
    if chosen.submit is not None:
        made = _taken_back(chosen.submit(job))
    else:
        assert chosen.steps is not None
        made = _lowered(
            job, scheduler(job.placement.scheduler).lower(job.plan(), chosen.steps(job))
        )
    return _finish(made, chosen)


def _taken_back(written: Submitted) -> JobFiles:
    """The files of a job whose launch script its category's submit program wrote: that
    script last, and the others listed in job_spec as extra files."""
    main = written.files[-1]
    others = written.files[:-1]
    return JobFiles(
        job=written.job,
        files=written.files,
        main=main,
        script_path=main.path,
        extra=tuple(f.path for f in others),
        destinations=written.destinations,
        logs=written.launch.logs,
        launch=written.launch,
        submit_argv=written.submit_argv,
    )


def _lowered(job: ResolvedJob, lowered: Lowered) -> JobFiles:
    """The files of a job its scheduler backend lowered: its other scripts first, then the
    main one; job_spec lists the others and the carried files as extra files."""
    files = [_file(job, name, script) for name, script in lowered.others]
    files += [OutputFile(posixpath.join(job.work_dir, name), text, False)
              for name, text in job.work.data_files()]  # fmt: skip
    main = _file(job, lowered.main_name, lowered.main)
    extra = (*(f.path for f in files), *lowered.carried)
    run = lowered.docker_run
    return JobFiles(
        job=job,
        files=(*files, main),
        main=main,
        script_path=main.path if lowered.names_script else None,
        logs=lowered.logs,
        extra=extra,
        destinations=_destinations(job, extra),
        docker_run=run,
        docker_cmd="\n".join(BashEmitter().statement(run, 0)) if run is not None else None,
    )


def _finish(made: JobFiles, chosen: Category) -> Output:
    """job_spec.json over the made files (their digests too), and the summary."""
    job = made.job
    spec_path = posixpath.join(job.work_dir, JOB_SPEC)
    for item in (*made.files, OutputFile(spec_path, "")):
        check_inside(job.work_dir, item.path, folder=made.launch is not None)
    _check_collisions(made, spec_path)
    earlier = readable_job_spec(job.work_dir)
    spec = build_job_spec(
        job,
        patterns=chosen.patterns,
        script_name=posixpath.basename(made.main.path),
        script_path=made.script_path,
        extra_files=made.extra,
        container_mounts=pyxis_mounts(job.mounts),
        logs=made.logs,
        docker_cmd=made.docker_cmd,
        files=_digests(job.work_dir, made.files),
        launch=made.launch,
        destinations=made.destinations,
        measures=_measures(job, chosen),
        allocation_refused=chosen.allocation_refusal,
        monitor_timeout_seconds=kept_monitor_timeout(earlier),
    )
    _check_hang_pattern(job.request.hang_pattern)
    text = emit_job_spec(spec, kept_fields(earlier), _raw_env(job))
    return Output(
        job=job,
        files=(*made.files, OutputFile(spec_path, text)),
        job_spec=spec,
        main_script=made.main.path,
        summary=emit_summary(
            spec,
            spec_path,
            made.main.path,
            devices=job.required_devices,
            more=job.work.summary_lines(),
        ),
        submit_argv=made.submit_argv,
        docker_run=made.docker_run,
    )


def _measures(job: ResolvedJob, chosen: Category) -> Measures | None:
    """What the job measures, with the references file it is held against (read and checked
    now: a bad one is an error before anything is written)."""
    found = chosen.measures(job) if chosen.measures is not None else None
    if job.request.baseline is not None:
        if found is None:
            raise InputError(
                f"baseline {job.request.baseline}: a {chosen.name} job prints no figures "
                "scriptast reads; drop the baseline"
            )
        found = msgspec.structs.replace(found, baseline=job.request.baseline)
    reference = job.request.reference
    if reference is None:
        return found
    from scriptast.results.reference_file import read_references

    path = os.path.abspath(reference)
    read_references(path)
    if found is None:
        raise InputError(
            f"reference {reference}: a {chosen.name} job prints no figures scriptast reads; "
            "drop the reference"
        )
    return msgspec.structs.replace(found, references=path)


def _check_hang_pattern(pattern: str | None) -> None:
    """The request's hang pattern is a regular expression that cannot match every line."""
    if pattern is None:
        return
    import re

    try:
        compiled = re.compile(pattern)
    except re.error as error:
        raise InputError(
            f"hang_pattern {pattern!r} is not a regular expression ({error}): write one such as "
            "'Hang detected after \\d+ seconds'"
        ) from None
    if compiled.search("") is not None:
        raise InputError(
            f"hang_pattern {pattern!r} matches an empty line, so every job would be HANG: "
            "write what the hang detector prints"
        )


def _raw_env(job: ResolvedJob) -> dict[str, Any] | None:
    return job.cluster.raw if job.cluster else None


def _check_shell_text(job: ResolvedJob) -> None:
    """A command that runs as its own text (`bash -c`) must be bash: bashlex reads most, and
    real `bash -n` decides what bashlex cannot read."""
    from scriptast.errors import VerifyError
    from scriptast.readers.roundtrip.verify import parse_commands

    for field, command in job.work.commands():
        if command.argv is not None:
            continue
        try:
            parse_commands(command.text)
        except VerifyError:
            from scriptast.readers.linter.lint import bash_syntax_problem

            problem = bash_syntax_problem(command.text)
            if problem is not None:
                raise InputError(f"{field} is not valid bash: {problem}") from None


def _check_collisions(made: JobFiles, spec_path: str) -> None:
    """No file emit writes is one of the job's own input files (it would be overwritten, and a
    runner could end up calling itself), and no two files go to one cluster path."""
    import os

    request = made.job.request
    inputs = [pair for part in request.parts for pair in part.local_files()]
    written = (  # each realpath costs a system call a folder of the path: none without inputs
        {os.path.realpath(f.path): f.path for f in (*made.files, OutputFile(spec_path, ""))}
        if inputs
        else {}
    )
    for field, given in inputs:
        if os.path.realpath(given) in written:
            name = posixpath.basename(written[os.path.realpath(given)])
            raise InputError(
                f"{field} {given} is where emit writes its {name}: it would be overwritten "
                "(and the job would run what emit wrote instead of it); move or rename it",
                field=field,
            )
    job = made.job
    if job.log_dir != job.work_dir:
        claimed = {posixpath.join(job.log_dir, posixpath.basename(made.main.path)): made.main.path}
        for local, remote in sorted(made.destinations.items()):
            other = claimed.setdefault(remote, local)
            if other != local:
                raise InputError(
                    f"{local} and {other} would both go to {remote} on the cluster; give them "
                    "different names",
                    field="custom_script",
                )


def _destinations(job: ResolvedJob, extra: tuple[str, ...]) -> dict[str, str]:
    """remote_slurm: each extra file goes into remote_work_dir under its own name."""
    if job.log_dir == job.work_dir:
        return {}
    return {path: posixpath.join(job.log_dir, posixpath.basename(path)) for path in extra}


def _digests(work_dir: str, files: tuple[OutputFile, ...]) -> dict[str, str]:
    """`{name: sha256}` of each file written with job_spec.json (its path relative to
    work_dir), as its UTF-8 bytes."""
    import hashlib

    return {
        posixpath.relpath(f.path, work_dir): hashlib.sha256(f.text.encode("utf-8")).hexdigest()
        for f in files
    }


def write_outputs(output: Output) -> None:
    """Write every file or none (see scriptast.workdir.write): job_spec.json last, under a lock on
    work_dir; files an earlier emit wrote there and this one does not are removed with it."""
    from scriptast.workdir.write import write_all

    write_all(output.job.work_dir, output.files, spec=JOB_SPEC)
