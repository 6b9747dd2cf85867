"""Category 4, perf_sanity: the typed submit.py invocation and the eval-fallback config copy."""

from __future__ import annotations

import posixpath
from typing import Any

import msgspec

from scriptast.builders.job import ResolvedJob
from scriptast.errors import ResolveError
from scriptast.slurm import Mount
from scriptast.text_files import read_text_file, yaml_problem

LAUNCH_SH = "slurm_launch.sh"


class PerfSubmit(msgspec.Struct, frozen=True, kw_only=True):
    """`python3 submit.py ...` as typed values; the emitter turns it into argv (no shell)."""

    python: str
    submit_py: str
    partition: str
    account: str
    job_name: str
    image: str
    mounts: tuple[Mount, ...]
    work_dir: str
    llm_src: str
    llm_models_root: str
    launch_sh: str
    time: str
    test_list: str | None = None
    config_file: str | None = None
    test_name: str | None = None


def accuracy_config_name(job: ResolvedJob) -> str:
    """The file name of the eval-fallback config copy in work_dir."""
    assert job.perf is not None and job.perf.config_file is not None
    stem = posixpath.splitext(posixpath.basename(job.perf.config_file))[0]
    return f"{stem}_accuracy.yaml"


def accuracy_config(job: ResolvedJob) -> dict[str, Any]:
    """A copy of perf_config_yaml with `accuracy.enable_accuracy_test: true`."""
    import yaml

    assert job.perf is not None and job.perf.config_file is not None
    try:
        data = yaml.safe_load(read_text_file(job.perf.config_file, "perf_config_yaml"))
    except yaml.YAMLError as error:
        raise ResolveError(
            f"perf_config_yaml {job.perf.config_file} is not YAML: {yaml_problem(error)}"
        ) from None
    if not isinstance(data, dict):
        raise ResolveError(f"perf_config_yaml {job.perf.config_file} must hold a mapping")
    accuracy = data.get("accuracy")
    data["accuracy"] = {
        **(accuracy if isinstance(accuracy, dict) else {}),
        "enable_accuracy_test": True,
    }
    return data


def build_perf_submit(job: ResolvedJob, launch_sh: str, config_copy: str | None) -> PerfSubmit:
    """The submit.py call: remote paths for --work-dir/--llm-src, a local --launch-sh."""
    assert job.perf is not None and job.slurm is not None
    return PerfSubmit(
        python="python3",
        submit_py=job.perf.submit_py,
        partition=job.slurm.partition,
        account=job.slurm.account,
        job_name=job.job_name,
        image=job.image_enroot,
        mounts=job.mounts,
        work_dir=job.log_dir,
        llm_src=job.project_path,
        llm_models_root=job.llm_models_root,
        launch_sh=launch_sh,
        time=job.slurm.time_limit,
        test_list=job.perf.test_list if config_copy is None and not job.perf.config_file else None,
        config_file=config_copy or job.perf.config_file,
        test_name=job.perf.test_name,
    )
