"""pytest's record: Category 2, a test id on one node, its GPUs and MPI ranks read from the
test's marks, id and body."""

from __future__ import annotations

from scriptast.builders.category import (
    Category,
    FolderRule,
    MeasuresRule,
    Patterns,
    RequestCheck,
    RequestRoute,
    ResolveRule,
    StepsRule,
)
from scriptast.builders.request.parts import PytestRequest

WORK = "scriptast.builders.categories.pytest.work"
STEPS = "scriptast.builders.categories.pytest.steps"

CATEGORY = Category(
    name="pytest",
    suffix="auto_test",
    cli_name="pytest",
    cli_help="Run a pytest test id on one node, its GPUs read from its marks.",
    docs="Category 2: one pytest test id on one node; GPUs from its `skip_less_device` marks. "
    "With `ci_stage`, a TRT-LLM CI stage: its tests from the test-db as CI renders them "
    "(`<work_dir>/test_list.txt`), its GPUs and nodes from the stage list, pytest with CI's "
    "flags (test list, split, waives, timeout, rootdir, test prefix, JUnit).",
    examples=(
        "scriptast emit pytest <slurm> --test-cmd 'pytest -v accuracy/test_llm_api_pytorch.py::"
        "TestLlama3_1_8BInstruct::test_param_mark[tp2pp2]'",
        "scriptast emit pytest --request examples/pytest_remote_slurm.json",
        "scriptast emit pytest <slurm> --ci-stage DGX_B200-4_GPUs-PyTorch-2",
    ),
    options=(
        "test_cmd",
        "ci_stage",
        "waives_file",
        "all_splits",
        "perf_config_yaml",
        "perf_test_name",
    ),
    needs=("test_cmd", "ci_stage"),
    request_part=PytestRequest,
    patterns=Patterns(success=("passed",), failure=("FAILED", "ERROR")),
    check_request=RequestCheck(WORK, "check_request"),
    route=RequestRoute(WORK, "route"),
    mount_folders=FolderRule(WORK, "mount_folders"),
    resolve=ResolveRule(WORK, "resolve"),
    steps=StepsRule(STEPS, "steps"),
    measures=MeasuresRule(WORK, "measures"),
)
