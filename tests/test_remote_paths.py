"""remote_slurm paths: models, checkpoints and mount sources are cluster paths (absolute, never
looked at here), a local custom script travels to remote_work_dir, and the cluster home comes
from slurm_env.remote_cwd or --remote-home."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scriptast.builders.read_request import build_request
from scriptast.builders.resolve import resolve
from scriptast.errors import InputError, ResolveError
from scriptast.pipeline.emit_job import generate
from tests.cases import REMOTE
from tests.site import Site


def _remote(site: Site, **fields: Any) -> dict[str, Any]:
    return site.fields(**{**REMOTE, "workflow_type": "custom", "custom_cmd": "true", **fields})


@pytest.mark.parametrize("field", ["models_path", "checkpoint_path"])
def test_a_relative_cluster_path_is_an_error(site: Site, field: str) -> None:
    with pytest.raises(InputError, match=f"{field} 'models/llama' must be an absolute path on"):
        build_request(_remote(site, **{field: "models/llama"}), {}, cwd=str(site.root))


def test_cluster_paths_are_kept_verbatim_and_never_checked_here(site: Site) -> None:
    request = build_request(_remote(site, models_path="/lustre/models"), {})
    job = resolve(request, machine="x86_64", home=str(site.home))
    assert request.models_path == "/lustre/models" and not Path("/lustre/models").exists()
    assert job.mounts[2].source == "/lustre/models" and job.warnings == ()


def test_a_relative_mount_source_in_slurm_env_is_an_error(site: Site) -> None:
    site.write_slurm_env(mounts=["models:/models"])
    fields = _remote(site)
    del fields["models_path"]
    with pytest.raises(ResolveError, match="'models' must be an absolute path"):
        resolve(build_request(fields, {}), machine="x86_64", home=str(site.home))


def test_a_local_models_path_that_does_not_exist(site: Site) -> None:
    missing = str(site.root / "no/models")
    slurm = site.request(workflow_type="custom", custom_cmd="true", models_path=missing)
    job = resolve(slurm, machine="x86_64", home=str(site.home))
    assert job.warnings == (
        f"models_path {missing} does not exist on this machine; the job's nodes must have it",
    )
    docker = site.request(
        workflow_type="custom",
        custom_cmd="true",
        models_path=missing,
        execution_scenario="local_docker",
        slurm_env_file=None,
        partition=None,
        account=None,
    )
    with pytest.raises(ResolveError, match="does not exist; docker cannot mount it"):
        resolve(docker, machine="x86_64", home=str(site.home))


def test_a_local_custom_script_travels_to_remote_work_dir(site: Site) -> None:
    script = site.scripts / "run_custom.sh"
    request = build_request(_remote(site, custom_cmd=None, custom_script=str(script)), {})
    output = generate(request, machine="x86_64", home=str(site.home))
    remote_dir = REMOTE["remote_work_dir"]
    runner = next(f.text for f in output.files if f.path.endswith("slurm_run_custom.sh"))
    assert f"bash {remote_dir}/run_custom.sh" in runner
    spec = json.loads(next(f.text for f in output.files if f.path.endswith("job_spec.json")))
    assert str(script) in spec["extra_files"]
    assert spec["extra_file_destinations"][str(script)] == f"{remote_dir}/run_custom.sh"


@pytest.mark.parametrize("through_link", [False, True])
def test_a_local_input_where_emit_writes_is_refused(site: Site, through_link: bool) -> None:
    fields = _remote(site, custom_cmd=None)
    work_dir = Path(fields["work_dir"])
    work_dir.mkdir(parents=True, exist_ok=True)
    runner = work_dir / "slurm_run_custom.sh"
    runner.write_text("echo mine\n")
    given = runner
    if through_link:  # the same file by another name is the same collision
        given = site.root / "alias.sh"
        given.symlink_to(runner)
    request = build_request({**fields, "custom_script": str(given)}, {})
    with pytest.raises(InputError, match=r"is where emit writes its slurm_run_custom\.sh"):
        generate(request, machine="x86_64", home=str(site.home))
    assert runner.read_text() == "echo mine\n"


def test_a_custom_script_only_on_the_cluster_runs_as_written(site: Site) -> None:
    request = build_request(_remote(site, custom_cmd=None, custom_script="/lustre/run.sh"), {})
    output = generate(request, machine="x86_64", home=str(site.home))
    runner = next(f.text for f in output.files if f.path.endswith("slurm_run_custom.sh"))
    assert "bash /lustre/run.sh" in runner
    spec = json.loads(next(f.text for f in output.files if f.path.endswith("job_spec.json")))
    assert "/lustre/run.sh" not in spec["extra_files"]


def test_remote_home_is_used_without_remote_cwd(site: Site) -> None:
    data = json.loads(site.slurm_env.read_text())
    del data["remote_cwd"]
    del data["home"]
    site.slurm_env.write_text(json.dumps(data))
    with pytest.raises(
        ResolveError, match=r"a slurm_env.remote_cwd under the home, or --remote-home"
    ):
        resolve(build_request(_remote(site), {}), machine="x86_64", home=str(site.home))
    job = resolve(
        build_request(_remote(site, remote_home="/home/bob"), {}),
        machine="x86_64",
        home=str(site.home),
    )
    assert any(m.source == "/home/bob" for m in job.mounts)
    assert ("home", "/home/bob", "input remote_home") in [
        (e.field, e.value, e.source) for e in job.trail
    ]


def test_remote_home_must_be_absolute(site: Site) -> None:
    with pytest.raises(InputError, match="remote_home 'bob' must be an absolute path"):
        build_request(_remote(site, remote_home="bob"), {})
