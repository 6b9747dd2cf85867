"""What one emit produces: the files to write and what job_spec.json and the summary say."""

from __future__ import annotations

import msgspec

from scriptast.builders.category import LaunchFacts
from scriptast.builders.resolution.job import ResolvedJob
from scriptast.contract.job_spec import JobLogs, JobSpec
from scriptast.model.docker import DockerRun
from scriptast.workdir.write import OutputFile


class JobFiles(msgspec.Struct, frozen=True, kw_only=True):
    """A job's files before job_spec.json: the main script last, the local paths job_spec
    lists as extra files (and their cluster paths), the logs the job writes, and what a
    launch script it did not write says (`launch`), or the docker command."""

    job: ResolvedJob
    files: tuple[OutputFile, ...]
    main: OutputFile
    script_path: str | None
    logs: JobLogs
    extra: tuple[str, ...] = ()
    destinations: dict[str, str] = {}
    launch: LaunchFacts | None = None
    docker_run: DockerRun | None = None
    docker_cmd: str | None = None
    submit_argv: tuple[str, ...] = ()


class Output(msgspec.Struct, frozen=True):
    """Everything one request produces."""

    job: ResolvedJob
    files: tuple[OutputFile, ...]
    job_spec: JobSpec
    main_script: str
    summary: str
    submit_argv: tuple[str, ...] = ()
    docker_run: DockerRun | None = None
