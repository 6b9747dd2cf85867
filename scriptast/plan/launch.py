"""A job's launch plan: what a scheduler backend needs of a resolved job to write its script
(its name, folders, image, mounts, Slurm parameters, install and models root), and nothing of
the request or the category beyond it."""

from __future__ import annotations

from typing import Literal

import msgspec

from scriptast.contract.job_spec import SlurmParams
from scriptast.model.slurm import Mount

WHEEL_GLOB = "build/tensorrt_llm-*.whl"
"""The wheel an install from a wheel takes when none is named: the first of these (sorted)."""


class LaunchPlan(msgspec.Struct, frozen=True, kw_only=True):
    """A job as a backend lowers it. `install_mode` `source` (`pip install -e .`) or `wheel`
    (`wheel_path`, else the first WHEEL_GLOB); `extra_requirements` the requirement files its
    work adds; `carried` the local files the job needs beside its scripts."""

    job_name: str
    model_name: str
    work_dir: str
    log_dir: str
    project_path: str
    image: str
    image_enroot: str
    mounts: tuple[Mount, ...]
    slurm: SlurmParams | None
    llm_models_root: str
    install: bool
    install_mode: Literal["source", "wheel"] = "source"
    wheel_path: str | None = None
    extra_requirements: tuple[str, ...] = ()
    carried: tuple[str, ...] = ()
