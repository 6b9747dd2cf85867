"""submit.py's call as typed values: the command line that makes a perf_sanity launch script, and
the config copy it must find first."""

from __future__ import annotations

from typing import Any

import msgspec

from scriptast.model.slurm import Mount


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
    benchmark_mode: str | None = None
    draft_launch_sh: str | None = None
    install_mode: str = "source"
    wheel_path: str | None = None
    cluster_name: str | None = None
    run_sh: str | None = None
    install_sh: str | None = None


class ConfigCopy(msgspec.Struct, frozen=True, kw_only=True):
    """A config submit.py reads and embeds, placed in the cluster work dir before it runs: the
    user's file as it is (`text`), or a changed mapping for the emitter to write (`data`)."""

    name: str
    text: str | None = None
    data: dict[str, Any] | None = None


class ScriptCopy(msgspec.Struct, frozen=True, kw_only=True):
    """A checkout script the launch script runs (slurm_run.sh, slurm_install.sh), copied into the
    work dir first: submit.py and the job set its executable bit, on the copy and never on the
    user's repository."""

    name: str
    text: str


class SubmitPlan(msgspec.Struct, frozen=True, kw_only=True):
    """submit.py's call, the config copy to place first (None: the config stays put), and the
    checkout scripts copied beside the launch script."""

    submit: PerfSubmit
    copy: ConfigCopy | None
    scripts: tuple[ScriptCopy, ...] = ()
