"""perf_sanity's work and rule: what submit.py is given (a config and its server, or a perf-sanity
test id), sized by submit.py from the config; and the eval handed over to this path."""

from __future__ import annotations

from pathlib import Path

from scriptast.builders.category import HandOver, Resolution, SharedResolution
from scriptast.builders.request.fields import Request
from scriptast.builders.request.parts import EvalRequest, PerfSanityRequest, PytestRequest
from scriptast.builders.resolution import model_name as names
from scriptast.builders.resolution.job import Work
from scriptast.builders.resolution.parallelism import Parallelism, Sourced
from scriptast.builders.resolution.pytest_ids import find_test_target
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


def take_over(facts: SharedResolution, trail: Trail, handed: HandOver) -> Resolution:
    """A multi-node eval, or one given a disaggregated config (`handed.why` says which): not a
    Category 5 script but the perf-sanity path with accuracy on, the eval's task run by the
    config's lm_eval."""
    from scriptast.builders.categories.perf_sanity.fallback import plan_fallback, read_eval_ask

    request = facts.request
    config = require_file(request.part(PerfSanityRequest).perf_config_yaml or "",
                          "perf_config_yaml")  # fmt: skip
    trail.add("category", "perf_sanity", handed.why)
    eval_cmd = request.part(EvalRequest).eval_cmd
    assert eval_cmd is not None
    test_name = request.part(PerfSanityRequest).perf_test_name
    plan = plan_fallback(config, read_eval_ask(eval_cmd), test_name)
    trail.add("accuracy_task", plan.task, "the eval command's task, run by the config's lm_eval")
    for warning in plan.warnings:
        trail.warn(warning)
    work = PerfWork(
        submit_py=_submit_py(request),
        config_file=config,
        test_name=plan.test_name,
        accuracy=True,
        accuracy_task=plan.task,
    )
    return Resolution(
        work=work,
        parallelism=handed.parallelism,
        derived_name=handed.derived_name,
        world_source="required_devices",
        gpus_per_node=handed.gpus_per_node,
        gres_need=None,
    )
