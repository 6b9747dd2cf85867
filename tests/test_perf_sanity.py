"""perf_sanity against a submit.py that behaves as upstream's does: final paths, what it writes
taken into work_dir (and off the cluster paths), values read back from its launch script, and
nothing left behind when it or anything after it fails."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from scriptast.builders.categories.perf_sanity.launch_readback import (
    LaunchError,
    read_launch_script,
)
from scriptast.builders.read_request import build_request
from scriptast.errors import ResolveError, ScriptastError
from scriptast.pipeline.emit_job import Output, generate, write_outputs
from tests.cases import CASES, DOCKER
from tests.site import Site
from tests.test_categories import run_case, site_fields
from tests.test_cli import console_script

AGGR = "@repo/tests/scripts/perf-sanity/aggregated/llama_8b_aggr.yaml"
DISAGG = "@repo/tests/scripts/perf-sanity/disaggregated/"
REMOTE_FIELDS = {**CASES["perf_sanity_remote_slurm"]}
REMOTE_FIELDS = {
    k: REMOTE_FIELDS[k] for k in ("execution_scenario", "remote_repo_path", "remote_work_dir")
}


def _flags(output: Output) -> dict[str, str]:
    argv = list(output.submit_argv)
    return dict(zip(argv[2::2], argv[3::2], strict=True))


def _text(output: Output, name: str) -> str:
    return next(f.text for f in output.files if f.path.endswith(f"/{name}"))


def _spec(output: Output) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(_text(output, "job_spec.json"))
    return data


def _tree(path: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()
    }


def _generate(site: Site, **fields: Any) -> Output:
    request = build_request(site_fields(site, fields), {})
    return generate(request, machine="x86_64", home=str(site.home))


def test_submit_py_gets_the_final_paths_and_every_named_file_is_written(site: Site) -> None:
    output = run_case(site, "perf_sanity_local_slurm")
    work = site.work("job")
    flags = _flags(output)
    assert flags["--launch-sh"] == str(work / "slurm_launch.sh")
    assert flags["--work-dir"] == str(work)
    assert not work.exists(), "generate leaves the disk as it was"
    write_outputs(output)
    launch = (work / "slurm_launch.sh").read_text()
    assert (work / "test_list.txt").read_text() == (
        "perf/test_perf_sanity.py::test_e2e[aggr-llama_8b_aggr-llama_8b_tp4]\n"
    )
    assert f"--test-list={work}/test_list.txt" in launch
    config = launch.split("export configYamlPath='")[1].split("'")[0]
    assert Path(config).is_file()
    assert os.access(work / "slurm_launch.sh", os.X_OK)


def test_job_spec_and_summary_are_read_back_from_the_launch_script(site: Site) -> None:
    output = run_case(site, "perf_sanity_remote_slurm")
    launch = _text(output, "slurm_launch.sh")
    spec = _spec(output)
    assert spec["slurm_params"] == {
        "partition": "batch",
        "account": "coreai_trtllm",
        "time_limit": "02:00:00",
        "nodes": 2,
        "ntasks": 8,
        "ntasks_per_node": 4,
        "gpus_per_node": 4,
        "gres": "gpu:4",
        "mpi_plugin": "pmix",
    }
    assert "#SBATCH --nodes=2\n" in launch and "#SBATCH --ntasks=8\n" in launch
    assert "Devices: 8 GPUs across 2 nodes" in output.summary


def test_container_name_is_the_one_the_launch_script_uses(site: Site) -> None:
    output = run_case(site, "perf_sanity_local_slurm")
    name = _spec(output)["container_name"]
    assert name.startswith("aggr_test-")
    assert f'"--container-name={name}"' in _text(output, "slurm_launch.sh")


def test_remote_job_takes_what_submit_py_wrote_at_the_cluster_path(site: Site) -> None:
    cluster = site.root / "lustre"
    output = run_case(site, "perf_sanity_remote_slurm")
    flags = _flags(output)
    remote_dir = str(site.root / "lustre/alice/work_dirs/case")
    assert flags["--work-dir"] == remote_dir
    assert flags["--llm-src"] == "/home/alice/scratch/TensorRT-LLM"
    assert flags["--draft-launch-sh"] == str(
        site.repo / "jenkins/scripts/perf/aggregated/slurm_launch_draft.sh"
    )
    assert flags["--config-file"] == f"{remote_dir}/llama_8b_aggr.yaml"
    assert not cluster.exists(), "nothing is left at cluster paths on this machine"
    spec = _spec(output)
    work = site.work("job")
    assert spec["extra_file_destinations"] == {
        str(work / "llama_8b_aggr.yaml"): f"{remote_dir}/llama_8b_aggr.yaml",
        str(work / "slurm_install.sh"): f"{remote_dir}/slurm_install.sh",
        str(work / "slurm_run.sh"): f"{remote_dir}/slurm_run.sh",
        str(work / "test_list.txt"): f"{remote_dir}/test_list.txt",
    }
    assert sorted(spec["extra_files"]) == sorted(spec["extra_file_destinations"])
    assert f"export runScript='{remote_dir}/slurm_run.sh'" in _text(output, "slurm_launch.sh")
    write_outputs(output)
    assert sorted(_tree(work)) == [
        "job_spec.json",
        "llama_8b_aggr.yaml",
        "slurm_install.sh",
        "slurm_launch.sh",
        "slurm_run.sh",
        "test_list.txt",
    ]
    assert not cluster.exists()


def test_a_cluster_folder_that_existed_keeps_what_it_had(site: Site) -> None:
    remote_dir = site.root / "lustre/alice/work_dirs/case"
    remote_dir.mkdir(parents=True)
    (remote_dir / "test_list.txt").write_text("an earlier run's list\n")
    (remote_dir / "slurm-1.out").write_text("log\n")
    before = _tree(site.root / "lustre")
    run_case(site, "perf_sanity_remote_slurm")
    assert _tree(site.root / "lustre") == before


def test_gpu_request_follows_the_partition_in_slurm_env(site: Site) -> None:
    output = _generate(
        site, workflow_type="perf_sanity", perf_config_yaml=AGGR, perf_test_name="llama_8b_tp4",
        partition="nogres",
    )  # fmt: skip
    launch = _text(output, "slurm_launch.sh")
    assert "--gres" not in launch and "--gpus-per-node" not in launch
    params = _spec(output)["slurm_params"]
    assert params["gres"] is None and params["gpus_per_node"] is None


def test_failing_submit_py_is_one_line_and_leaves_nothing(site: Site) -> None:
    with pytest.raises(ResolveError) as caught:
        _generate(
            site, workflow_type="perf_sanity", perf_config_yaml=AGGR, perf_test_name="no_such"
        )
    assert str(caught.value) == (
        "submit.py failed (exit code 1): ValueError: Server config not found for test_name: no_such"
    )
    assert not site.work("job").exists()


def test_failure_after_submit_py_restores_an_earlier_emit(site: Site) -> None:
    fields = {"workflow_type": "perf_sanity", "perf_config_yaml": AGGR}
    write_outputs(_generate(site, perf_test_name="llama_8b_tp4", **fields))
    work = site.work("job")
    before = _tree(work)
    with pytest.raises(ResolveError, match="Server config not found"):
        _generate(site, perf_test_name="missing", **fields)
    assert _tree(work) == before


def test_cli_failure_is_one_error_line(site: Site, tmp_path: Path) -> None:
    request = tmp_path / "request.json"
    fields = site_fields(
        site, {"workflow_type": "perf_sanity", "perf_config_yaml": AGGR, "perf_test_name": "x"}
    )
    request.write_text(json.dumps(fields))
    result = subprocess.run(
        [console_script(), "emit", "--request", str(request)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "error: submit.py failed (exit code 1): ValueError: Server config not found for "
        "test_name: x"
    ]
    assert not site.work("job").exists()


def test_stdout_is_refused_and_writes_nothing(site: Site, tmp_path: Path) -> None:
    request = tmp_path / "request.json"
    fields = site_fields(
        site,
        {
            "workflow_type": "perf_sanity",
            "perf_config_yaml": AGGR,
            "perf_test_name": "llama_8b_tp4",
        },
    )
    request.write_text(json.dumps(fields))
    result = subprocess.run(
        [console_script(), "emit", "--request", str(request), "--stdout"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1 and result.stdout == ""
    assert "--stdout cannot show it without writing: drop --stdout" in result.stderr
    assert not site.work("job").exists()


def _fallback(site: Site, config: str) -> Output:
    return _generate(
        site,
        workflow_type="eval",
        partition="arm",
        eval_cmd="trtllm-eval --model deepseek-ai/DeepSeek-R1-0528 --tp_size 8 gsm8k",
        perf_config_yaml=DISAGG + config if not config.startswith("@") else config,
    )


def test_eval_fallback_config_runs_accuracy_where_the_job_reads_it(site: Site) -> None:
    import yaml

    output = _fallback(site, "deepseek_r1_2_nodes.yaml")
    copy = site.work("job") / "deepseek_r1_2_nodes_accuracy.yaml"
    data = yaml.safe_load(_text(output, copy.name))
    assert data["accuracy"]["enable_accuracy_test"] is True
    assert set(data["accuracy"]["tasks"]) == {"gsm8k", "gpqa_custom"}
    flags = _flags(output)
    assert flags["--config-file"] == str(copy)
    launch = _text(output, "slurm_launch.sh")
    assert f"export configYamlPath='{copy}'" in launch
    assert f"DISAGG_CONFIG_FOLDER='{copy.parent}'" in launch
    assert "export ACCURACY_CONFIG_JSON=" in launch
    lm_eval = site.work("job") / "lm_eval_configs"
    assert f'"include_path": "{lm_eval}"' in launch
    assert "LLM_MODELS_ROOT" not in _text(output, "lm_eval_configs/gpqa_custom.yaml")
    write_outputs(output)
    assert copy.is_file() and (lm_eval / "gpqa_custom.yaml").is_file()
    assert (lm_eval / "utils.py").is_file()


def test_eval_fallback_turns_flat_tasks_into_the_nested_form(site: Site) -> None:
    import yaml

    output = _fallback(site, "deepseek_r1_flat_accuracy.yaml")
    data = yaml.safe_load(_text(output, "deepseek_r1_flat_accuracy_accuracy.yaml"))
    assert data["accuracy"] == {
        "enable_accuracy_test": True,
        "tasks": {
            "gsm8k": {"model": "local-completions", "model_args_extra": "", "extra_kwargs": {}}
        },
    }


def _eval(site: Site, eval_cmd: str, config: str, **fields: Any) -> Output:
    return _generate(
        site,
        workflow_type="eval",
        partition="arm",
        eval_cmd=eval_cmd,
        perf_config_yaml=config if config.startswith("@") else DISAGG + config,
        **fields,
    )


def test_eval_fallback_runs_the_eval_commands_task(site: Site) -> None:
    """mmlu is not among the config's tasks (gsm8k, gpqa_custom): it is added in the nested
    form test_perf_sanity.py reads, and the config's own stay."""
    import yaml

    output = _eval(
        site, "trtllm-eval --model deepseek-ai/DeepSeek-R1-0528 --tp_size 8 mmlu",
        "deepseek_r1_2_nodes.yaml",
    )  # fmt: skip
    data = yaml.safe_load(_text(output, "deepseek_r1_2_nodes_accuracy.yaml"))
    assert data["accuracy"]["enable_accuracy_test"] is True
    assert list(data["accuracy"]["tasks"]) == ["gsm8k", "gpqa_custom", "mmlu"]
    assert data["accuracy"]["tasks"]["mmlu"] == {
        "model": "local-completions", "model_args_extra": "", "extra_kwargs": {},
    }  # fmt: skip
    assert '"mmlu": {"model": "local-completions"' in _text(output, "slurm_launch.sh")
    trail = {e.field: e.value for e in output.job.trail}
    assert trail["accuracy_task"] == "mmlu"
    assert output.job.model_name == "deepseek_r1_0528"
    no_section = _eval(
        site, "trtllm-eval --model deepseek-ai/DeepSeek-R1-0528 --tp_size 8 gsm8k",
        "deepseek_r1_no_accuracy.yaml",
    )  # fmt: skip
    data = yaml.safe_load(_text(no_section, "deepseek_r1_no_accuracy_accuracy.yaml"))
    assert list(data["accuracy"]["tasks"]) == ["gsm8k"]


