"""custom's record: Category 3, any command or script on one node, run in every task by a
generated slurm_run_custom.sh."""

from __future__ import annotations

from scriptast.builders.category import (
    Category,
    FolderRule,
    Patterns,
    RequestCheck,
    ResolveRule,
    StepsRule,
)
from scriptast.builders.request.parts import CustomRequest

WORK = "scriptast.builders.categories.custom.work"
STEPS = "scriptast.builders.categories.custom.steps"

CATEGORY = Category(
    name="custom",
    suffix="custom",
    cli_name="custom",
    cli_help="Run any command or script, with slurm_run_custom.sh.",
    docs="Category 3: any command or script, run by a generated `slurm_run_custom.sh`.",
    examples=(
        "scriptast emit custom <slurm> --custom-cmd 'python3 examples/quickstart.py' "
        "--custom-env 'NCCL_DEBUG=INFO FOO=bar' --required-devices 2",
        "scriptast emit custom --request examples/custom_local_docker.json",
    ),
    options=("custom_cmd", "custom_script", "custom_env"),
    needs=("custom_cmd", "custom_script"),
    request_part=CustomRequest,
    patterns=Patterns(success=(), failure=("Error", "Traceback")),
    check_request=RequestCheck(WORK, "check_request"),
    mount_folders=FolderRule(WORK, "mount_folders"),
    resolve=ResolveRule(WORK, "resolve"),
    steps=StepsRule(STEPS, "steps"),
)
