"""A value that becomes a positional argument of docker, srun or submit.py never starts with `-`
(it would be read as an option): the run is one error line and nothing is written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scriptast.builders.categories.perf_sanity.submit_argv import submit_argv
from scriptast.builders.categories.perf_sanity.submit_call import PerfSubmit
from scriptast.errors import ModelError, UnsupportedError
from scriptast.model.slurm import PyxisContainer
from tests.hostile.bad_inputs import base_fields

SCRIPTAST = str(Path(sys.executable).parent / "scriptast")


@pytest.mark.parametrize("scenario", ["local_docker", "local_slurm"])
@pytest.mark.parametrize("image", ["--volume=/:/host", "-v/:/host", "--privileged"])
def test_an_option_as_image_is_refused(tmp_path: Path, scenario: str, image: str) -> None:
    fields = {**base_fields(tmp_path), "execution_scenario": scenario, "container_image": image}
    if scenario == "local_docker":
        fields.update(slurm_env_file=None, partition=None, account=None)
        fields = {k: v for k, v in fields.items() if v is not None}
        fields["env_check"] = {"gpus_per_node": 8}
    result = subprocess.run(
        [SCRIPTAST, "emit", "--request", "-"],
        input=json.dumps(fields),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert result.stderr == (
        f"error: container_image {image!r} is not an image reference: it starts with '-', so "
        "docker and srun would read it as an option; give registry/path:tag (docker) or "
        "registry#path:tag (enroot)\n"
    )
    assert not (tmp_path / "work").exists()


def test_the_model_refuses_an_option_as_pyxis_image() -> None:
    with pytest.raises(ModelError, match="read it as an option"):
        PyxisContainer(image="--container-mounts=/:/x")


def test_submit_py_gets_no_value_that_reads_as_an_option() -> None:
    values = dict(
        python="python3", submit_py="/r/submit.py", partition="batch", account="a",
        job_name="j", image="nvcr.io#x/y:1", mounts=(), work_dir="/w", llm_src="/r",
        llm_models_root="/m", launch_sh="/w/slurm_launch.sh", time="02:00:00",
        config_file="/c.yaml",
    )  # fmt: skip
    assert submit_argv(PerfSubmit(**values))[2:4] == ["--config-file", "/c.yaml"]  # type: ignore[arg-type]
    with pytest.raises(UnsupportedError, match="--partition '-x'"):
        submit_argv(PerfSubmit(**{**values, "partition": "-x"}))  # type: ignore[arg-type]
