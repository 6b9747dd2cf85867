"""perf_sanity's work and rule: what submit.py is given (a config and its server, or a perf-sanity
test id), sized by submit.py from the config; and a multi-node eval's fallback onto this path."""

from __future__ import annotations

from pathlib import Path

from scriptast.builders.categories.eval.request import EvalRequest
from scriptast.builders.categories.perf_sanity.request import PerfSanityRequest
from scriptast.builders.categories.pytest.request import PytestRequest
from scriptast.builders.category import Resolution, SharedResolution
from scriptast.builders.request.fields import Request
from scriptast.builders.resolution import model_name as names
from scriptast.builders.resolution.job import Work
from scriptast.builders.resolution.parallelism import Parallelism, Sourced
from scriptast.builders.resolution.trail import Trail
from scriptast.common.text_files import require_file
from scriptast.contract.axes import WorkflowType
from scriptast.errors import ResolveError

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


def _plan(request: Request, trail: Trail) -> tuple[PerfWork, str, str]:
    """submit.py's input (a config, or the test id of a pytest command), the model name and
    where it comes from."""
    submit = _submit_py(request)
    if request.part(PerfSanityRequest).perf_config_yaml:
        config = require_file(request.part(PerfSanityRequest).perf_config_yaml, "perf_config_yaml")
        trail.add("perf_config_yaml", config, "input perf_config_yaml")
        work = PerfWork(
            submit_py=submit,
            config_file=config,
            test_name=request.part(PerfSanityRequest).perf_test_name,
        )
        return work, names.from_config(config), f"from the perf config {Path(config).name}"
    test_cmd = request.part(PytestRequest).test_cmd
    if request.workflow_type is WorkflowType.pytest and test_cmd:
        from scriptast.builders.categories.pytest.selection import find_test_target

        target = find_test_target(test_cmd)
        test_list = "::".join([target.path, *target.names]) + (
            f"[{target.param_id}]" if target.param_id else ""
        )
        trail.add("test_list", test_list, "perf-sanity test id in test_cmd")
        model = names.normalize_model_name(target.param_id or "") or "perf_sanity"
        return (
            PerfWork(submit_py=submit, test_list=test_list),
            model,
            "from the perf-sanity test id",
        )
    raise ResolveError(
        "perf_config_yaml is required for workflow_type perf_sanity (--perf-config-yaml)",
        field="perf_config_yaml",
    )


def resolve(facts: SharedResolution, trail: Trail) -> Resolution:
    """submit.py derives every Slurm parameter from the config's hardware section."""
    work, model, source = _plan(facts.request, trail)
    return Resolution(
        work=work,
        parallelism=_sized_by_submit(),
        derived_name=model,
        derived_source=source,
        world_source="required_devices",
        gpus_per_node=facts.gpus_per_node,
        gres_need=None,
    )


def eval_fallback(
    request: Request, par: Parallelism, per_node: Sourced | None, trail: Trail, why: str
) -> PerfWork:
    """A multi-node eval, or one given a disaggregated config: not a Category 5 script but the
    perf-sanity path with accuracy on (`why` says which)."""
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
    trail.add("category", "perf_sanity", why)
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
