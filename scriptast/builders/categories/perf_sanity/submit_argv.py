"""The submit.py invocation as argv (run without a shell), its mount list in pyxis's syntax."""

from __future__ import annotations

from scriptast.builders.categories.perf_sanity.submit_call import PerfSubmit
from scriptast.emitters.quote import pyxis_mounts
from scriptast.errors import UnsupportedError


def submit_argv(submit: PerfSubmit) -> list[str]:
    """`python3 submit.py <--test-list X | --config-file C [--test-name T]> --partition ...`
    (`--draft-launch-sh` for remote jobs and `--install-mode`/`--wheel-path` last)."""
    argv = [submit.python, submit.submit_py]
    if submit.config_file:
        argv += ["--config-file", submit.config_file]
        if submit.test_name:
            argv += ["--test-name", submit.test_name]
        if submit.benchmark_mode:
            argv += ["--benchmark-mode", submit.benchmark_mode]
    elif submit.test_list:
        argv += ["--test-list", submit.test_list]
    argv += [
        "--partition", submit.partition,
        "--account", submit.account,
        "--job-name", submit.job_name,
        "--image", submit.image,
        "--mounts", pyxis_mounts(submit.mounts),
        "--work-dir", submit.work_dir,
        "--llm-src", submit.llm_src,
        "--llm-models-root", submit.llm_models_root,
        "--launch-sh", submit.launch_sh,
        "--time", submit.time,
    ]  # fmt: skip
    if submit.cluster_name:
        argv += ["--cluster-name", submit.cluster_name]
    if submit.draft_launch_sh:
        argv += ["--draft-launch-sh", submit.draft_launch_sh]
    if submit.run_sh:
        argv += ["--run-sh", submit.run_sh]
    if submit.install_sh:
        argv += ["--install-sh", submit.install_sh]
    if submit.install_mode != "source":
        argv += ["--install-mode", submit.install_mode]
        if submit.wheel_path:
            argv += ["--wheel-path", submit.wheel_path]
    for flag, value in zip(argv[2::2], argv[3::2], strict=True):
        if value.startswith("-"):
            # argparse would read the value as an option of its own
            raise UnsupportedError(
                f"submit.py cannot take {flag} {value!r}: a value starting with '-' reads as "
                "an option"
            )
    return argv
