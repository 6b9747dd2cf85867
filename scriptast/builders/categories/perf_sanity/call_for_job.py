"""submit.py's call for a perf_sanity job: the final `--launch-sh`, the cluster `--work-dir` and
`--llm-src` with the local launch draft for a remote job, and the config copy it must find."""

from __future__ import annotations

import posixpath
from pathlib import Path

from scriptast.builders.categories.perf_sanity.custom_configs import localized
from scriptast.builders.categories.perf_sanity.submit_call import (
    ConfigCopy,
    PerfSubmit,
    ScriptCopy,
    SubmitPlan,
)
from scriptast.builders.categories.perf_sanity.submit_plan import (
    DRAFT,
    INSTALL_SH,
    LAUNCH_SH,
    LOCAL_SCRIPTS,
    RUN_SH,
    check_passable,
    cluster_name_of,
    config_of_test_id,
    local_file,
)
from scriptast.builders.categories.perf_sanity.work import PerfWork
from scriptast.builders.resolution.job import ResolvedJob
from scriptast.builders.resolution.perf_config import load_config, runtime_mode
from scriptast.common.file_names import check_component
from scriptast.common.text_files import read_text_file
from scriptast.contract.work_dir_names import EXIT_FILE, JOB_SPEC, RUN_FILE
from scriptast.errors import ResolveError


def plan_submit(job: ResolvedJob, launch_sh: str) -> SubmitPlan:
    """submit.py's arguments: the final `--launch-sh`, remote `--work-dir`/`--llm-src` with the
    local draft for remote_slurm, and any config copy it must find in the cluster work dir."""
    perf = job.work_as(PerfWork)
    assert job.slurm is not None
    remote = job.placement.remote
    copy: ConfigCopy | None = None
    config, test_name, test_list = perf.config_file, perf.test_name, perf.test_list
    mode: str | None = None
    benchmark_mode: str | None = None
    if config is None and remote:
        config, test_name, mode, benchmark_mode = config_of_test_id(job.repo_root, test_list or "")
        test_list = None
    if config is not None:
        if perf.accuracy:
            from scriptast.builders.categories.perf_sanity.fallback import Fallback, accuracy_copy

            assert perf.accuracy_task is not None
            stem = posixpath.splitext(posixpath.basename(config))[0]
            planned = Fallback(test_name, perf.accuracy_task, ())
            copy = ConfigCopy(name=f"{stem}_accuracy.yaml", data=accuracy_copy(config, planned))
        elif remote:
            text = read_text_file(config, "perf_config_yaml")
            copy = ConfigCopy(name=posixpath.basename(config), text=text)
        if remote and copy is not None:
            data = copy.data if copy.data is not None else load_config(config)
            local = localized(data, job.repo_root, job.project_path)
            if local is not None:
                copy = ConfigCopy(name=copy.name, data=local)
        mode = mode or runtime_mode(load_config(config), config)
    if copy is not None:
        check_component(copy.name, "perf config copy")
        if copy.name in GENERATED_NAMES:
            raise ResolveError(
                f"perf_config_yaml {config} is named like a file submit.py or emit writes "
                f"({copy.name}): its copy would be overwritten; rename the config",
                field="perf_config_yaml",
            )
        config = posixpath.join(job.log_dir, copy.name)
    draft = None
    if remote:
        assert mode is not None
        draft = local_file(job.repo_root, DRAFT.format(mode=mode), "the launch draft")
    scripts = checkout_scripts(job.repo_root)
    placed = {item.name: posixpath.join(job.log_dir, item.name) for item in scripts}
    submit = PerfSubmit(
        python="python3",
        submit_py=perf.submit_py,
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
        test_list=test_list if config is None else None,
        config_file=config,
        test_name=test_name,
        benchmark_mode=benchmark_mode,
        draft_launch_sh=draft,
        install_mode=job.request.install_mode,
        wheel_path=job.request.wheel_path,
        cluster_name=cluster_name_of(job)[0],
        run_sh=placed.get(RUN_SH),
        install_sh=placed.get(INSTALL_SH),
    )
    check_passable(submit, remote=job.log_dir != job.work_dir)
    return SubmitPlan(submit=submit, copy=copy, scripts=scripts)


def checkout_scripts(repo_root: str) -> tuple[ScriptCopy, ...]:
    """The checkout's slurm_run.sh and slurm_install.sh (those it has), to be copied into the work
    dir: submit.py sets the executable bit of the scripts it is given, and the launch draft does
    again on the cluster, so given the checkout's own they change the user's repository."""
    copies = []
    for name in (RUN_SH, INSTALL_SH):
        path = posixpath.join(repo_root, LOCAL_SCRIPTS, name)
        if Path(path).is_file():
            text = read_text_file(path, f"the checkout's {name}")
            copies.append(ScriptCopy(name=name, text=text))
    return tuple(copies)


GENERATED_NAMES = frozenset(
    {LAUNCH_SH, RUN_SH, INSTALL_SH, "test_list.txt", JOB_SPEC, RUN_FILE, EXIT_FILE}
)
"""Files a perf_sanity job's work dir gets from submit.py, emit and run."""
