"""GPUs that upstream's test bodies demand, not only their marks: a `get_device_count()` check
that skips or fails (in the test or a helper it calls, over the id's parametrized values), and
`mpirun -n N` in the command a test runs. Allocating by the marks alone would give such a test
too few GPUs: it would skip, and the job would look green. The stand-ins follow upstream's
accuracy/test_disaggregated_serving.py, test_e2e.py and disaggregated/test_disaggregated.py."""

from __future__ import annotations

from typing import Any

import pytest

from scriptast.builders.resolution.job import ResolvedJob
from scriptast.builders.resolve import resolve
from scriptast.errors import ResolveError
from tests.site import Site

SERVING = "accuracy/test_disaggregated_serving.py::TestLlama3_1_8BInstruct"
E2E = "test_e2e.py"
DISAGG = "disaggregated/test_disaggregated.py"


def _job(site: Site, test_cmd: str, **fields: Any) -> ResolvedJob:
    return resolve(
        site.request(workflow_type="pytest", test_cmd=test_cmd, **fields),
        machine="x86_64",
        home=str(site.home),
    )


def _source(job: ResolvedJob) -> str:
    return next(e.source for e in job.trail if e.field == "required_devices")


@pytest.mark.parametrize(
    ("test_id", "devices", "source"),
    [
        # ctx tp*pp + gen tp*pp = 2*2 + 2*2, where the mark says 2
        (f"{SERVING}::test_tp_pp_symmetric[GSM8K-tp2pp2]", 8, "get_device_count() against "
         "ctx_tp * ctx_pp + gen_tp * gen_pp in run_parallel_test (called from "
         "TestLlama3_1_8BInstruct::test_tp_pp_symmetric"),
        (f"{SERVING}::test_tp_pp_symmetric[MMLU-tp1pp2]", 4, "run_parallel_test"),
        (f"{SERVING}::test_tp_pp_symmetric[GSM8K-tp2pp1]", 4, "run_parallel_test"),
        # no mark at all: 4 * 1 + 1 * 2
        (f"{SERVING}::test_ctx_pp_gen_tp_asymmetric[GSM8K-gen_tp=2-ctx_pp=4]", 6, "run_parallel"),
        (f"{SERVING}::test_ctx_pp_gen_tp_asymmetric[MMLU-gen_tp=1-ctx_pp=2]", 3, "run_parallel"),
        # every id of the test: the largest
        (f"{SERVING}::test_ctx_pp_gen_tp_asymmetric", 6, "run_parallel_test"),
        # a helper called with literal instance counts: (2 + 3) * 1
        (f"{SERVING}::test_multi_instance", 5, "(ctx_instances + gen_instances) * tp in "
         "run_instances"),
        (f"{E2E}::test_llm_multi_gpu[tp2pp2]", 4, "world_size in test_llm_multi_gpu"),
        (f"{E2E}::test_llm_multi_gpu[pp4]", 4, "world_size"),
        (f"{E2E}::test_llm_multi_gpu[tp1]", 1, "world_size"),
        (f"{E2E}::test_sdxl_multi_gpus[num_gpu:4]", 4, "num_gpu in test_sdxl_multi_gpus"),
        (f"{E2E}::test_openai_multi_rank", 2, "`mpirun -n 2` in test_openai_multi_rank"),
        # mpirun --oversubscribe -n str(num_ranks): the ranks share the GPUs; the mark decides
        (f"{DISAGG}::test_disaggregated_deepseek_v3_lite_fp8_attention_dp", 4,
         "skip_less_device"),
    ],
)  # fmt: skip
def test_a_body_demands_devices(site: Site, test_id: str, devices: int, source: str) -> None:
    job = _job(site, f"pytest {test_id}")
    assert job.required_devices == devices
    assert source in _source(job)
    assert job.warnings == ()


def test_oversubscribed_mpirun_ranks_share_the_gpus_and_size_nothing(site: Site) -> None:
    """Upstream's 2-rank disaggregated tests start `mpirun --oversubscribe -n 2` and carry no
    mark; its test-db runs them on a 1-GPU stage (l0_a10.yml). They get 1 GPU, and the trail
    says why the ranks were not counted."""
    job = _job(site, f"pytest {DISAGG}::test_disaggregated_single_gpu")
    assert job.required_devices == 1
    assert _source(job) == "default"
    (ranks,) = [e for e in job.trail if e.field == "mpirun_ranks"]
    assert ranks.value == ("`mpirun --oversubscribe -n 2` in run_disaggregated_test (called from "
                           "test_disaggregated_single_gpu in test_disaggregated.py)")  # fmt: skip
    assert "not GPUs" in ranks.source
    assert job.warnings == ()