@pytest.mark.parametrize(
    ("eval_cmd", "message"),
    [
        (
            "trtllm-eval --model meta-llama/Llama-3.1-405B-Instruct --tp_size 16 mmlu",
            "eval_cmd's --model meta-llama/Llama-3.1-405B-Instruct is not the model of "
            "perf_config_yaml {config} (deepseek_r1_0528_fp4, DeepSeek-R1-0528-FP4): the "
            "perf-sanity run serves the config's model; give a config for that model",
        ),
        (
            "trtllm-eval --model deepseek-ai/DeepSeek-R1-0528 --tp_size 8 longbench_v2",
            "eval task 'longbench_v2' cannot run on the perf-sanity path: perf_config_yaml "
            "{config} runs lm_eval tasks (gsm8k, gpqa_custom) and scriptast adds only gsm8k or "
            "mmlu; add longbench_v2 to the config's accuracy tasks",
        ),
        (
            "trtllm-eval --model deepseek-ai/DeepSeek-R1-0528 --tp_size 8",
            "eval_cmd names no task (trtllm-eval --model M TASK)",
        ),
    ],
)
def test_eval_fallback_refuses_what_it_would_not_run(
    site: Site, eval_cmd: str, message: str
) -> None:
    config = site.repo / "tests/scripts/perf-sanity/disaggregated/deepseek_r1_2_nodes.yaml"
    with pytest.raises(ResolveError) as caught:
        _eval(site, eval_cmd, "deepseek_r1_2_nodes.yaml")
    assert str(caught.value).startswith(message.format(config=config))
    assert not site.work("job").exists()


