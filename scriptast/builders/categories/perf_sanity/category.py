"""Category 4, perf_sanity: the repository's submit.py writes the launch script from a perf config
(or a perf-sanity test id) with the job's final paths; a multi-node eval comes here too."""

from __future__ import annotations

import posixpath
from pathlib import Path

from scriptast.builders.categories.eval.request import EvalRequest
from scriptast.builders.categories.perf_sanity.request import PerfSanityRequest
from scriptast.builders.categories.perf_sanity.submit_plan import (
    DRAFT,
    LAUNCH_SH,
    ConfigCopy,
    SubmitPlan,
    check_passable,
    cluster_name_of,
    config_of_test_id,
    load_config,
    local_file,
    runtime_mode,
)
from scriptast.builders.categories.pytest.request import PytestRequest
from scriptast.builders.category import Category, Facts, Patterns, Resolution
from scriptast.builders.request.fields import Request
from scriptast.builders.resolution import model_name as names
from scriptast.builders.resolution.job import ResolvedJob, Work
from scriptast.builders.resolution.parallelism import Parallelism, Sourced
from scriptast.builders.resolution.trail import Trail
from scriptast.common.file_names import check_component
from scriptast.common.text_files import read_text_file, require_file
from scriptast.contract.axes import ExecutionScenario, WorkflowType
from scriptast.errors import ResolveError
from scriptast.model.submit_call import PerfSubmit

SUBMIT_PY = "jenkins/scripts/perf/local/submit.py"


class PerfWork(Work, frozen=True, kw_only=True, tag="perf_sanity"):
    """What submit.py is given: a test list, or a config file (+ test name); `accuracy` for a
    multi-node eval (the config gets its accuracy test turned on)."""

    submit_py: str
    test_list: str | None = None
    config_file: str | None = None
    test_name: str | None = None
    accuracy: bool = False
    accuracy_task: str | None = None


def _submit_py(request: Request) -> str:
    return require_file(str(Path(request.repo_root) / SUBMIT_PY), "submit.py")


def _sized_by_submit() -> Parallelism:
    one = Sourced(1, "derived by submit.py from the config")
    return Parallelism(one, 1, one, one, Sourced(0, "submit.py"), 1, 1, 1)


def _plan(request: Request, trail: Trail) -> tuple[PerfWork, str]:
    """submit.py's input (a config, or the test id of a pytest command) and the model name."""
    submit = _submit_py(request)
    if request.part(PerfSanityRequest).perf_config_yaml:
        config = require_file(request.part(PerfSanityRequest).perf_config_yaml, "perf_config_yaml")
        trail.add("perf_config_yaml", config, "input perf_config_yaml")
        work = PerfWork(
            submit_py=submit,
            config_file=config,
            test_name=request.part(PerfSanityRequest).perf_test_name,
        )
        return work, names.from_config(config)
    test_cmd = request.part(PytestRequest).test_cmd
    if request.workflow_type is WorkflowType.pytest and test_cmd:
        from scriptast.builders.categories.pytest.selection import find_test_target

        target = find_test_target(test_cmd)
        test_list = "::".join([target.path, *target.names]) + (
            f"[{target.param_id}]" if target.param_id else ""
        )
        trail.add("test_list", test_list, "perf-sanity test id in test_cmd")
        model = names.normalize_model_name(target.param_id or "") or "perf_sanity"
        return PerfWork(submit_py=submit, test_list=test_list), model
    raise ResolveError(
        "perf_config_yaml is required for workflow_type perf_sanity (--perf-config-yaml)",
        field="perf_config_yaml",
    )


def resolve(facts: Facts, trail: Trail) -> Resolution:
    """submit.py derives every Slurm parameter from the config's hardware section."""
    work, model = _plan(facts.request, trail)
    return Resolution(
        work=work,
        parallelism=_sized_by_submit(),
        derived_name=model,
        world_source="required_devices",
        gpus_per_node=facts.gpus_per_node,
        gres_need=None,
    )