def test_a_need_beyond_one_node_is_refused(site: Site) -> None:
    """8 * 1 + 1 * 8 = 16 GPUs: more than one node (8), which pytest cannot span."""
    with pytest.raises(ResolveError, match="required_devices = 16 exceeds the maximum of 8"):
        _job(site, f"pytest {SERVING}::test_two_nodes")


def test_a_test_named_for_two_nodes_is_refused_by_the_multi_node_rule(site: Site) -> None:
    """`..._2nodes_8gpus` with a body that asks `--tp_size=16`: two nodes of eight, 16 GPUs,
    which one pytest job cannot span (the seed's multi-node rule), never sized at 8."""
    with pytest.raises(ResolveError, match=r"required_devices = 16 exceeds .*8"):
        _job(site, f"pytest {E2E}::test_ptp_quickstart_advanced_deepseek_v3_2nodes_8gpus")


def test_a_demand_that_cannot_be_evaluated_is_a_warning(site: Site) -> None:
    job = _job(site, f"pytest {SERVING}::test_sized_by_a_fixture")
    assert job.required_devices == 1
    (warning,) = job.warnings
    assert warning.startswith(
        "a test demands GPUs scriptast cannot evaluate (get_device_count() against "
        "tp_size_fixture in TestLlama3_1_8BInstruct::test_sized_by_a_fixture in "
        "test_disaggregated_serving.py); 1 GPU(s) (default) are used"
    )
    given = _job(site, f"pytest {SERVING}::test_sized_by_a_fixture", required_devices=4)
    assert given.required_devices == 4 and "4 GPU(s) (input required_devices)" in given.warnings[0]
    mpirun = _job(site, f"pytest {E2E}::test_mpirun_from_a_table")
    assert "['mpirun', '-n', str(ranks_fixture)" in mpirun.warnings[0]


def test_an_id_count_and_a_mark_both_apply_the_larger_wins(site: Site) -> None:
    """`[tp4]` in the id and `skip_less_device(2)` on the function: 4 (not whichever is a mark)."""
    job = _job(site, "pytest accuracy/test_llm_api_pytorch.py::TestIdBeatsMark::test_x[tp4]")
    assert job.required_devices == 4
    assert "GPU count in the name or ids" in _source(job)


def test_one_model_name_rule_for_pytest_and_eval(site: Site) -> None:
    """The model's own name decides in every workflow: the test class's MODEL_NAME (as
    upstream's accuracy tests declare it) gives what eval's --model gives."""
    test = _job(site, "pytest accuracy/test_llm_api_pytorch.py::TestLlama3_1_8BInstruct")
    evaluated = resolve(
        site.request(
            workflow_type="eval",
            eval_cmd="trtllm-eval --model meta-llama/Llama-3.1-8B-Instruct mmlu",
        ),
        machine="x86_64",
        home=str(site.home),
    )
    assert test.model_name == evaluated.model_name == "llama_3_1_8b_instruct"
    undeclared = _job(site, "pytest accuracy/test_llm_api_pytorch.py::TestIdBeatsMark")
    assert undeclared.model_name == "id_beats_mark"  # the class name's words, split


@pytest.mark.parametrize(
    ("command", "shared"),
    [("mpirun --allow-run-as-root --oversubscribe -n 2 x", [True]),
     ("mpirun -n 2 --oversubscribe trtllm-serve", [True]),
     ("mpirun -n 2 x && mpirun --oversubscribe -n 4 y", [False, True]),
     ("mpirun -np 4 x\nmpirun -oversubscribe -np 2 y", [False, True])],
)  # fmt: skip
def test_oversubscribe_is_read_wherever_it_stands_in_its_own_command(
    command: str, shared: list[bool]
) -> None:
    from scriptast.builders.categories.pytest.body import _MPIRUN, _oversubscribed

    assert [_oversubscribed(command, m.start()) for m in _MPIRUN.finditer(command)] == shared