def test_eval_fallback_warns_when_the_parallelism_differs(site: Site) -> None:
    output = _eval(
        site, "trtllm-eval --model deepseek-ai/DeepSeek-R1-0528 --tp_size 8 gsm8k",
        "deepseek_r1_2_nodes.yaml",
    )  # fmt: skip
    assert (
        "eval_cmd asks for tp 8 pp 1; the config's workers run ctx tp 4 pp 1, gen tp 4 pp 1: "
        "the perf-sanity run uses the config's parallelism"
    ) in output.job.warnings


def test_eval_fallback_on_an_aggregated_config_runs_accuracy_in_its_clients(site: Site) -> None:
    """An aggregated config runs accuracy through client_configs[].accuracy_config (upstream's
    test_perf_sanity.py reads it there): the chosen server's first client gets the task."""
    import yaml

    output = _eval(
        site, "trtllm-eval --model meta-llama/Llama-3.1-8B-Instruct --tp_size 8 mmlu", AGGR,
        perf_test_name="llama_8b_tp8",
    )  # fmt: skip
    data = yaml.safe_load(_text(output, "llama_8b_aggr_accuracy.yaml"))
    server = next(s for s in data["server_configs"] if s["name"] == "llama_8b_tp8")
    assert server["client_configs"][0]["accuracy_config"] == {
        "enable_accuracy_test": True,
        "tasks": {
            "mmlu": {"model": "local-completions", "model_args_extra": "", "extra_kwargs": {}}
        },
    }
    others = [s for s in data["server_configs"] if s["name"] != "llama_8b_tp8"]
    assert all("accuracy_config" not in c for s in others for c in s["client_configs"])
    assert _flags(output)["--test-name"] == "llama_8b_tp8"
    assert output.job.warnings == ()  # tp 8 is the server config's
    with pytest.raises(ResolveError, match=r"name the server config whose clients run the "
                       r"accuracy test with perf_test_name \(one of: llama_8b_tp4, llama_8b_tp1, "
                       r"llama_8b_tp8\)"):  # fmt: skip
        _eval(site, "trtllm-eval --model meta-llama/Llama-3.1-8B-Instruct --tp_size 8 mmlu", AGGR)


def test_remote_test_id_carries_its_config(site: Site) -> None:
    output = _generate(
        site,
        workflow_type="pytest",
        test_cmd="pytest perf/test_perf_sanity.py::test_e2e[aggr-llama_8b_aggr-llama_8b_tp4]",
        execution_scenario="remote_slurm",
        remote_repo_path="/home/alice/scratch/TensorRT-LLM",
        remote_work_dir=str(site.root / "lustre/case"),
    )
    flags = _flags(output)
    assert flags["--config-file"] == str(site.root / "lustre/case/llama_8b_aggr.yaml")
    assert flags["--test-name"] == "llama_8b_tp4" and "--test-list" not in flags
    assert (
        _text(output, "test_list.txt")
        == "perf/test_perf_sanity.py::test_e2e[aggr-llama_8b_aggr-llama_8b_tp4]\n"
    )
    assert not (site.root / "lustre").exists()


LAUNCH = """#!/bin/bash
#SBATCH --nodes=3
#SBATCH --segment=3
#SBATCH --ntasks=12
#SBATCH --ntasks-per-node=4
#SBATCH -J name
#SBATCH -o /w/slurm-%j.out
export x=1

srunArgs=(
  "--container-name=disagg_test-1"
  "--mpi=pmi2"
)
srunArgs+=("--container-env=A")
run() {
    srun "${srunArgs[@]}" --mpi=pmix -N 1 \\
        bash -c "$cmd" &> log &
}
if ! srun "${srunArgs[@]}" --overlap bash -c x; then exit 1; fi
"""


def test_launch_reader_reads_header_and_srun_options() -> None:
    launch = read_launch_script(LAUNCH)
    assert (launch.nodes, launch.ntasks, launch.ntasks_per_node) == (3, 12, 4)
    assert launch.gpus_per_node is None and launch.gres is None
    assert launch.job_name == "name" and launch.output == "/w/slurm-%j.out"
    assert launch.container_name == "disagg_test-1"
    # the later --mpi on the srun line wins over the array's; the second step keeps pmi2
    assert launch.step_mpi == ("pmix", "pmi2") and launch.mpi_plugin == "pmix"