def eval_fallback(
    request: Request, par: Parallelism, per_node: Sourced | None, trail: Trail
) -> PerfWork:
    """A multi-node eval: not a Category 5 script but the perf-sanity path with accuracy on."""
    if not request.part(PerfSanityRequest).perf_config_yaml:
        raise ResolveError(
            f"eval world_size = {par.world_size} needs {par.nodes} nodes (gpus_per_node = "
            f"{per_node.value if per_node else '?'}), but trtllm-eval is single-node only; pass "
            "--perf-config-yaml to run it through the perf-sanity path with "
            "accuracy.enable_accuracy_test: true",
            field="perf_config_yaml",
        )
    from scriptast.builders.categories.perf_sanity.fallback import plan_fallback, read_eval_ask

    config = require_file(request.part(PerfSanityRequest).perf_config_yaml, "perf_config_yaml")
    trail.add("category", "perf_sanity", f"eval over {par.nodes} nodes falls back to perf-sanity")
    eval_cmd = request.part(EvalRequest).eval_cmd
    assert eval_cmd is not None
    test_name = request.part(PerfSanityRequest).perf_test_name
    plan = plan_fallback(config, read_eval_ask(eval_cmd), test_name)
    trail.add("accuracy_task", plan.task, "the eval command's task, run by the config's lm_eval")
    for warning in plan.warnings:
        trail.warn(warning)
    return PerfWork(
        submit_py=_submit_py(request),
        config_file=config,
        test_name=plan.test_name,
        accuracy=True,
        accuracy_task=plan.task,
    )


def plan_submit(job: ResolvedJob, launch_sh: str) -> SubmitPlan:
    """submit.py's arguments: the final `--launch-sh`, remote `--work-dir`/`--llm-src` with the
    local draft for remote_slurm, and any config copy it must find in the cluster work dir."""
    perf = job.work_as(PerfWork)
    assert job.slurm is not None
    remote = job.scenario is ExecutionScenario.remote_slurm
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
    )
    check_passable(submit, remote=job.log_dir != job.work_dir)
    return SubmitPlan(submit=submit, copy=copy)


GENERATED_NAMES = frozenset({LAUNCH_SH, "test_list.txt", "job_spec.json", "run.json", "run.exit"})
"""Files a perf_sanity job's work dir gets from submit.py, emit and run."""


CATEGORY = Category(
    name="perf_sanity",
    suffix="perf_sanity",
    cli_name="perf-sanity",
    cli_help="Category 4: run the repo's submit.py on a perf config.",
    docs="Category 4: the repository's `submit.py` writes `slurm_launch.sh` (and "
    "`test_list.txt`) with the job's final paths; scriptast takes back what it wrote, writes it "
    "all or nothing with job_spec.json, and reads `slurm_params`, `container_name` and the "
    "summary back from the launch script. For remote_slurm it gets the local launch draft and "
    "the cluster `--work-dir`/`--llm-src`; what it writes under the cluster work dir on this "
    "machine is moved into work_dir and listed in `extra_files` with its cluster path. "
    "submit.py names its container after the time it ran (shown as `<timestamp>`). It passes "
    "`--cluster-name` (the request's `cluster_name`, else slurm_env.json's, which "
    "`probe-slurm` reads from ClusterName): submit.py picks the cluster's UCX settings by it. "
    "The launch script is checked against slurm_env.json as `verify --slurm-env-file` does: "
    "submit.py always writes `#SBATCH --segment`, which needs Slurm 24.05, so a cluster whose "
    "`probe.slurm_version` is older is refused (the example slurm_env.json records 24.05.4), "
    "and a size the partition cannot hold is a warning.",
    examples=(
        "scriptast emit perf-sanity <slurm> --perf-config-yaml "
        "tests/fixtures/trtllm/tests/scripts/perf-sanity/aggregated/llama_8b_aggr.yaml "
        "--perf-test-name llama_8b_tp4",
        "scriptast emit perf-sanity --request examples/perf_sanity_remote_slurm.json",
    ),
    options=("perf_config_yaml", "perf_test_name"),
    # the seed's 8_done_, and what upstream's launch drafts print when they end well
    request_part=PerfSanityRequest,
    patterns=Patterns(success=("8_done_", "completed successfully"), failure=("FAILED", "Error")),
    resolve=resolve,
    submit=plan_submit,
    docker_refusal="perf_sanity (benchmark) jobs need Slurm: local_docker is not supported",
)
