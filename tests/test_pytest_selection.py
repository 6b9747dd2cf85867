"""pytest jobs as TRT-LLM marks and names its tests: the GPU count is the largest over every
selected test, MPI ranks run as its CI runs them, unreadable selections fall back with a
warning, and the three ways of writing a test path all find the file when the job runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scriptast.builders.resolution.job import ResolvedJob
from scriptast.builders.resolve import resolve
from scriptast.errors import ResolveError
from tests.shim_recorder import Shims
from tests.site import Site
from tests.test_run_scripts import emit_case, run

FILE = "accuracy/test_llm_api_pytorch.py"
DEFS = "tests/integration/defs"


def _job(site: Site, test_cmd: str, **fields: Any) -> ResolvedJob:
    return resolve(
        site.request(workflow_type="pytest", test_cmd=test_cmd, **fields),
        machine="x86_64",
        home=str(site.home),
    )


def _trail(job: ResolvedJob, field: str) -> str:
    return next(e.source for e in job.trail if e.field == field)


def test_every_test_id_counts(site: Site) -> None:
    job = _job(
        site,
        f"pytest {FILE}::TestLlama3_1_8BInstruct::test_param_mark[tp1] "
        f"{FILE}::TestLlama3_1_8BInstruct::test_param_mark[tp2pp2]",
    )
    assert job.required_devices == 4
    assert "pytest.param 'tp2pp2'" in _trail(job, "required_devices")


@pytest.mark.parametrize(
    ("selection", "devices", "decided_by"),
    [
        (FILE, 8, "skip_less_device(8) on pytest.param 'tp8' of TestLlama3_1_8BInstruct"),
        (f"{FILE}::TestDeepSeekV3Lite", 8, "on class TestDeepSeekV3Lite"),
        (f"{FILE}::TestLlama3_1_8BInstruct::test_param_mark", 8, "pytest.param 'tp8'"),
        (f"{FILE}::TestMultiRank::test_memory_only", 2, "module pytestmark"),
    ],
)
def test_a_file_or_class_counts_every_test_in_it(
    site: Site, selection: str, devices: int, decided_by: str
) -> None:
    job = _job(site, f"pytest {selection}")
    assert job.required_devices == devices
    assert decided_by in _trail(job, "required_devices")


def test_device_memory_is_not_a_count(site: Site) -> None:
    job = _job(site, f"pytest {FILE}::TestMultiRank::test_memory_mark")
    assert job.required_devices == 2


def test_mpi_world_size_runs_one_task_a_rank_under_mpi(site: Site) -> None:
    job = _job(site, f"pytest {FILE}::TestMultiRank::test_mpi_ranks")
    assert (job.world_size, job.required_devices) == (4, 4)
    assert job.slurm is not None and (job.slurm.ntasks, job.slurm.ntasks_per_node) == (4, 4)
    assert job.slurm.gres == "gpu:4"
    assert "skip_less_mpi_world_size(4) on TestMultiRank::test_mpi_ranks" in _trail(
        job, "world_size"
    )


def test_mpi_world_size_job_runs_every_rank_through_the_launcher(site: Site, shims: Shims) -> None:
    output = emit_case(
        site, "pytest_local_slurm", test_cmd=f"pytest -v {FILE}::TestMultiRank::test_mpi_ranks"
    )
    text = Path(output.main_script).read_text()
    assert "--ntasks=4 --ntasks-per-node=4 --mpi=pmix_v4" in " ".join(
        text.replace("\\\n", " ").split()
    )
    assert "trtllm-llmapi-launch pytest -v" in text
    result = run(output, shims)
    assert result.returncode == 0, result.stderr
    (test,) = shims.records("pytest")  # rank 0 runs pytest; the other three serve it
    launches = shims.records("trtllm-llmapi-launch")
    assert sorted(t["env"]["PMIX_RANK"] for t in launches) == ["0", "1", "2", "3"]
    assert test["env"]["PMIX_RANK"] == "0"


def test_mpi_world_size_is_refused_in_docker(site: Site) -> None:
    with pytest.raises(ResolveError, match=r"skip_less_mpi_world_size\(4\).*local_docker runs one"):
        _job(
            site,
            f"pytest {FILE}::TestMultiRank::test_mpi_ranks",
            execution_scenario="local_docker",
            slurm_env_file=None,
            partition=None,
            account=None,
        )


@pytest.mark.parametrize(
    ("test_cmd", "named"),
    [
        ("pytest -k tp8 accuracy", "-k tp8, the directory accuracy"),
        ("pytest --test-list=l0_a10.txt", "--test-list=l0_a10.txt"),
        ("pytest accuracy/", "the directory accuracy/"),
        ("pytest -m 'not slow'", "-m not slow"),
    ],
)
def test_a_selection_that_cannot_be_read_falls_back_with_a_warning(
    site: Site, test_cmd: str, named: str
) -> None:
    job = _job(site, test_cmd)
    assert job.required_devices == 1
    (warning,) = job.warnings
    assert f"cannot read ({named}); 1 GPU(s) (default) are used" in warning
    given = _job(site, test_cmd, required_devices=4)
    assert given.required_devices == 4 and "(input required_devices)" in given.warnings[0]


def test_k_does_not_take_the_largest_need_of_tests_it_may_leave_out(site: Site) -> None:
    """`-k` narrows a class whose largest test needs 8 GPUs: which tests it keeps cannot be
    read, so required_devices decides (else 1), and the warning says both numbers."""
    job = _job(site, f"pytest -k tp1 {FILE}::TestLlama3_1_8BInstruct")
    assert job.required_devices == 1
    assert job.warnings[0].startswith(
        "test_cmd selects tests scriptast cannot read (-k tp1); 1 GPU(s) (default) are used; "
        "the files it names need up to 8: pass --required-devices"
    )
    given = _job(site, f"pytest -k tp8 {FILE}::TestLlama3_1_8BInstruct", required_devices=8)
    assert given.required_devices == 8


def test_a_directory_beside_a_readable_file_keeps_the_files_need(site: Site) -> None:
    job = _job(site, f"pytest perf {FILE}::TestLlama3_1_8BInstruct")
    assert job.required_devices == 8
    assert "the files it names need up to 8" in job.warnings[0]


@pytest.mark.parametrize(
    ("written", "runs_in"),
    [
        (f"{DEFS}/{FILE}", ""),
        (FILE, DEFS),
        ("@abs", DEFS),
    ],
)
def test_each_way_of_writing_the_path_finds_the_file_at_run_time(
    site: Site, shims: Shims, written: str, runs_in: str
) -> None:
    path = str(site.repo / DEFS / FILE) if written == "@abs" else written
    output = emit_case(
        site,
        "pytest_local_slurm",
        test_cmd=f"pytest -v {path}::TestLlama3_1_8BInstruct::test_function_mark",
    )
    result = run(output, shims)
    assert result.returncode == 0, result.stderr
    (test,) = shims.records("pytest")
    assert test["cwd"] == str(site.repo / runs_in).rstrip("/")
    file_part = next(word for word in test["argv"] if "::" in word).split("::")[0]
    assert (Path(test["cwd"]) / file_part).is_file()


def test_paths_written_two_ways_are_refused(site: Site) -> None:
    with pytest.raises(ResolveError, match="write them all one way"):
        _job(site, f"pytest {FILE}::TestMultiRank {DEFS}/{FILE}::TestDeepSeekV3Lite")


def test_explain_names_the_mark_and_the_test(site: Site) -> None:
    job = _job(site, f"pytest {FILE}::TestDeepSeekV3Lite")
    explained = job.explain()
    assert "skip_less_device(8) on class TestDeepSeekV3Lite" in explained


def test_trtllm_parametrize_helper_counts_its_params(site: Site) -> None:
    # upstream writes `@parametrize_with_ids(...)` as often as pytest.mark.parametrize
    job = _job(site, f"pytest {FILE}::TestWithIdsHelper::test_tep")
    assert job.world_size == 4
    assert "skip_less_mpi_world_size(4) on pytest.param" in _trail(job, "world_size")


@pytest.mark.parametrize(
    "test_cmd",
    [
        f"cd {DEFS} && pytest -v {FILE}::TestDeepSeekV3Lite::test_class_mark",
        f"cd {DEFS}; pytest -v {FILE}::TestDeepSeekV3Lite::test_class_mark",
    ],
)
def test_a_leading_cd_is_the_commands_own_and_works(
    site: Site, shims: Shims, test_cmd: str
) -> None:
    """Engineers write `cd tests/integration/defs && pytest ...`: the paths are read from that
    folder (the class mark counts: 8 GPUs), and the job starts in the project so that the
    command's own `cd` works."""
    job = _job(site, test_cmd)
    assert job.required_devices == 8
    output = emit_case(site, "pytest_local_slurm", test_cmd=test_cmd)
    result = run(output, shims)
    assert result.returncode == 0, result.stderr
    (test,) = shims.records("pytest")
    assert test["cwd"] == str(site.repo / DEFS)
    assert (Path(test["cwd"]) / FILE).is_file()


def test_a_path_not_under_the_commands_cd_is_not_found(site: Site) -> None:
    with pytest.raises(ResolveError, match=f"looked at {site.repo}/tests/{FILE}"):
        _job(site, f"cd tests && pytest {FILE}::TestDeepSeekV3Lite")