def test_launch_reader_refuses_a_script_without_counts() -> None:
    with pytest.raises(LaunchError, match="no #SBATCH --nodes"):
        read_launch_script(LAUNCH.replace("#SBATCH --nodes=3\n", ""))
    with pytest.raises(LaunchError, match="--ntasks=x, not a count"):
        read_launch_script(LAUNCH.replace("--ntasks=12", "--ntasks=x"))


def test_a_failing_remote_job_leaves_no_cluster_path(site: Site) -> None:
    fields = {**CASES["perf_sanity_remote_slurm"], "perf_test_name": "no_such"}
    with pytest.raises(ResolveError, match="Server config not found for test_name: no_such"):
        _generate(site, **fields)
    assert not (site.root / "lustre").exists()
    assert not site.work("job").exists()


def test_sigterm_while_submit_py_runs_puts_everything_back(site: Site, tmp_path: Path) -> None:
    import signal
    import time

    submit = site.repo / "jenkins/scripts/perf/local/submit.py"
    real = submit.read_text()
    # the stand-in stalls after writing test_list.txt; the emit must stop it, not wait for it
    submit.write_text(
        real.replace(
            '    prefix = args.test_prefix or f"{llm_src}/tests/integration/defs"',
            "    import time; time.sleep(600)\n"
            '    prefix = args.test_prefix or f"{llm_src}/tests/integration/defs"',
        )
    )
    request = tmp_path / "request.json"
    request.write_text(json.dumps(site_fields(site, CASES["perf_sanity_remote_slurm"])))
    process = subprocess.Popen(
        [console_script(), "emit", "--request", str(request)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    written = site.root / "lustre/alice/work_dirs/case/test_list.txt"
    deadline = time.monotonic() + 60
    while not written.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert written.exists(), "submit.py never got to write test_list.txt"
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 1
    assert stderr.splitlines()[-1].startswith("error: interrupted by SIGTERM")
    assert not (site.root / "lustre").exists()
    assert not site.work("job").exists()


def test_an_emit_killed_while_submit_py_runs_is_put_back_by_the_next_lock(
    site: Site, tmp_path: Path
) -> None:
    """kill -9 runs no clean-up: the killed emit's note in work_dir's journal says how to put
    back what submit.py was changing, and the next process to take the lock does it: the file
    it rewrote in place has its bytes and mode again, the link set aside is back, what it made
    is gone (the cluster folder created for it among them), and the note is removed."""
    import signal
    import stat
    import time

    from scriptast.workdir.journal import JOURNAL_PREFIX
    from scriptast.workdir.write import work_dir_held

    submit = site.repo / "jenkins/scripts/perf/local/submit.py"
    submit.write_text(submit.read_text().replace(
        '    prefix = args.test_prefix or f"{llm_src}/tests/integration/defs"',
        "    import time; time.sleep(600)\n"
        '    prefix = args.test_prefix or f"{llm_src}/tests/integration/defs"',
    ))  # fmt: skip
    work = site.work("job")
    work.mkdir(parents=True)
    earlier = work / "test_list.txt"
    earlier.write_text("an earlier list\n")
    earlier.chmod(0o600)
    elsewhere = tmp_path / "elsewhere.sh"
    elsewhere.write_text("not submit.py's\n")
    (work / "slurm_launch.sh").symlink_to(elsewhere)
    fields = {**CASES["perf_sanity_remote_slurm"], "remote_work_dir": None}
    request = tmp_path / "request.json"
    request.write_text(json.dumps(site_fields(site, {**fields, "execution_scenario": "local_slurm",
                                                     "remote_home": None})))  # fmt: skip
    process = subprocess.Popen([console_script(), "emit", "--request", str(request)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 60
    while earlier.read_text() == "an earlier list\n" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert earlier.read_text() != "an earlier list\n", "submit.py never rewrote test_list.txt"
    os.killpg(process.pid, signal.SIGKILL)
    process.communicate(timeout=60)
    notes = [p.name for p in work.iterdir() if p.name.startswith(JOURNAL_PREFIX)]
    assert len(notes) == 1, sorted(p.name for p in work.iterdir())
    with work_dir_held(str(work)):
        pass
    assert earlier.read_text() == "an earlier list\n"
    assert stat.S_IMODE(earlier.stat().st_mode) == 0o600
    assert (work / "slurm_launch.sh").is_symlink()
    assert os.readlink(work / "slurm_launch.sh") == str(elsewhere)
    assert elsewhere.read_text() == "not submit.py's\n"
    left = sorted(p.name for p in work.iterdir() if not p.name.startswith(".scriptast"))
    assert left == ["slurm_launch.sh", "test_list.txt"]
    assert not [p for p in work.iterdir() if p.name.startswith(JOURNAL_PREFIX)]


def test_the_sinfo_stand_in_answers_from_slurm_env(tmp_path: Path) -> None:
    """submit.py asks `sinfo -h -o %P` for the partitions (the default marked `*`) and
    `sinfo -p P -h -o %G` for a partition's gres; anything else fails as an unknown query."""
    from scriptast.builders.categories.perf_sanity.submit_py import _shims
    from scriptast.cluster.read_slurm_env import load_slurm_env

    env = load_slurm_env(str(Path(__file__).parent.parent / "examples/slurm_env.json"), "test").env
    with _shims(env) as folder:

        def sinfo(*arguments: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [f"{folder}/sinfo", *arguments], capture_output=True, text=True, check=False
            )

        listed = sinfo("-h", "-o", "%P").stdout.split()
        assert sorted(p.rstrip("*") for p in listed) == sorted(p.name for p in env.partitions)
        assert [p for p in listed if p.endswith("*")] == [f"{env.default_partition}*"]
        gres = next(p for p in env.partitions if p.gres is not None)
        assert sinfo("-p", gres.name, "-h", "-o", "%G").stdout == f"{gres.gres}\n"
        assert sinfo("-s").returncode == 1
        config = subprocess.run(
            [f"{folder}/scontrol", "show", "config"], capture_output=True, text=True, check=False
        )
        assert config.stdout.splitlines() == [
            "ClusterName             = dlcluster",
            "SLURM_VERSION           = 24.05.4",
        ]
        assert subprocess.run([f"{folder}/scontrol", "show", "node"], check=False).returncode == 1


def test_an_option_the_clusters_release_lacks_is_refused_before_writing(site: Site) -> None:
    """submit.py writes `#SBATCH --segment` (Slurm 24.05+) whatever the cluster runs. On 23.11
    (block topology, no --segment) sbatch refuses the script and placement without it would
    differ, so emit refuses it, naming the option and the release, and `verify` with the same
    slurm_env.json agrees."""
    site.write_slurm_env(probe={"host": "login-01", "slurm_version": "23.11.4"})
    fields = {"workflow_type": "perf_sanity", "perf_config_yaml": AGGR}
    with pytest.raises(ResolveError) as caught:
        _generate(site, perf_test_name="llama_8b_tp4", **fields)
    assert str(caught.value).startswith(
        "the launch script submit.py wrote (slurm_launch.sh:3): --segment needs Slurm "
        "24.05 or later; the cluster runs 23.11.4: sbatch there refuses it"
    )
    assert not site.work("job").exists()
    site.write_slurm_env()
    output = _generate(site, perf_test_name="llama_8b_tp4", **fields)
    launch = site.root / "slurm_launch.sh"
    launch.write_text(_text(output, "slurm_launch.sh"))
    site.write_slurm_env(probe={"host": "login-01", "slurm_version": "22.05.8"})
    verdict = subprocess.run(
        [console_script(), "verify", str(launch), "--slurm-env-file", str(site.slurm_env)],
        capture_output=True,
        text=True,
    )
    assert verdict.returncode == 1
    assert f"{launch}:3: --segment needs Slurm 24.05 or later; the cluster runs 22.05.8" in (
        verdict.stderr
    )


def test_a_segment_is_left_out_where_slurm_has_no_block_topology(site: Site) -> None:
    """Before 23.11 a cluster has no blocks to cut segments from: the line becomes a comment
    that says why, the job is written, and its script passes verify against that cluster."""
    site.write_slurm_env(probe={"host": "login-01", "slurm_version": "22.05.8"})
    output = _generate(site, workflow_type="perf_sanity", perf_config_yaml=AGGR,
                       perf_test_name="llama_8b_tp4")  # fmt: skip
    text = _text(output, "slurm_launch.sh")
    why = ("--segment=1 left out: Slurm 22.05.8 has no block topology (topology/block came in "
           "23.11, --segment in 24.05), so no segment can be asked for there")  # fmt: skip
    assert text.splitlines()[2] == f"# scriptast: {why}"
    assert "#SBATCH --segment" not in text
    assert f"the launch script submit.py wrote: {why}" in output.job.warnings
    launch = site.root / "slurm_launch.sh"
    launch.write_text(text)
    verdict = subprocess.run(
        [console_script(), "verify", str(launch), "--slurm-env-file", str(site.slurm_env)],
        capture_output=True,
        text=True,
    )
    assert "--segment" not in verdict.stderr + verdict.stdout


@pytest.mark.parametrize(
    ("request_name", "recorded", "expected"),
    [
        ("aws-cmh", None, "aws-cmh"),
        (None, "aws-cmh-cs-001", "aws-cmh-cs-001"),
        ("aws-dfw", "aws-cmh-cs-001", "aws-dfw"),
        (None, None, None),
    ],
)
def test_the_cluster_name_reaches_submit_py(
    site: Site, request_name: str | None, recorded: str | None, expected: str | None
) -> None:
    """submit.py keys its UCX settings on the cluster's name: the request's cluster_name, else
    slurm_env's (probe-slurm reads ClusterName); the disaggregated launch script then carries
    that cluster's settings (aws-cmh pins UCX_TLS and UCX_NET_DEVICES, as upstream's rules)."""
    site.write_slurm_env(cluster_name=recorded)
    fields: dict[str, Any] = {
        "workflow_type": "perf_sanity",
        "perf_config_yaml": DISAGG + "deepseek_r1_2_nodes.yaml",
    }
    if request_name:
        fields["cluster_name"] = request_name
    output = _generate(site, **fields)
    assert _flags(output).get("--cluster-name") == expected
    launch = _text(output, "slurm_launch.sh")
    pinned = "UCX_TLS=cuda_ipc,cuda_copy,sm,self,tcp" in launch
    assert pinned == (expected or "").startswith("aws-cmh")
    assert ("UCX_TLS=^gdr_copy" in launch) == (expected == "aws-dfw")
    trail = dict((e.field, (e.value, e.source)) for e in output.job.trail)
    assert trail["cluster_name"][0] == (expected or "(none)")


def test_the_scontrol_stand_in_answers_the_cluster_name(site: Site) -> None:
    """Without --cluster-name, upstream's submit.py asks `scontrol show config`; the stand-in
    scontrol answers ClusterName from slurm_env, so both ways agree."""
    from scriptast.builders.categories.perf_sanity.submit_py import _shims
    from scriptast.cluster.read_slurm_env import load_slurm_env

    site.write_slurm_env(cluster_name="aws-cmh-cs-001")
    env = load_slurm_env(str(site.slurm_env), "test").env
    with _shims(env) as folder:
        submit_dir = site.repo / "jenkins/scripts/perf/local"
        asked = subprocess.run(
            ["python3", "-c", "import submit; print(submit.cluster_name(''))"],
            cwd=submit_dir,
            env={**os.environ, "PATH": f"{folder}:{os.environ['PATH']}"},
            capture_output=True,
            text=True,
            check=True,
        )
    assert asked.stdout == "aws-cmh-cs-001\n"


def test_a_config_larger_than_the_partitions_nodes_is_a_warning(site: Site) -> None:
    """llama_8b_tp4 needs 4 GPUs on a node; unknown_arch's nodes have 2: emit warns (the job
    would never start there) and verify says the same."""
    output = _generate(
        site, workflow_type="perf_sanity", perf_config_yaml=AGGR, perf_test_name="llama_8b_tp4",
        partition="unknown_arch",
    )  # fmt: skip
    assert any(
        "--gres=gpu:4 asks for 4 GPUs; nodes of 'unknown_arch' have 2" in warning
        for warning in output.job.warnings
    )
    plain = _generate(
        site, workflow_type="perf_sanity", perf_config_yaml=AGGR, perf_test_name="llama_8b_tp4"
    )
    assert not any("launch script" in warning for warning in plain.job.warnings)


def test_explain_shows_what_the_launch_script_asks_for(site: Site) -> None:
    """Not the placeholders submit.py's path starts from (tp 1, one device), but the counts read
    back from the launch script it wrote."""
    output = _generate(
        site, workflow_type="perf_sanity", perf_config_yaml=AGGR, perf_test_name="llama_8b_tp4"
    )
    trail = [(e.field, e.value, e.source) for e in output.job.trail]
    fields = [field for field, _, _ in trail]
    assert "tp" not in fields and "pp" not in fields
    assert fields.count("required_devices") == 1 and fields.count("gpus_per_node") == 1
    read_back = {f: v for f, v, s in trail if s == "read back from the launch script"}
    assert (read_back["required_devices"], read_back["world_size"]) == ("4", "4")
    assert (read_back["nodes"], read_back["gres"]) == ("1", "gpu:4")
    model = {f: (v, s) for f, v, s in trail}["model_name"]
    assert model == ("llama_8b_aggr", "derived (from the perf config llama_8b_aggr.yaml)")


def test_a_cluster_work_dir_that_cannot_be_made_here_says_why(site: Site, tmp_path: Path) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file, not a folder\n")
    fields = {**CASES["perf_sanity_remote_slurm"], "remote_work_dir": str(blocked / "perf")}
    with pytest.raises(ScriptastError) as caught:
        _generate(site, **fields)
    message = str(caught.value)
    assert message.startswith(
        f"remote_work_dir {blocked / 'perf'}: submit.py creates its --work-dir on the machine "
        "it runs on (this one)"
    )
    assert f"cannot create {blocked / 'perf'}: Not a directory" in message
    assert "or run emit on the cluster's login node" in message
    assert not site.work("job").exists()


def _conclude_perf_sanity(site: Site, serving_tps: str | None, **more: str) -> Any:
    """A perf_sanity job as emit writes it, its BENCHMARK task's pytest run as the launch
    script runs it (the stand-in writes each client's report where test_perf_sanity.py does),
    then judged as `run` judges it once Slurm says the job completed with exit 0."""
    import shlex
    import sys

    from scriptast.contract.run_record import RECORD_VERSION, RunRecord
    from scriptast.contract.transport import Completed
    from scriptast.executor.followed_job import Followed
    from scriptast.executor.job_files import load_job
    from scriptast.executor.options import Writer
    from scriptast.schedulers.registry import scheduler
    from scriptast.schedulers.slurm.client import SlurmClient
    from scriptast.schedulers.tracking import QueueTracker
    from tests.test_run_units import FakeTransport

    output = run_case(site, "perf_sanity_local_slurm")
    write_outputs(output)
    work = site.work("job")
    launch = (work / "slurm_launch.sh").read_text()
    pytest_command = launch.split('export PYTEST_COMMAND="')[1].split('"')[0]
    shims = Path(__file__).resolve().parent / "shims"
    code = (f"import sys; sys.path.insert(0, {str(shims)!r}); import upstream; "
            "sys.exit(upstream.speak('pytest', sys.argv[1:]))")  # fmt: skip
    env = {**os.environ, **({"SHIM_SERVING_TPS": serving_tps} if serving_tps else {}), **more}
    subprocess.run([sys.executable, "-c", code, *shlex.split(pytest_command)[1:]], env=env,
                   check=True, capture_output=True)  # fmt: skip
    job = load_job(str(work))
    finals = {"sacct": Completed(code=0, out="77|COMPLETED|0:0\n", err="")}
    client = SlurmClient(FakeTransport(finals))
    record = RunRecord(version=RECORD_VERSION, work_dir=job.work_dir,
                       execution_scenario=job.spec.execution_scenario, script=job.script,
                       submitted_at="now", submit_command=(), job_id="77",
                       out_log=f"{work}/slurm-77.out")  # fmt: skip
    followed = Followed(
        job,
        record,
        Writer(write=lambda data: None, prefix=None),
        QueueTracker(scheduler("slurm"), client, record),
    )
    return followed.conclude(client.finals(["77"]).get("77"))


def test_a_perf_sanity_run_is_judged_by_its_clients_figures(site: Site) -> None:
    record = _conclude_perf_sanity(site, "2048")
    work = site.work("job")
    client = "aggr-llama_8b_aggr-llama_8b_tp4 0.0"
    figures = {f.name: f for f in record.figures}
    assert figures[f"{client} token_throughput"].value == 2048.0
    assert figures[f"{client} token_throughput"].headline
    assert figures[f"{client} p99_e2el"].unit == "ms"
    assert figures[f"{client} p99_e2el"].source.file == (
        f"{work}/aggr-llama_8b_aggr-llama_8b_tp4/trtllm-benchmark.0.0.log"
    )
    assert len(record.figures) == 16 and not record.missing
    assert (record.verdict, record.exit_code) == ("PASSED", 0)


def test_a_perf_sanity_run_without_a_client_report_is_inconclusive(site: Site) -> None:
    record = _conclude_perf_sanity(site, None)
    assert record.verdict == "INCONCLUSIVE"
    assert record.missing == (
        f"a benchmark client's log ({site.work('job')}/*/trtllm-benchmark.*.log)",
    )


def test_a_client_report_missing_a_figure_names_it_and_a_link_is_not_read(
    site: Site, tmp_path: Path
) -> None:
    from scriptast.contract.measured import Measures
    from scriptast.executor.followed_job import list_local_results, read_local_result
    from scriptast.results.judging import measure
    from scriptast.results.reference_file import Where

    folder = tmp_path / "out/aggr-x"
    folder.mkdir(parents=True)
    (folder / "trtllm-benchmark.0.0.log").write_text("Output token throughput (tok/s):  10.5\n")
    secret = tmp_path / "secret.log"
    secret.write_text("Output token throughput (tok/s):  99\n")
    (folder / "trtllm-benchmark.0.1.log").symlink_to(secret)
    measures = Measures(kind="perf_sanity", result_glob=f"{tmp_path}/out/*/trtllm-benchmark.*.log")
    found = measure(measures, [], read_local_result, list_files=list_local_results,
                    repo_root=None, where=Where(None, None, None), references=None)  # fmt: skip
    assert [f.name for f in found.figures] == ["aggr-x 0.0 token_throughput"]
    assert "aggr-x 0.0 p99_e2el" in found.missing and len(found.missing) == 15


def test_two_clients_logs_from_a_cluster_keep_their_test_folders(tmp_path: Path) -> None:
    """A perf_sanity job's clients write logs of one name in their tests' folders on the
    cluster: listed there (links left out) and brought back under the same folders, so one
    never overwrites the other. The "cluster" is this machine through the local transport."""
    from scriptast.contract.axes import ExecutionScenario, WorkflowType
    from scriptast.contract.job_spec import JobLogs, JobSpec
    from scriptast.executor.job_files import LoadedJob
    from scriptast.executor.launch.remote import RemotePlace
    from scriptast.transports.local import LocalTransport

    cluster, local = tmp_path / "cluster", tmp_path / "local"
    local.mkdir()
    for label, tps in (("aggr-a", "1.0"), ("aggr-b", "2.0")):
        (cluster / label).mkdir(parents=True)
        (cluster / label / "trtllm-benchmark.0.0.log").write_text(
            f"Output token throughput (tok/s): {tps}\n"
        )
    (cluster / "aggr-b/trtllm-benchmark.0.1.log").symlink_to(
        cluster / "aggr-a/trtllm-benchmark.0.0.log"
    )
    (cluster / "launch.sh").write_text("")
    spec = JobSpec(
        workflow_type=WorkflowType.perf_sanity, model_name="m",
        execution_scenario=ExecutionScenario.remote_slurm, docker_image="i",
        script_name="launch.sh", log_file_pattern="slurm-%j.out", success_patterns=(),
        failure_patterns=(), extra_files=(), remote_work_dir=str(cluster), scheduler="slurm",
        transport="ssh", logs=JobLogs(output=f"{cluster}/slurm-%j.out"), files={"launch.sh": "0"},
    )  # fmt: skip
    job = LoadedJob(work_dir=str(local), spec=spec, script=str(local / "launch.sh"))
    context = RemotePlace(job, LocalTransport())
    found = context.list_results(f"{cluster}/*/trtllm-benchmark.*.log")
    assert found == [f"{cluster}/aggr-a/trtllm-benchmark.0.0.log",
                     f"{cluster}/aggr-b/trtllm-benchmark.0.0.log"]  # fmt: skip
    for path in found:
        context.fetch_result(path)
    assert (local / "aggr-a/trtllm-benchmark.0.0.log").read_text().endswith("1.0\n")
    assert (local / "aggr-b/trtllm-benchmark.0.0.log").read_text().endswith("2.0\n")


def test_a_perf_sanity_accuracy_run_is_read_from_lm_evals_table(site: Site) -> None:
    """A client's accuracy_config ran lm_eval gsm8k: its table's scores become the test's
    figures, each with its filter, lm_eval's arrow and the line it stands on."""
    record = _conclude_perf_sanity(site, "2048", SHIM_LM_EVAL_GSM8K="0.7582")
    work = site.work("job")
    test = "aggr-llama_8b_aggr-llama_8b_tp4"
    figures = {f.name: f for f in record.figures}
    flexible = figures[f"{test} gsm8k exact_match (flexible-extract)"]
    assert (flexible.value, flexible.higher_is_better) == (0.7582, True)
    assert flexible.source.file == f"{work}/{test}/accuracy_eval_gsm8k.0.log"
    assert flexible.source.line == 4
    assert figures[f"{test} gsm8k exact_match (strict-match)"].value == 0.7482
    assert (record.verdict, len(record.figures)) == ("PASSED", 18)
    assert figures[f"{test} 0.0 token_throughput"].headline


def test_a_perf_sanity_accuracy_log_without_a_table_is_inconclusive(site: Site) -> None:
    record = _conclude_perf_sanity(site, "2048", SHIM_LM_EVAL_GSM8K="")
    test = "aggr-llama_8b_aggr-llama_8b_tp4"
    assert record.verdict == "INCONCLUSIVE"
    assert record.missing == (
        f"lm_eval's results table in {site.work('job')}/{test}/accuracy_eval_gsm8k.0.log",
    )


def test_a_remote_eval_fallback_reads_its_custom_config_from_the_local_checkout(site: Site) -> None:
    """submit.py joins a relative custom_config to --llm-src, the cluster checkout, which this
    machine does not have: the config copy names the local checkout's file, and submit.py's
    lm_eval_configs/ copy (with its include_path) lands in the cluster work dir."""
    import yaml

    output = run_case(site, "eval_multi_node_perf_sanity_fallback", **REMOTE_FIELDS)
    remote_dir = str(site.root / "lustre/alice/work_dirs/case")
    data = yaml.safe_load(_text(output, "deepseek_r1_2_nodes_accuracy.yaml"))
    custom = data["accuracy"]["tasks"]["gpqa_custom"]["extra_kwargs"]["custom_config"]
    assert custom == str(site.repo / "tests/scripts/perf-sanity/lm_eval/gpqa_custom.yaml")
    launch = _text(output, "slurm_launch.sh")
    assert f'"include_path": "{remote_dir}/lm_eval_configs"' in launch
    destinations = _spec(output)["extra_file_destinations"]
    work = site.work("job")
    assert destinations[str(work / "lm_eval_configs/gpqa_custom.yaml")] == (
        f"{remote_dir}/lm_eval_configs/gpqa_custom.yaml"
    )
    assert destinations[str(work / "lm_eval_configs/utils.py")] == (
        f"{remote_dir}/lm_eval_configs/utils.py"
    )
    assert not (site.root / "lustre").exists()


def test_a_remote_perf_sanity_run_with_accuracy_reads_its_custom_config_here(site: Site) -> None:
    import yaml

    config = site.repo / "tests/scripts/perf-sanity/disaggregated/deepseek_r1_2_nodes.yaml"
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    data["accuracy"]["enable_accuracy_test"] = True
    enabled = site.root / "deepseek_r1_enabled.yaml"
    enabled.write_text(yaml.safe_dump(data), encoding="utf-8")
    output = run_case(
        site, "perf_sanity_remote_slurm", partition="arm", perf_config_yaml=str(enabled),
        perf_test_name=None,
    )  # fmt: skip
    copy = yaml.safe_load(_text(output, "deepseek_r1_enabled.yaml"))
    custom = copy["accuracy"]["tasks"]["gpqa_custom"]["extra_kwargs"]["custom_config"]
    assert custom == str(site.repo / "tests/scripts/perf-sanity/lm_eval/gpqa_custom.yaml")
    assert "lm_eval_configs/gpqa_custom.yaml" in "".join(f.path for f in output.files)


def test_a_remote_custom_config_found_nowhere_is_refused_by_name(site: Site) -> None:
    import yaml

    config = site.repo / "tests/scripts/perf-sanity/disaggregated/deepseek_r1_2_nodes.yaml"
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    data["accuracy"]["tasks"]["gpqa_custom"]["extra_kwargs"]["custom_config"] = "/cluster/x.yaml"
    moved = site.root / "deepseek_r1_moved.yaml"
    moved.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(ResolveError) as caught:
        run_case(
            site, "eval_multi_node_perf_sanity_fallback", **REMOTE_FIELDS,
            perf_config_yaml=str(moved),
        )  # fmt: skip
    assert str(caught.value).startswith(
        "accuracy task 'gpqa_custom' has custom_config /cluster/x.yaml, which submit.py reads on "
        "this machine before the job goes to the cluster: there is no /cluster/x.yaml, a path "
        "neither under remote_repo_path nor on this machine"
    )
    assert not site.work("job").exists()


def test_a_one_node_eval_given_a_disaggregated_config_takes_the_perf_sanity_path(
    site: Site,
) -> None:
    """The seed: "Same fallback applies to disaggregated accuracy testing." tp 4 fits one node
    of partition arm (4 GPUs), yet the disaggregated config makes it a perf-sanity job."""
    import yaml

    output = _eval(
        site, "trtllm-eval --model deepseek-ai/DeepSeek-R1-0528 --tp_size 4 gsm8k",
        "deepseek_r1_2_nodes.yaml",
    )  # fmt: skip
    assert _flags(output)["--config-file"].endswith("/deepseek_r1_2_nodes_accuracy.yaml")
    data = yaml.safe_load(_text(output, "deepseek_r1_2_nodes_accuracy.yaml"))
    assert data["accuracy"]["enable_accuracy_test"] is True
    trail = {e.field: (e.value, e.source) for e in output.job.trail}
    assert trail["category"] == (
        "perf_sanity",
        "disaggregated accuracy testing takes the perf-sanity path, as a multi-node eval does",
    )
    assert "#SBATCH --nodes=2\n" in _text(output, "slurm_launch.sh")


def test_a_disaggregated_eval_on_docker_is_refused(site: Site) -> None:
    with pytest.raises(ResolveError) as caught:
        _generate(
            site, workflow_type="eval", perf_config_yaml=DISAGG + "deepseek_r1_2_nodes.yaml",
            eval_cmd="trtllm-eval --model deepseek-ai/DeepSeek-R1-0528 --tp_size 4 gsm8k",
            **DOCKER,
        )  # fmt: skip
    assert "is a disaggregated config: disaggregated accuracy testing goes through the " in str(
        caught.value
    )


def test_a_one_node_eval_says_its_aggregated_config_is_not_used(site: Site) -> None:
    output = _eval(
        site, "trtllm-eval --model meta-llama/Llama-3.1-8B-Instruct --tp_size 2 gsm8k", AGGR,
    )  # fmt: skip
    assert not output.submit_argv
    assert any(
        "llama_8b_aggr.yaml is not used: the eval fits one node (world_size 2) and the config "
        "is aggregated" in w
        for w in output.job.warnings
    )


@pytest.mark.parametrize("persistent", [None, True])
def test_a_job_whose_launch_script_submit_py_wrote_never_runs_in_an_allocation(
    site: Site, persistent: bool | None
) -> None:
    """The eval fallback runs submit.py's launch script, which cancels ${SLURM_JOB_ID} on
    failure: its category writes that into job_spec.json, and run submits it with sbatch even
    when job_spec.json or `--persistent` asks for an allocation (before, only a job whose
    workflow_type was perf_sanity was kept out, and an eval fallback ran inside one)."""
    from scriptast.executor.job_files import load_job
    from scriptast.executor.launch.submit import choice_of, dry_run_commands
    from scriptast.executor.options import RunOptions
    from scriptast.schedulers.slurm.launcher import uses_allocation

    output = _fallback(site, "deepseek_r1_2_nodes.yaml")
    write_outputs(output)
    job = load_job(str(site.work("job")))
    assert job.spec.workflow_type == "eval" and job.spec.persistent_mode
    assert job.spec.allocation_refused is not None
    assert "cancels ${SLURM_JOB_ID} on failure" in job.spec.allocation_refused
    options = RunOptions(persistent=persistent)
    assert not uses_allocation(job, choice_of(job, options))
    assert [argv[0] for argv in dry_run_commands(job, options)] == ["sbatch"]


def test_a_perf_sanity_job_spec_of_an_older_scriptast_still_stays_out_of_allocations() -> None:
    import msgspec

    from scriptast.contract.job_spec import LAUNCH_SCRIPT_CANCELS, JobSpec

    snapshot = Path(__file__).resolve().parent.parent / "snapshots/test_categories"
    data = json.loads((snapshot / "perf_sanity_local_slurm-job_spec.json").read_text())
    del data["allocation_refused"]  # as an older scriptast wrote it
    older = msgspec.json.decode(json.dumps(data), type=JobSpec)
    assert older.allocation_refused == LAUNCH_SCRIPT_CANCELS
    bench = json.loads((snapshot / "bench_tp2_prepare-job_spec.json").read_text())
    assert msgspec.json.decode(json.dumps(bench), type=JobSpec).allocation_refused is None
