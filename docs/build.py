"""Writes docs/guide.md and docs/job_spec.md from the examples and the types, so they cannot
drift from what scriptast does: `python docs/build.py` (a test checks the files are current)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SHOWN = "/path/to/scriptast"

SCENARIOS = {
    "local_slurm": "Slurm on the cluster this machine submits to",
    "remote_slurm": "Slurm on a remote cluster: remote paths in the script",
    "local_docker": "a local docker host",
}
FIELDS = {
    "workflow_type": "The request's workflow: pytest, eval, bench, custom or perf_sanity.",
    "model_name": "Short model name (the request's, or derived from the command or test).",
    "execution_scenario": "local_docker, local_slurm or remote_slurm (or a scenario a registered "
    "scheduler backend adds).",
    "docker_image": "The image in its canonical `registry/path:tag` form.",
    "script_path": "LOCAL path of the script to submit (absent for local_docker).",
    "script_name": "File name of that script (`docker_cmd.sh` for local_docker).",
    "log_file_pattern": "Name of the job's stdout log, `%j` standing for the job id.",
    "success_patterns": "Strings whose presence in the log means success.",
    "failure_patterns": "Strings whose presence in the log means failure.",
    "extra_files": "Other files the executor must transfer (slurm_run_custom.sh, configs).",
    "extra_file_destinations": "remote_slurm perf_sanity: the cluster path each extra file "
    "belongs at (what submit.py wrote under the cluster work dir, collected into work_dir).",
    "slurm_params": "partition, account, time_limit, nodes, ntasks, ntasks_per_node, "
    "gpus_per_node, gres (null when the partition has none) and mpi_plugin.",
    "slurm_env": "The slurm_env.json object, verbatim, unknown keys included.",
    "remote_repo_path": "remote_slurm only: the checkout on the cluster, echoed verbatim.",
    "remote_work_dir": "remote_slurm only: the work directory on the cluster, echoed verbatim.",
    "persistent_mode": "local_slurm with persistent mode only: true.",
    "allocation_refused": "Why the job never runs inside a persistent allocation, in its "
    "category's words (perf_sanity: its launch script cancels `${SLURM_JOB_ID}` on failure).",
    "container_name": "local_slurm with persistent mode only: the pyxis container name.",
    "container_mounts": "local_slurm with persistent mode only: the pyxis mount list.",
    "docker_cmd": "local_docker only: the docker command (as in docker_cmd.sh).",
    "log_file": "local_docker only: `<work_dir>/<model>_local.log`.",
    "work_dir": "The local work directory the files are written in (the request's work_dir).",
    "repo_root": "The local TensorRT-LLM checkout (the request's repo_root).",
    "node_count": "Slurm only: the nodes the job runs on (slurm_params.nodes).",
    "scenario": "The execution_scenario again, under the name trtllm-case-executor dispatches on "
    "and the exec-* skills read.",
    "device_type": "The GPU type the request asks for (recorded; run stores it with the results, "
    "and a references file's entries may be keyed by it). Omitted when not given.",
    "container_image": "The image the caller gave, as it gave it (trtllm-case-executor stores the "
    "canonical `registry/path:tag` and the builder keeps it), else docker_image; an image "
    "case-executor wrote into work_dir's job_spec.json before the emit is the one used. The "
    "script gives pyxis its `registry#path:tag` form.",
    "scheduler": "The scheduler backend that queues the job: slurm or docker (from "
    "execution_scenario).",
    "transport": "How that scheduler is reached: local, or ssh (remote_slurm: the job's files "
    "live on the cluster).",
    "logs": "The files the job's output goes to, as the scheduler names them (`output`, "
    "`error` when apart, `job_name` for `%x`): absolute paths where the job runs, `%j` "
    "standing for the job id.",
    "measures": "What the job measures and where run finds it: `kind` (bench, eval, pytest, "
    "perf_sanity), the model and its quantization (the accuracy references are looked up by "
    "them), the eval `tasks` and `num_samples`, the `junit` and `report_json` files the job "
    "writes and the `result_glob` of perf_sanity's client logs (paths where it runs), the "
    "`references` file and `gpu_type`. Absent: the job is judged by its success patterns.",
    "setup": "What the job's figures are compared by in the results store: `gpus` (the GPUs it "
    "asked for in all: `--gres` per node times the nodes, or a docker job's devices), "
    "`gpus_per_node` (the partition's node size), `tp`, `pp`, `ep`.",
    "hang_pattern": "The request's hang pattern (a regular expression), when it gave one.",
    "monitor_timeout_seconds": "trtllm-case-executor's wall-clock limit for the executors: emit "
    "keeps the one work_dir's job_spec.json holds (a number of seconds above 0) on every "
    "re-emit.",
    "files": "`{name: sha256}` of every file written with job_spec.json (which is written "
    "last, under a lock on work_dir): a file whose digest differs belongs to another emit, "
    "so an executor can tell a torn set after a kill -9.",
    "array": "`emit --requests FILE --array` only: the job array the job is a task of "
    "(`script`, the array's batch script beside the sweep file, with its `script_sha256`, job "
    "`name` and `limit`), its `index` there, the task's `output` and `error` (the array's, in "
    "its folder: `%A` the array's job id, `%a` the index) and the sweep file's sha256 "
    "(`sweep`). The work dir's own script still runs the job alone.",
    "processes": "`emit --requests FILE --array` only, a docker job: it is one of the "
    "sweep's processes (docker has no job arrays), its group `name`, its `index` there, how "
    "many of them run at once (`limit`: `--array-limit`, else 1) and the sweep file's sha256 "
    "(`sweep`). Its container is named for its sweep line, so that they run side by side.",
}

RUN_READS = {
    "execution_scenario": "Recorded in run.json.",
    "scheduler": "sbatch and squeue (slurm), or docker_cmd.sh as a process (docker).",
    "transport": "ssh: the script and extra files are uploaded, commands run over one ssh "
    "master, and the logs are brought back.",
    "logs": "The files it follows and judges (on the cluster for ssh, then copied back).",
    "script_path": "The script it submits.",
    "script_name": "The script, when script_path is absent (local_docker).",
    "success_patterns": "A job that measures nothing: exit 0 with none of them in the log is "
    "INCONCLUSIVE.",
    "failure_patterns": "Listed with their lines as evidence; never the verdict.",
    "slurm_params": "time_limit sets the default timeouts; partition, account, nodes, "
    "ntasks_per_node and gres shape and match a persistent allocation.",
    "slurm_env": "The partition's time limit: a new persistent allocation's length; `user` "
    "(the cluster must log in as it) and `ssh_host` or `probe.host` for remote_slurm.",
    "extra_files": "remote_slurm: uploaded with the script, each digest-checked on the cluster.",
    "extra_file_destinations": "remote_slurm: where each extra file goes on the cluster "
    "(default: remote_work_dir); a place outside remote_work_dir and remote_repo_path is "
    "refused.",
    "remote_repo_path": "remote_slurm: must exist on the cluster before the job is submitted.",
    "remote_work_dir": "remote_slurm: created on the cluster; the script goes there.",
    "persistent_mode": "true: run inside a persistent allocation (`--no-persistent` overrides).",
    "allocation_refused": "Set: submitted with sbatch whatever persistent_mode or --persistent "
    "say, and the record says why.",
    "docker_cmd": "Its `--name`: the one container `cancel` and Ctrl-C kill.",
    "log_file": "Where docker_cmd.sh's output goes.",
    "files": "Each digest is checked before submitting; a mismatch is refused (`--force`).",
    "array": "The tasks given of one array are submitted with one sbatch (`--array` names "
    "their indices and limit), once the array script's sha256 is checked; each task is "
    "followed as `ARRAY_INDEX` in the shared poll, its logs read where the array writes them "
    "(and linked into its work dir as `<job>_ARRAY_INDEX.out`), and `cancel` cancels that task "
    "alone (the tasks of one array given together: one scancel). `--array-task 3` (or "
    "`0-4`, `1,3`) runs only the tasks of those indices, of the work dirs given or of an "
    "array script named in its folder's arrays.json. `--persistent` is refused for a task.",
    "processes": "Of the work dirs given, at most `limit` of one group run at once: the rest "
    "start as one ends (in the order given), the table keeps that order, and a stop (Ctrl-C, "
    "a timeout) starts no more, naming those never started. `--detach` is refused when some "
    "would wait, as only a run that stays can start them; `--array-task` selects by `index`.",
    "work_dir": "The folder the job belongs to: a job_spec.json in another folder (a copy, "
    "or a moved work dir) is refused, so it never runs, watches or cancels the original's job. "
    "The script, extra files and logs must lie inside it (remote logs inside remote_work_dir) "
    "unless `--force`.",
    "measures": "The figures and tests that judge the job instead of its success patterns: "
    "log lines read as they stream, the JUnit XML and --report_json read after it (brought "
    "back from the cluster), held against the references (`--reference`, else `references`).",
    "repo_root": "The accuracy references under tests/integration/defs/accuracy/references/.",
    "hang_pattern": "A log line it matches is a hang: the job is cancelled and judged HANG "
    "(absent: TRT-LLM's detector line, `Hang detected after N seconds`).",
    "monitor_timeout_seconds": "When present: how long the job may run before run cancels it "
    "(TIMEOUT), unless `--run-timeout` is given.",
}
"""What `scriptast run` does with each job_spec.json field it reads (a test checks the executor
reads each of them)."""
VERDICTS = {
    "HANG": "TRT-LLM's hang detector line (`Hang detected after N seconds`), or the "
    "request's `hang_pattern`, appeared in the log; the job (or, in a "
    "persistent allocation, its step) was cancelled",
    "TIMEOUT": "Slurm ended it at its time limit, or it outlived `--queue-timeout` / "
    "`--run-timeout` (default: the job's time limit + 10 minutes) and run cancelled it",
    "OUT_OF_MEMORY": "Slurm's state OUT_OF_MEMORY",
    "NODE_FAIL": "Slurm's state NODE_FAIL",
    "CANCELLED": "scancel from outside, `scriptast cancel`, or Ctrl-C / SIGTERM on `run`",
    "FAILED": "the job's exit code is not 0 (the code is in the result), or its JUnit report "
    "has a failed or errored test (the verdict names up to 20, with their first message lines)",
    "REGRESSED": "every step succeeded, but a figure falls outside its reference (an accuracy "
    "under the threshold upstream's accuracy_core.py computes from the repository's "
    "references, or a figure outside a references file's tolerances)",
    "INCONCLUSIVE": "exit code 0, but nothing shows the job did its work: an expected figure "
    "was never printed (it is named), the JUnit report or --report_json could not be read, "
    "every test was skipped or none ran; for a job that measures nothing, none of the success "
    "patterns was printed; or no exit code could be read at all",
    "PASSED": "exit code 0, and every expected figure printed and within its reference, every "
    "test that ran passed (a job that measures nothing: a success pattern in the log, or none "
    "to look for)",
}


def _emit(example: Path, site: Path) -> tuple[str, str]:
    script = shutil.which("scriptast") or str(Path(sys.executable).parent / "scriptast")
    env = {**os.environ, "HOME": "/home/alice"}
    out = subprocess.run(
        [script, "emit", "--request", f"examples/{example.name}", "--json"],
        cwd=site,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(out.stdout)
    text = Path(result["script"]).read_text(encoding="utf-8")
    shown = re.sub(r"_test-[0-9]{8}_[0-9]{6}", "_test-<timestamp>", text.replace(str(site), SHOWN))
    return shown, example.read_text(encoding="utf-8")


def guide() -> str:
    """Every workflow and scenario: the request, the command, and the script it makes."""
    from scriptast.builders.categories import CATEGORIES

    lines = [
        "# scriptast guide: every workflow and scenario",
        "",
        "Each section is made from a request in `examples/` (on the fixture TensorRT-LLM tree",
        "under `tests/fixtures/`), run from the repository root with",
        "`scriptast emit --request examples/NAME.json`. Paths are shown from",
        f"`{SHOWN}`, the home directory as `/home/alice`. `docs/build.py` writes this file.",
        "",
    ]
    with tempfile.TemporaryDirectory() as folder:
        site = Path(folder)
        shutil.copytree(ROOT / "examples", site / "examples")
        shutil.copytree(ROOT / "tests/fixtures", site / "tests/fixtures")
        for workflow, chosen in CATEGORIES.items():
            about = chosen.docs
            lines += [f"## {workflow}", "", about, ""]
            for scenario, where in SCENARIOS.items():
                example = ROOT / "examples" / f"{workflow}_{scenario}.json"
                if not example.exists():
                    continue
                text, request = _emit(example, site)
                lines += [
                    f"### {workflow} on {where}",
                    "",
                    f"`examples/{example.name}`:",
                    "",
                    "```json",
                    request.rstrip(),
                    "```",
                    "",
                    "makes:",
                    "",
                    "```bash",
                    text.rstrip(),
                    "```",
                    "",
                ]
    return "\n".join(lines + _verdicts()) + "\n"


def _verdicts() -> list[str]:
    from scriptast.contract.run_record import VERDICT_EXIT, Verdict

    lines = [
        "## Running a job: verdicts and exit codes",
        "",
        "`scriptast run WORK_DIR...` submits what emit wrote (after checking the digests in",
        "job_spec.json), streams the log, and ends with one verdict a job, the first of these",
        "that applies. Its exit code is the verdict's (several jobs: the first verdict in this",
        "order that any of them got); bad input (no or foreign job_spec.json, a torn set, sbatch",
        "refusing the script, no Slurm) is one `error:` line and exit 2. `run.json` in the",
        "work_dir records it all (`scriptast schema run`).",
        "",
        "| verdict | exit code | when |",
        "|---|---:|---|",
    ]
    lines += [f"| {v} | {VERDICT_EXIT[v]} | {VERDICTS[v.value]}. |" for v in Verdict]
    return [*lines, ""]


def job_spec() -> str:
    """Each job_spec.json field, its JSON type from the schema, and what it means."""

    from scriptast.contract.job_spec import JobSpec
    from scriptast.contract.schemas import json_schema

    schema = json_schema(JobSpec)
    props = schema["$defs"]["JobSpec"]["properties"]
    required = set(schema["$defs"]["JobSpec"].get("required", []))
    lines = [
        "# job_spec.json",
        "",
        "The manifest beside every script; an executor reads it to submit and watch the job.",
        "Fields in file order; `scriptast schema job-spec` prints the JSON Schema this table",
        "is made from (`docs/build.py`).",
        "",
        "The last column says what `scriptast run` does with the field; it reads no other.",
        "",
        "| field | type | always | meaning | `scriptast run` |",
        "|---|---|---|---|---|",
    ]
    for name, prop in props.items():
        kind = " or ".join(_kind(p) for p in prop.get("anyOf", [prop]))
        lines.append(
            f"| `{name}` | {kind} | {'yes' if name in required else 'no'} | {FIELDS[name]} | "
            f"{RUN_READS.get(name, '')} |"
        )
    return "\n".join(lines) + "\n"


def _kind(prop: dict[str, Any]) -> str:
    """A schema property's type as the table shows it: its JSON type, or its type's name."""
    return str(prop.get("type") or prop.get("$ref", "").split("/")[-1])


def main() -> None:
    (ROOT / "docs" / "guide.md").write_text(guide(), encoding="utf-8")
    (ROOT / "docs" / "job_spec.md").write_text(job_spec(), encoding="utf-8")


if __name__ == "__main__":
    main()
