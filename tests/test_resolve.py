"""Resolution rules of SPEC §2, one group per rule, with every bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scriptast.builders.categories.bench.work import last_bench_invocation, split_bench
from scriptast.builders.categories.custom.work import parse_custom_env
from scriptast.builders.categories.pytest.devices import devices_from_ids
from scriptast.builders.read_request import build_request, read_request_file
from scriptast.builders.resolution import image as image_rules
from scriptast.builders.resolution.arch import normalize_arch, resolve_arch
from scriptast.builders.resolution.commands import user_command
from scriptast.builders.resolution.model_name import (
    from_model_flag,
    from_test,
    normalize_model_name,
)
from scriptast.builders.resolution.model_path import find_model_dir, is_hf_id
from scriptast.builders.resolution.mounts import plan_mounts, remote_home
from scriptast.builders.resolution.pytest_ids import find_test_target
from scriptast.builders.resolution.slurm_params import mpi_plugin, time_limit
from scriptast.builders.resolve import resolve
from scriptast.cluster.read_slurm_env import load_slurm_env
from scriptast.contract.axes import placement
from scriptast.contract.slurm_env import Partition, Pmix, SlurmEnv
from scriptast.errors import InputError, ResolveError
from scriptast.model.slurm import Mount
from scriptast.model.slurm_options import gres_gpus
from scriptast.readers.shellwords import split_top_level, tokenize
from tests.site import Site


def job(site: Site, **fields: Any) -> Any:
    return resolve(site.request(**fields), machine="x86_64", home=str(site.home))


# --- the request -------------------------------------------------------------------------


def test_request_has_every_seed_field() -> None:
    from scriptast.builders.read_request import request_fields

    seed = [
        "workflow_type",
        "work_dir",
        "skill_dir",
        "repo_root",
        "test_cmd",
        "eval_cmd",
        "bench_cmd",
        "custom_cmd",
        "custom_script",
        "custom_env",
        "perf_config_yaml",
        "perf_test_name",
        "model_name",
        "required_devices",
        "node_count",
        "partition",
        "account",
        "slurm_env_file",
        "time_limit",
        "llm_models_root",
        "checkpoint_path",
        "models_path",
        "device_type",
        "execution_scenario",
        "persistent_mode",
        "container_image",
        "remote_repo_path",
        "remote_work_dir",
        "env_check",
    ]
    assert set(seed) <= set(request_fields())


def test_flags_override_file_and_relative_paths_become_absolute(tmp_path: Path) -> None:
    file_fields = {
        "workflow_type": "bench",
        "execution_scenario": "local_slurm",
        "work_dir": "w",
        "repo_root": "r",
        "partition": "a",
        "env_check": {"gpus_per_node": 4},
        "bench_cmd": "trtllm-bench throughput",
        "slurm_env_file": "env.json",
        "account": "acct",
        "llm_models_root": "/models",
        "models_path": "/data/models",
    }
    request = build_request(
        file_fields, {"partition": "b", "env_check": {"available_gpus": 2}}, cwd=str(tmp_path)
    )
    assert request.partition == "b"
    assert request.work_dir == str(tmp_path / "w") and request.repo_root == str(tmp_path / "r")
    assert request.env_check is not None
    assert (request.env_check.gpus_per_node, request.env_check.available_gpus) == (4, 2)


@pytest.mark.parametrize("suffix", [".json", ".toml", ".yaml"])
def test_request_files_in_every_format(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"r{suffix}"
    text = {
        ".json": '{"workflow_type": "eval", "required_devices": 2}',
        ".toml": 'workflow_type = "eval"\nrequired_devices = 2\n',
        ".yaml": "workflow_type: eval\nrequired_devices: 2\n",
    }[suffix]
    path.write_text(text)
    assert read_request_file(str(path)) == {"workflow_type": "eval", "required_devices": 2}


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"partiton": "x"}, "unknown request field 'partiton'.*did you mean 'partition'"),
        ({"env_check": {"gpus": 1}}, "unknown env_check field 'gpus'"),
        ({"workflow_type": "benchmark"}, "known workflow_type values: pytest, eval"),
        ({"execution_scenario": "slurm"}, "known execution_scenario values"),
        ({"required_devices": "two"}, "required_devices"),
        ({"remote_repo_path": "relative/path"}, "must be an absolute path on the cluster"),
        ({"repo_root": None}, "missing for bench on local_slurm: --repo-root, --bench-cmd"),
    ],
)
def test_bad_requests(fields: dict[str, Any], message: str) -> None:
    base = {
        "workflow_type": "bench",
        "execution_scenario": "local_slurm",
        "work_dir": "/w",
        "repo_root": "/r",
    }
    merged = {k: v for k, v in {**base, **fields}.items() if v is not None}
    with pytest.raises(InputError, match=message):
        build_request(merged, {})


def test_bad_request_file(tmp_path: Path) -> None:
    (tmp_path / "r.json").write_text("{nope")
    with pytest.raises(InputError, match="is not valid"):
        read_request_file(str(tmp_path / "r.json"))
    (tmp_path / "list.json").write_text("[1]")
    with pytest.raises(InputError, match="one object"):
        read_request_file(str(tmp_path / "list.json"))
    with pytest.raises(InputError, match="cannot read"):
        read_request_file(str(tmp_path / "missing.json"))


# --- slurm_env ----------------------------------------------------------------------------


def test_slurm_env_keeps_unknown_keys(site: Site) -> None:
    loaded = load_slurm_env(str(site.slurm_env), "local_slurm")
    assert loaded.raw["probe"]["host"] == "login-01"
    assert loaded.env.partition("arm") == Partition(
        name="arm",
        state="up",
        time_limit="8:00:00",
        nodes="4",
        arch="aarch64",
        gres="gpu:4(IDX:0-3)",
        gpus_per_node=4,
        requires_gres=True,
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "missing or unreadable.*did not run Step 2.5"),
        ("not json", "is not JSON"),
        ("[]", "must hold a JSON object"),
        (
            '{"partitions": [{"name": "a", "gpus_per_node": "eight"}]}',
            r"\$.partitions\[0\].gpus_per_node",
        ),
        ('{"pmix": {"preferred": 5}}', r"\$.pmix.preferred"),
    ],
)
def test_bad_slurm_env(tmp_path: Path, content: str | None, message: str) -> None:
    path = tmp_path / "slurm_env.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(InputError, match=message):
        load_slurm_env(str(path), "local_slurm")


def test_slurm_env_required_for_slurm(site: Site) -> None:
    with pytest.raises(
        InputError,
        match=r"^missing for bench on local_slurm: --slurm-env-file; .*"
        r"`scriptast probe-slurm -o slurm_env.json` writes",
    ):
        job(site, workflow_type="bench", bench_cmd="trtllm-bench throughput", slurm_env_file=None)


# --- image and arch -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("image", "enroot", "canonical"),
    [
        ("nvcr.io/nvidia/x:1", "nvcr.io#nvidia/x:1", "nvcr.io/nvidia/x:1"),
        ("nvcr.io#nvidia/x:1", "nvcr.io#nvidia/x:1", "nvcr.io/nvidia/x:1"),
        ("localhost:5000/img:tag", "localhost:5000#img:tag", "localhost:5000/img:tag"),
        ("ubuntu:22.04", "ubuntu:22.04", "ubuntu:22.04"),
        ("library/ubuntu:22.04", "library/ubuntu:22.04", "library/ubuntu:22.04"),
    ],
)
def test_image_forms(image: str, enroot: str, canonical: str) -> None:
    assert image_rules.enroot_form(image) == enroot
    assert image_rules.canonical_form(image) == canonical


def test_image_from_properties_by_arch(site: Site) -> None:
    x86 = image_rules.resolve_image(None, str(site.repo), "x86_64")
    arm = image_rules.resolve_image(None, str(site.repo), "aarch64")
    assert "x86_64" in x86.canonical and "aarch64" in arm.canonical
    assert x86.enroot.startswith("urm.nvidia.com#sw-tensorrt-docker/")
    assert "LLM_DOCKER_IMAGE" in x86.source and "LLM_SBSA_DOCKER_IMAGE" in arm.source


def test_container_image_wins(site: Site) -> None:
    found = image_rules.resolve_image("nvcr.io/nvidia/x:1", str(site.repo), "x86_64")
    assert (found.canonical, found.enroot, found.source) == (
        "nvcr.io/nvidia/x:1",
        "nvcr.io#nvidia/x:1",
        "input container_image",
    )


def test_other_properties_file_when_the_main_one_is_absent(site: Site) -> None:
    main = site.repo / "jenkins/current_image_tags.properties"
    main.rename(site.repo / "jenkins/other_tags.properties")
    found = image_rules.resolve_image(None, str(site.repo), "x86_64")
    assert "other_tags.properties" in found.source


def test_missing_key_names_file_and_key(site: Site) -> None:
    main = site.repo / "jenkins/current_image_tags.properties"
    main.write_text("# nothing\nOTHER=x\n")
    with pytest.raises(
        ResolveError, match=r"key LLM_SBSA_DOCKER_IMAGE .* not found in .*current_image_tags"
    ):
        image_rules.resolve_image(None, str(site.repo), "aarch64")


def test_missing_properties_file(site: Site) -> None:
    (site.repo / "jenkins/current_image_tags.properties").unlink()
    with pytest.raises(ResolveError, match=r"LLM_DOCKER_IMAGE.*\(absent\)"):
        image_rules.resolve_image(None, str(site.repo), "x86_64")


def test_properties_comments_and_separators(tmp_path: Path) -> None:
    path = tmp_path / "p.properties"
    path.write_text("# c\n! c\nA=1\nB : 2\n  C=x=y\nnoseparator\n")
    assert image_rules.read_properties(path) == {"A": "1", "B": "2", "C": "x=y"}


def test_arch_rules() -> None:
    env = SlurmEnv(partitions=(Partition(name="p", arch="arm64"), Partition(name="n")))
    broken = SlurmEnv(errors=("SLURM client tools not found",), partitions=env.partitions)
    docker = resolve_arch(placement("local_docker"), None, None, "arm64")
    assert (docker.name, docker.pmix_trusted) == ("aarch64", True)
    assert (
        resolve_arch(placement("local_slurm"), env.partitions[0], env, "x86_64").name == "aarch64"
    )
    local_null = resolve_arch(placement("local_slurm"), env.partitions[1], env, "aarch64")
    assert (local_null.name, local_null.pmix_trusted) == ("aarch64", False)
    remote_null = resolve_arch(placement("remote_slurm"), env.partitions[1], env, "aarch64")
    assert (remote_null.name, remote_null.pmix_trusted) == ("x86_64", False)
    no_tools = resolve_arch(placement("remote_slurm"), broken.partitions[0], broken, "aarch64")
    assert (no_tools.name, no_tools.pmix_trusted) == ("x86_64", False)
    assert normalize_arch("AMD64") == "x86_64"


def test_mpi_plugin_rules() -> None:
    env = SlurmEnv(pmix=Pmix(available=("pmix_v5",), preferred="pmix_v5"))
    assert mpi_plugin(env, True) == ("pmix_v5", "slurm_env pmix.preferred")
    assert mpi_plugin(env, False)[0] == "pmix"
    assert mpi_plugin(SlurmEnv(), True)[0] == "pmix"


def test_null_arch_partition_falls_back_and_ignores_preferred_pmix(site: Site) -> None:
    resolved = job(
        site,
        workflow_type="bench",
        partition="unknown_arch",
        bench_cmd="trtllm-bench --model m throughput --tp 2",
    )
    assert resolved.slurm.mpi_plugin == "pmix"
    assert "x86_64" in resolved.image


# --- mounts -------------------------------------------------------------------------------


def _plan(**kw: Any) -> Any:
    base: dict[str, Any] = dict(
        llm_models_root="/models",
        home="/home/u",
        project="/home/u/repo",
        checkpoint_path=None,
        models_path=None,
        slurm_env_mounts=None,
        default_models_repo=None,
    )
    return plan_mounts(**{**base, **kw})


def test_mount_priority() -> None:
    every = dict(
        checkpoint_path="/ckpt/llama/model",
        models_path="/mp",
        slurm_env_mounts=("/lustre:/lustre",),
        default_models_repo="/repo",
    )
    assert _plan(**every).mounts[2] == Mount(source="/ckpt/llama", target="/models")
    every.pop("checkpoint_path")
    assert _plan(**every).mounts[2] == Mount(source="/mp", target="/models")
    every.pop("models_path")
    plan = _plan(**every)
    assert plan.mounts[2] == Mount(source="/lustre", target="/lustre")
    assert all(m.target != "/models" for m in plan.mounts)
    every.pop("slurm_env_mounts")
    assert _plan(**every).mounts[2] == Mount(source="/repo", target="/models")
    with pytest.raises(ResolveError, match="no models host path"):
        _plan()


def test_home_project_and_custom_script_folder() -> None:
    plan = _plan(
        models_path="/mp", extra_folders=(("/scripts", "custom_script folder"), ("/home/u/w", "wd"))
    )
    assert [m.source for m in plan.mounts] == ["/home/u", "/home/u/repo", "/mp", "/scripts"]


def test_a_script_under_the_models_mount_gets_its_own_mount() -> None:
    """/mp is mounted at /models: a script in /mp/scripts would be at /models/scripts inside,
    where `bash /mp/scripts/run.sh` does not find it; its folder is mounted at its own path."""
    plan = _plan(models_path="/mp", extra_folders=(("/mp/scripts", "custom_script folder"),))
    assert Mount(source="/mp/scripts", target="/mp/scripts") in plan.mounts
    under_home = _plan(models_path="/mp", extra_folders=(("/home/u/s", "custom_script folder"),))
    assert [m.source for m in under_home.mounts] == ["/home/u", "/home/u/repo", "/mp"]


@pytest.mark.parametrize("bad", ["/my models", "/a,b", "/a:b"])
def test_unrepresentable_mount_path(bad: str) -> None:
    with pytest.raises(ResolveError, match="pyxis --container-mounts cannot express"):
        _plan(models_path=bad)


def test_remote_home() -> None:
    assert remote_home("/home/alice/scratch", "/home/bob") == (
        "/home/alice",
        "parent of slurm_env.remote_cwd",
    )
    assert remote_home(None, "/home/bob/") == ("/home/bob", "input remote_home")
    with pytest.raises(ResolveError, match=r"give slurm_env.home \(probe-slurm records it\)"):
        remote_home(None, None)


def test_the_home_mount_never_widens_to_every_users_home() -> None:
    """A probe run in the home (remote_cwd /home/alice) must not mount /home: the recorded
    home wins, and without it remote_cwd itself is the home."""
    assert remote_home("/home/alice", None, "/home/alice") == (
        "/home/alice",
        "slurm_env.home (recorded by probe-slurm)",
    )
    assert remote_home("/home/alice/scratch", None, "/u/alice") == (
        "/u/alice",
        "slurm_env.home (recorded by probe-slurm)",
    )
    assert remote_home("/home/alice", None) == (
        "/home/alice",
        "slurm_env.remote_cwd (its parent /home holds every user's home)",
    )
    assert remote_home("/home/alice", "/home/alice2") == ("/home/alice2", "input remote_home")
    # probed as root: $HOME /root, the probe run in it; the recorded home is the account's own
    assert remote_home("/root", None, "/root") == (
        "/root",
        "slurm_env.home (recorded by probe-slurm)",
    )
    for cwd in ("/home", "/"):
        with pytest.raises(ResolveError, match="needs the home directory on the cluster"):
            remote_home(cwd, None)


# --- parallelism --------------------------------------------------------------------------


def test_bench_split_is_shell_aware() -> None:
    assert split_bench("a 'x && y' && b") == ("a 'x && y'", "b")
    assert split_bench("trtllm-bench throughput") == (None, "trtllm-bench throughput")
    with pytest.raises(ResolveError, match="2 top-level '&&'"):
        split_bench("a && b && c")
    with pytest.raises(ResolveError, match="empty command"):
        split_bench("a &&")


def test_last_bench_invocation() -> None:
    cmd = "trtllm-bench --model m prepare-dataset --tp 8 > d.json && /usr/bin/trtllm-bench --model m throughput --tp 2 --pp 2"
    assert last_bench_invocation(cmd)[-4:] == ["--tp", "2", "--pp", "2"]
    with pytest.raises(ResolveError, match="no trtllm-bench invocation"):
        last_bench_invocation("python bench.py")


@pytest.mark.parametrize(
    ("bench_cmd", "world", "ep"),
    [
        ("trtllm-bench --model m throughput", 1, 0),
        ("trtllm-bench --model m throughput --tp 2 --pp 2 --ep 2", 4, 2),
        ("trtllm-bench --model m latency --tp=8", 8, 0),
    ],
)
def test_bench_parallelism(site: Site, bench_cmd: str, world: int, ep: int) -> None:
    resolved = job(site, workflow_type="bench", bench_cmd=bench_cmd)
    assert (resolved.world_size, resolved.ep, resolved.slurm.ntasks) == (world, ep, world)


def test_multi_node_bench_is_refused(site: Site) -> None:
    with pytest.raises(
        ResolveError, match=r"world_size = 8 .* exceeds gpus_per_node = 4.*multi-node trtllm-bench"
    ):
        job(
            site,
            workflow_type="bench",
            partition="arm",
            bench_cmd="trtllm-bench --model m throughput --tp 4 --pp 2",
        )


def test_bench_bad_flag_value(site: Site) -> None:
    with pytest.raises(ResolveError, match="--tp 'two' is not an integer"):
        job(site, workflow_type="bench", bench_cmd="trtllm-bench throughput --tp two")


def test_eval_parallelism_and_gpus_per_node_override(site: Site) -> None:
    resolved = job(
        site,
        workflow_type="eval",
        partition="arm",
        eval_cmd="trtllm-eval --model m --tp_size 4 --pp_size 2 --gpus_per_node 8 mmlu",
    )
    assert (resolved.world_size, resolved.slurm.ntasks, resolved.slurm.gres) == (8, 8, "gpu:8")


def test_multi_node_eval_needs_a_perf_config(site: Site) -> None:
    with pytest.raises(
        ResolveError, match="trtllm-eval is single-node only; pass --perf-config-yaml"
    ):
        job(
            site,
            workflow_type="eval",
            partition="arm",
            eval_cmd="trtllm-eval --model m --tp_size 8 mmlu",
        )


def test_multi_node_eval_falls_back_to_perf_sanity(site: Site) -> None:
    config = site.repo / "tests/scripts/perf-sanity/disaggregated/deepseek_r1_2_nodes.yaml"
    resolved = job(
        site,
        workflow_type="eval",
        partition="arm",
        perf_config_yaml=str(config),
        eval_cmd="trtllm-eval --model deepseek-ai/DeepSeek-R1-0528 --tp_size 8 mmlu",
    )
    assert resolved.category == "perf_sanity" and resolved.work.accuracy


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"required_devices": 9},
            r"^required_devices = 9 exceeds the maximum of 8 GPUs for custom commands\.$",
        ),
        (
            {"required_devices": 8, "partition": "arm"},
            r"^required_devices = 8 requires 2 nodes \(gpus_per_node = 4\), but custom commands are limited to 1 node\. Reduce required_devices to at most 4\.$",
        ),
        ({"required_devices": 0}, "required_devices must be >= 1, got 0"),
        ({"node_count": -1}, "node_count must be >= 1"),
        (
            {"node_count": 2},
            r"^node_count = 2, but custom commands run on 1 node \(required_devices = 1 fits "
            r"one node of 8 GPUs\); drop node_count or set it to 1$",
        ),
        ({"custom_env": "FOO"}, "custom_env entry 'FOO' has no '='"),
        ({"custom_env": "1X=2"}, "custom_env key '1X' is not a shell identifier"),
    ],
)
def test_custom_limits(site: Site, fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ResolveError, match=message) as raised:
        job(site, workflow_type="custom", custom_cmd="nvidia-smi", **fields)
    assert raised.value.field == next(iter(fields))  # the field the error concerns


def test_custom_gpus_per_node_unknown_on_docker(site: Site) -> None:
    with pytest.raises(ResolveError, match="gpus_per_node is unknown") as raised:
        job(site, workflow_type="custom", custom_cmd="true", execution_scenario="local_docker")
    assert str(raised.value).endswith("pass env_check.gpus_per_node (--gpus-per-node)")


def test_custom_script_wins_over_custom_cmd_with_a_warning(site: Site, tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("echo hi\n")
    resolved = job(site, workflow_type="custom", custom_cmd="nvidia-smi", custom_script=str(script))
    assert resolved.work.command.text == f"bash {script}"
    assert resolved.warnings == (
        f"custom_cmd and custom_script are both given: the script runs (bash {script}), "
        "custom_cmd 'nvidia-smi' does not",
    )


def test_custom_env_is_shell_aware() -> None:
    assert parse_custom_env("A=1 B='two words' C=\"x=y\"") == (
        ("A", "1"),
        ("B", "two words"),
        ("C", "x=y"),
    )


# --- pytest devices -----------------------------------------------------------------------

DEFS_FILE = "accuracy/test_llm_api_pytorch.py"


@pytest.mark.parametrize(
    ("test_id", "devices", "source"),
    [
        ("TestLlama3_1_8BInstruct::test_param_mark[tp2pp2]", 4, "pytest.param"),
        ("TestLlama3_1_8BInstruct::test_param_mark[tp8]", 8, "pytest.param"),
        ("TestLlama3_1_8BInstruct::test_function_mark", 4, "on TestLlama3_1_8BInstruct::test_fu"),
        ("TestLlama3_1_8BInstruct::test_module_mark", 2, "module pytestmark"),
        ("TestDeepSeekV3Lite::test_class_mark", 8, "on class TestDeepSeekV3Lite::test_class"),
        ("TestDeepSeekV3Lite::test_bare_function_mark", 4, "(4) on TestDeepSeekV3Lite::test_bare"),
    ],
)
def test_pytest_marks(site: Site, test_id: str, devices: int, source: str) -> None:
    resolved = job(site, workflow_type="pytest", test_cmd=f"pytest -v {DEFS_FILE}::{test_id}")
    assert resolved.required_devices == devices
    assert source in next(e.source for e in resolved.trail if e.field == "required_devices")


def test_pytest_ids_and_input_fallbacks(site: Site) -> None:
    unmarked = "test_unmarked.py::test_plain"
    assert job(site, workflow_type="pytest", test_cmd=f"pytest {unmarked}").required_devices == 1
    assert (
        job(
            site, workflow_type="pytest", test_cmd=f"pytest {unmarked}", required_devices=2
        ).required_devices
        == 2
    )
    assert devices_from_ids("test_x", "tp2pp2-fp8") == 4
    assert devices_from_ids("test_nemotron_4gpus") == 4
    assert devices_from_ids("tp4-pp2") == 8
    assert devices_from_ids("test_plain") is None


def test_pytest_test_path_relative_to_repo_root(site: Site) -> None:
    resolved = job(
        site,
        workflow_type="pytest",
        test_cmd="pytest tests/unittest/test_outside_defs.py::test_two_gpus",
    )
    # the path is written relative to the repository, so the test runs from there
    assert resolved.required_devices == 2
    assert resolved.work.workdir == str(site.repo)


def test_pytest_limits(site: Site) -> None:
    with pytest.raises(
        ResolveError, match=r"exceeds gpus_per_node = 4 .*pytest does not support multi-node"
    ):
        job(
            site,
            workflow_type="pytest",
            partition="arm",
            test_cmd=f"pytest {DEFS_FILE}::TestDeepSeekV3Lite::test_class_mark",
        )
    with pytest.raises(
        ResolveError, match=r"^required_devices = 9 exceeds the maximum of 8 GPUs for pytest\.$"
    ):
        job(site, workflow_type="pytest", test_cmd="pytest test_unmarked.py", required_devices=9)
    with pytest.raises(ResolveError, match="pytest is always single-node"):
        job(site, workflow_type="pytest", test_cmd="pytest test_unmarked.py", node_count=2)


def test_pytest_test_file_not_found_says_where_it_looked(site: Site) -> None:
    with pytest.raises(
        ResolveError,
        match=r"test file 'nope.py' not found \(looked at .*defs/nope.py, .*TensorRT-LLM/nope.py\)",
    ):
        job(site, workflow_type="pytest", test_cmd="pytest nope.py::test_x")
    with pytest.raises(ResolveError, match="names no test file"):
        find_test_target("pytest -k foo")
    with pytest.raises(ResolveError, match="not found in"):
        job(site, workflow_type="pytest", test_cmd=f"pytest {DEFS_FILE}::TestMissing::test_x")


def test_perf_sanity_pytest_uses_test_list(site: Site) -> None:
    test_id = "perf/test_perf_sanity.py::test_e2e[aggr-llama_8b_aggr-llama_8b_tp4]"
    resolved = job(site, workflow_type="pytest", test_cmd=f"pytest {test_id}")
    assert resolved.category == "perf_sanity" and resolved.work.test_list == test_id


# --- names, paths, commands ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Llama-3.1-8B-Instruct", "llama_3_1_8b_instruct"),
        ("__x..Y__", "x_y"),
        ("DeepSeek-R1", "deepseek_r1"),
    ],
)
def test_model_name_normalization(text: str, name: str) -> None:
    assert normalize_model_name(text) == name


def test_model_name_sources() -> None:
    assert (
        from_model_flag("trtllm-eval --model /m/Llama-3.1-8B/ gsm8k", "eval_cmd") == "llama_3_1_8b"
    )
    assert (
        from_model_flag("trtllm-bench --model_path=/x/Qwen2.5-7B throughput", "b") == "qwen2_5_7b"
    )
    assert from_model_flag("python run.py", "c") is None
    assert from_test(("TestLlama3_1_8B", "test_auto_dtype")) == "llama_3_1_8b"
    assert from_test(("TestX", "t"), "meta-llama/Llama-3.1-8B-Instruct") == "llama_3_1_8b_instruct"
    assert from_test(("test_gpt_7b",)) == "gpt_7b"


def test_explicit_model_name_wins(site: Site) -> None:
    resolved = job(
        site,
        workflow_type="bench",
        bench_cmd="trtllm-bench --model m throughput",
        model_name="My Model",
    )
    assert resolved.job_name == "my_model_bench"


def test_hf_id_lookup(site: Site) -> None:
    assert (
        is_hf_id("meta-llama/Llama-3.1-8B-Instruct")
        and not is_hf_id("/abs/path")
        and not is_hf_id("./a/b")
    )
    assert (
        find_model_dir(str(site.models), "Qwen/Qwen2.5-7B-Instruct") == "Qwen/qwen2.5-7b-instruct"
    )
    assert find_model_dir(str(site.models), "org/absent") is None
    deep = site.models / "a/b/c/d/Deep"
    deep.mkdir(parents=True)
    assert find_model_dir(str(site.models), "x/Deep") is None


def test_eval_model_rewritten_or_warned(site: Site) -> None:
    found = job(
        site,
        workflow_type="eval",
        eval_cmd="trtllm-eval --model meta-llama/Llama-3.1-8B-Instruct gsm8k",
    )
    assert (
        found.work.command.argv[2] == "/models/meta-llama/Llama-3.1-8B-Instruct"
        and not found.warnings
    )
    missing = job(site, workflow_type="eval", eval_cmd="trtllm-eval --model=org/Absent-1B gsm8k")
    assert missing.work.command.argv[1] == "--model=org/Absent-1B"
    assert "will try to download" in missing.warnings[0]


def test_user_commands_typed_only_when_plain() -> None:
    assert user_command("pytest -v 'a b.py::t[x]'", "t").argv == ("pytest", "-v", "a b.py::t[x]")
    assert user_command("prep --out x > /tmp/d.json", "b").redirects == ((">", "/tmp/d.json"),)
    for shell_only in ("echo $HOME", "a | b", "a; b", "echo `date`", "A=1 cmd", "cd ~"):
        assert user_command(shell_only, "c").argv is None
    with pytest.raises(InputError, match="unterminated"):
        tokenize("echo 'oops", "c")
    assert split_top_level("a '&&' b", "&&", "c") == ["a '&&' b"]


# --- Slurm parameters ---------------------------------------------------------------------


def test_partition_and_account_are_required_and_checked(site: Site) -> None:
    bench = {"workflow_type": "bench", "bench_cmd": "trtllm-bench throughput"}
    with pytest.raises(InputError, match=r"^missing for bench on local_slurm: --partition; "):
        job(site, partition=None, **bench)
    with pytest.raises(
        InputError,
        match=r"^missing for bench on remote_slurm: --account, --remote-repo-path, "
        r"--remote-work-dir; give each in the request file or as the flag; `scriptast "
        r"probe-slurm -o slurm_env.json` writes the cluster's partitions and accounts$",
    ):
        job(site, account=None, execution_scenario="remote_slurm", **bench)
    with pytest.raises(
        ResolveError,
        match=r"partition 'bach' is not in slurm_env.json \(known: batch, arm, nogres, unknown_arch\) \(did you mean 'batch'\?\)",
    ):
        job(site, partition="bach", **bench)
    with pytest.raises(ResolveError, match=r"account 'nobody' is not in slurm_env.json accounts"):
        job(site, account="nobody", **bench)


def test_gres_rules(site: Site) -> None:
    bench = {"workflow_type": "bench", "bench_cmd": "trtllm-bench throughput --tp 2"}
    assert job(site, **bench).slurm.gres == "gpu:2"
    assert job(site, partition="nogres", **bench).slurm.gres is None
    assert gres_gpus("gpu:h100:8(IDX:0-7)") == 8 and gres_gpus("(null)") is None


def test_time_limits(site: Site) -> None:
    partition = Partition(name="p", time_limit="4:00:00")
    assert time_limit(None, partition) == ("02:00:00", "default")
    assert time_limit("1-00:00:00", Partition(name="u", time_limit="UNLIMITED"))[0] == "1-00:00:00"
    with pytest.raises(ResolveError, match="exceeds partition 'p' MaxTime 4:00:00"):
        time_limit("05:00:00", partition)
    with pytest.raises(ResolveError, match="not a Slurm time"):
        time_limit("2 hours", partition)


def test_remote_requires_remote_paths(site: Site) -> None:
    bench = {
        "workflow_type": "bench",
        "bench_cmd": "trtllm-bench throughput",
        "execution_scenario": "remote_slurm",
    }
    with pytest.raises(InputError, match="missing for bench on remote_slurm: --remote-repo-path;"):
        job(site, remote_work_dir="/w", **bench)
    with pytest.raises(InputError, match="missing for bench on remote_slurm: --remote-work-dir;"):
        job(site, remote_repo_path="/r", **bench)


def test_missing_inputs(site: Site) -> None:
    with pytest.raises(InputError, match=r"^missing for bench on local_slurm: --llm-models-root;"):
        job(site, workflow_type="bench", bench_cmd="trtllm-bench throughput", llm_models_root=None)
    with pytest.raises(InputError, match=r"^missing for bench on local_slurm: --bench-cmd;"):
        job(site, workflow_type="bench")
    with pytest.raises(
        InputError, match=r"^missing for custom .*: --custom-cmd or --custom-script;"
    ):
        job(site, workflow_type="custom")
    with pytest.raises(ResolveError, match=r"custom_script .* does not exist"):
        job(site, workflow_type="custom", custom_script=str(site.home / "missing.sh"))
    with pytest.raises(InputError, match=r"^missing for .*: --perf-config-yaml or --test-cmd;"):
        job(site, workflow_type="perf_sanity")
    with pytest.raises(ResolveError, match="local_docker is not supported"):
        job(
            site,
            workflow_type="perf_sanity",
            execution_scenario="local_docker",
            perf_config_yaml=str(
                site.repo / "tests/scripts/perf-sanity/aggregated/llama_8b_aggr.yaml"
            ),
        )


def test_explain_lists_every_value_with_its_source(site: Site) -> None:
    resolved = job(
        site, workflow_type="bench", bench_cmd="trtllm-bench --model m throughput --tp 2"
    )
    table = resolved.explain()
    for field, source in [
        ("tp", "derived from --tp 2 in bench_cmd"),
        ("mpi_plugin", "slurm_env pmix.preferred"),
        ("docker_image", "properties key LLM_DOCKER_IMAGE"),
        ("time_limit", "default"),
    ]:
        assert any(line.startswith(field) and source in line for line in table.splitlines()), field


def test_slurm_env_errors_list_is_embedded_verbatim(site: Site) -> None:
    site.write_slurm_env(errors=["SLURM client tools not found"])
    resolved = job(site, workflow_type="bench", bench_cmd="trtllm-bench throughput")
    assert resolved.cluster is not None
    assert resolved.cluster.raw["errors"] == ["SLURM client tools not found"]
    assert resolved.slurm.mpi_plugin == "pmix"
    assert json.loads(site.slurm_env.read_text())["probe"]["host"] == "login-01"


# --- branches of the helpers --------------------------------------------------------------


def test_tokenizer_details() -> None:
    tokens = tokenize('cmd 2>&1 a\\ b # comment\nnext "q\\"x" > out', "c")
    assert [(t.value, t.kind) for t in tokens] == [
        ("cmd", "word"),
        ("2>&", "redirect"),
        ("1", "word"),
        ("a b", "word"),
        ("\n", "op"),  # a newline ends a command, as in bash
        ("next", "word"),
        ('q"x', "word"),
        (">", "redirect"),
        ("out", "word"),
    ]
    assert tokenize('"$X"', "c")[0].expands and not tokenize("'$X'", "c")[0].expands
    for needs_shell in ("*.py", "{a,b}", "cfg=~/x", "x[1]", "a\\", "a\\\nb", '"a\\\nb"'):
        assert tokenize(needs_shell, "c")[0].expands, needs_shell
    for literal in ("'*.py'", "\\{a,b\\}", '"~"', "a\u00a0", "x\x0c"):
        assert not tokenize(literal, "c")[0].expands, literal
    assert [(t.value, t.kind, t.expands) for t in tokenize("x 10>/dev/null", "c")][1] == (
        "10>",
        "redirect",
        True,
    )
    with pytest.raises(InputError, match="unterminated double quote"):
        tokenize('echo "x', "c")
    assert user_command("cmd >", "c").argv is None
    assert user_command("cmd > $OUT", "c").argv is None
    assert user_command("(sub)", "c").argv is None


def test_available_gpus_bound_a_docker_job(site: Site) -> None:
    """A host with 8 GPUs of which 2 are free: a test that needs 4 does not fit."""
    with pytest.raises(ResolveError, match="exceeds gpus_per_node = 2"):
        job(
            site,
            workflow_type="pytest",
            test_cmd="pytest accuracy/test_llm_api_pytorch.py::TestLlama3_1_8BInstruct::test_function_mark",
            execution_scenario="local_docker",
            slurm_env_file=None,
            partition=None,
            account=None,
            env_check={"gpus_per_node": 8, "available_gpus": 2},
        )


def test_gpus_per_node_sources() -> None:
    from scriptast.builders.request.fields import EnvCheck
    from scriptast.builders.resolution.slurm_params import gpus_per_node, uses_gres

    assert gpus_per_node(Partition(name="p", gres="gpu:a100:4"), None).value == 4  # type: ignore[union-attr]
    assert gpus_per_node(None, EnvCheck(available_gpus=2)).source == "env_check.available_gpus"  # type: ignore[union-attr]
    assert gpus_per_node(Partition(name="p", gres="(null)"), EnvCheck()) is None
    both = gpus_per_node(None, EnvCheck(gpus_per_node=8, available_gpus=2))
    assert both is not None and both.value == 2
    assert both.source == "env_check.available_gpus (fewer than gpus_per_node 8)"
    roomy = gpus_per_node(None, EnvCheck(gpus_per_node=4, available_gpus=8))
    assert roomy is not None and (roomy.value, roomy.source) == (4, "env_check.gpus_per_node")
    assert not uses_gres(Partition(name="p", gres="(null)")) and not uses_gres(None)
    assert time_limit("30", Partition(name="p", time_limit="weird"))[0] == "30"


def test_slurm_env_mount_entries() -> None:
    from scriptast.builders.resolution.mounts import parse_mount_entry

    assert parse_mount_entry("/lustre") == Mount(source="/lustre", target="/lustre")
    assert parse_mount_entry("/a:/b:ro") == Mount(source="/a", target="/b", flags=("ro",))
    with pytest.raises(ResolveError, match="is not SRC:DST"):
        parse_mount_entry("/a:/b:ro:x")
    with pytest.raises(ResolveError, match="must be an absolute path"):
        parse_mount_entry("rel:/b")
    with pytest.raises(ResolveError, match="must be an absolute path"):
        _plan(models_path="relative/models")
    with pytest.raises(ResolveError, match="llm_models_root 'models' must be an absolute path"):
        _plan(models_path="/m", llm_models_root="models")


def test_models_host_from_slurm_env_mounts(site: Site) -> None:
    site.write_slurm_env(mounts=[f"{site.models}:/models", "/lustre:/lustre:ro"])
    resolved = job(
        site,
        workflow_type="eval",
        models_path=None,
        eval_cmd="trtllm-eval --model meta-llama/Llama-3.1-8B-Instruct gsm8k",
    )
    assert resolved.models_host_path == str(site.models)
    assert resolved.work.command.argv[2] == "/models/meta-llama/Llama-3.1-8B-Instruct"
    assert [m.target for m in resolved.mounts][2:] == ["/models", "/lustre"]


def test_model_dir_lookup_edges(tmp_path: Path) -> None:
    assert find_model_dir(str(tmp_path / "absent"), "a/b") is None
    locked = tmp_path / "m" / "locked"
    locked.mkdir(parents=True)
    locked.chmod(0)
    try:
        assert find_model_dir(str(tmp_path / "m"), "a/zzz") is None
    finally:
        locked.chmod(0o755)


def test_pytest_marks_edge_cases(site: Site, tmp_path: Path) -> None:
    from scriptast.builders.categories.pytest.devices import read_needs
    from scriptast.builders.resolution.pytest_ids import TestTarget

    source = tmp_path / "test_edge.py"
    source.write_text(
        "import pytest\n"
        "N = 4\n"
        "@pytest.mark.skip_less_device(N)\n"
        "@pytest.mark.parametrize('x', [1, 2], ids=['a', 'b'])\n"
        "@pytest.mark.parametrize('y', [pytest.param(1, marks=pytest.mark.skip_less_device(2)), 3], ids=['p1', 'p2'])\n"
        "def test_f(x, y):\n    pass\n"
    )
    assert read_needs(source, TestTarget(str(source), ("test_f",), "a-p1")).devices.count == 2  # type: ignore[union-attr]
    assert read_needs(source, TestTarget(str(source), ("test_f",), "b-p2")).devices is None
    broken = tmp_path / "test_broken.py"
    broken.write_text("def oops(:\n")
    with pytest.raises(ResolveError, match="does not parse"):
        read_needs(broken, TestTarget(str(broken), (), None))
    absolute = job(
        site,
        workflow_type="pytest",
        test_cmd=f"pytest {site.repo / 'tests/unittest/test_outside_defs.py'}::test_two_gpus",
    )
    assert absolute.required_devices == 2


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"install": False, "install_mode": "wheel"}, "install_mode wheel chooses how"),
        (
            {"install": False, "install_mode": "wheel", "wheel_path": "/w/t.whl"},
            "install_mode wheel chooses how",
        ),
    ],
)
def test_an_install_flag_without_the_install_step_is_an_error(
    site: Site, fields: dict[str, Any], message: str
) -> None:
    with pytest.raises(ResolveError, match=message):
        job(site, workflow_type="bench", bench_cmd="trtllm-bench --model m throughput", **fields)
    remote = job(
        site,
        workflow_type="bench",
        bench_cmd="trtllm-bench --model m throughput",
        execution_scenario="remote_slurm",
        remote_repo_path="/r/TensorRT-LLM",
        remote_work_dir="/r/work",
        install_mode="wheel",
    )
    assert remote.install  # remote jobs install too: the flag is used, not dropped


def test_a_probe_without_client_tools_takes_the_seeds_fallback(site: Site) -> None:
    """slurm_env.json from a host without sinfo/scontrol: no partitions to check against, so
    the partition is taken as given, arch from this machine, bare pmix, no --gres."""
    site.slurm_env.write_text(
        json.dumps(
            {
                "user": "alice",
                "partitions": [],
                "pmix": {"available": [], "preferred": None},
                "errors": ["SLURM client tools not found"],
                "remote_cwd": "/home/alice/scratch",
            }
        )
    )
    resolved = job(
        site,
        workflow_type="bench",
        bench_cmd="trtllm-bench --model m throughput --tp 2",
        partition="gpu_any",
    )
    assert resolved.slurm is not None
    assert (resolved.slurm.partition, resolved.slurm.gres) == ("gpu_any", None)
    assert resolved.slurm.mpi_plugin == "pmix"
    assert any("SLURM client tools not found" in w for w in resolved.warnings)
    arch = next(e for e in resolved.trail if e.field == "arch")
    assert (arch.value, arch.source) == (
        "x86_64",
        "this machine (uname -m), slurm_env: SLURM client tools not found",
    )
    site.write_slurm_env()
    with pytest.raises(ResolveError, match=r"partition 'gpu_any' is not in slurm_env\.json"):
        job(site, workflow_type="bench", bench_cmd="trtllm-bench --model m throughput",
            partition="gpu_any")  # fmt: skip


@pytest.mark.parametrize("scenario", ["local_slurm", "local_docker"])
def test_a_narrowed_selection_takes_no_mpi_ranks_from_a_test_it_may_leave_out(
    site: Site, scenario: str
) -> None:
    """`-k memory` on TestMultiRank may leave out test_mpi_ranks (skip_less_mpi_world_size(4)):
    as the seed says of a selection it cannot read, required_devices (else 1), one task, no
    --mpi; the warning says which ranks were not used. Docker, which runs one process, is not
    refused for a rank count the selection may not need."""
    command = "pytest -v accuracy/test_llm_api_pytorch.py::TestMultiRank -k memory"
    resolved = job(site, workflow_type="pytest", test_cmd=command, execution_scenario=scenario)
    assert (resolved.required_devices, resolved.world_size) == (1, 1)
    if resolved.slurm is not None:
        assert (resolved.slurm.ntasks, resolved.slurm.gres) == (1, "gpu:1")
    (said,) = [w for w in resolved.warnings if "-k memory" in w]
    assert "one task, no --mpi: the 4 MPI ranks of skip_less_mpi_world_size(4)" in said
    whole = job(site, workflow_type="pytest", test_cmd=command.removesuffix(" -k memory"))
    assert whole.world_size == 4  # the class whole: its ranks count


def test_mounts_are_in_the_seeds_order_so_a_models_target_under_home_is_not_hidden() -> None:
    """`<home>:<home>,<project>:<project>,<models or slurm_env mounts>[,<extra>]`: pyxis binds
    in that order, so a models target under the home is bound over the home bind, not under
    it; slurm_env's mounts keep their own order after the two."""
    from scriptast.builders.resolution.mounts import plan_mounts

    plan = plan_mounts(llm_models_root="/home/alice/models", home="/home/alice",
                       project="/home/alice/TensorRT-LLM", checkpoint_path=None,
                       models_path="/data/models", slurm_env_mounts=None,
                       default_models_repo=None, extra_folders=(("/opt/scripts", "script"),))  # fmt: skip
    assert [(m.source, m.target) for m in plan.mounts] == [
        ("/home/alice", "/home/alice"), ("/home/alice/TensorRT-LLM", "/home/alice/TensorRT-LLM"),
        ("/data/models", "/home/alice/models"), ("/opt/scripts", "/opt/scripts"),
    ]  # fmt: skip
    given = plan_mounts(llm_models_root="/models", home="/home/alice", project="/p",
                        checkpoint_path=None, models_path=None,
                        slurm_env_mounts=("/lustre/models:/models", "/lustre/ds:/ds"),
                        default_models_repo=None)  # fmt: skip
    assert [m.source for m in given.mounts] == ["/home/alice", "/p", "/lustre/models", "/lustre/ds"]
    assert given.models_host_path == "/lustre/models"
