"""resolve(request): apply every rule of SPEC §2 in order and return one frozen ResolvedJob."""

from __future__ import annotations

import posixpath
from pathlib import Path

from scriptast.builders import model_name as names
from scriptast.builders import slurm_params
from scriptast.builders.arch import resolve_arch
from scriptast.builders.common import WHEEL_GLOB
from scriptast.builders.file_names import check_component, is_safe_component
from scriptast.builders.image import resolve_image
from scriptast.builders.job import (
    SUFFIXES,
    Category,
    PerfPlan,
    ResolvedJob,
    SlurmParams,
    TrailEntry,
    UserCommand,
)
from scriptast.builders.model_path import find_model_dir, is_hf_id
from scriptast.builders.mounts import local_home, plan_mounts, remote_home
from scriptast.builders.parallelism import (
    Parallelism,
    Sourced,
    bench_parallelism,
    check_positive,
    custom_parallelism,
    eval_parallelism,
    pytest_parallelism,
    split_bench,
)
from scriptast.builders.request import ExecutionScenario, Request, WorkflowType
from scriptast.builders.slurm_env import LoadedSlurmEnv, Partition, load_slurm_env
from scriptast.errors import ResolveError
from scriptast.node import IDENTIFIER
from scriptast.readers.shellwords import as_simple, tokenize

SUBMIT_PY = "jenkins/scripts/perf/local/submit.py"
EVAL_REQUIREMENTS = "examples/trtllm-eval/requirements.txt"
RUN_SCRIPT = "slurm_run_custom.sh"
_COMMAND_FIELD = {
    WorkflowType.pytest: "test_cmd",
    WorkflowType.eval: "eval_cmd",
    WorkflowType.bench: "bench_cmd",
}


class _Trail:
    def __init__(self) -> None:
        self.entries: list[TrailEntry] = []
        self.warnings: list[str] = []

    def add(self, field: str, value: object, source: str) -> None:
        self.entries.append(TrailEntry(field=field, value=str(value), source=source))


def user_command(text: str, what: str) -> UserCommand:
    """A command string, typed as argv when it is plain."""
    simple = as_simple(tokenize(text, what))
    if simple is None:
        return UserCommand(text=text)
    return UserCommand(text=text, argv=simple.argv, redirects=simple.redirects)


def parse_custom_env(text: str | None) -> tuple[tuple[str, str], ...]:
    """Space-separated KEY=VALUE pairs, split as the shell would (quotes group)."""
    if not text:
        return ()
    pairs = []
    for token in tokenize(text, "custom_env"):
        if token.kind != "word":
            raise ResolveError(
                f"custom_env has a shell operator {token.value!r}: give KEY=VALUE pairs"
            )
        key, equals, value = token.value.partition("=")
        if not equals:
            raise ResolveError(
                f"custom_env entry {token.value!r} has no '=': give space-separated KEY=VALUE pairs"
            )
        if not IDENTIFIER.match(key):
            raise ResolveError(
                f"custom_env key {key!r} is not a shell identifier ([A-Za-z_][A-Za-z0-9_]*)"
            )
        pairs.append((key, value))
    return tuple(pairs)


def _require_file(path: str | None, field: str) -> str:
    if not path:
        raise ResolveError(f"{field} is required here (--{field.replace('_', '-')})")
    if not Path(path).is_file():
        raise ResolveError(f"{field} {path} does not exist or is not a file")
    return path


def _is_perf_sanity_pytest(request: Request) -> bool:
    text = request.test_cmd or ""
    return "perf-sanity" in text or "perf_sanity" in text or bool(request.perf_config_yaml)


def resolve(
    request: Request, *, machine: str | None = None, home: str | None = None
) -> ResolvedJob:
    """Every rule of SPEC §2; raises ResolveError (or InputError) with the seed's texts."""
    trail = _Trail()
    scenario = request.execution_scenario
    workflow = request.workflow_type
    is_slurm = scenario is not ExecutionScenario.local_docker
    remote = scenario is ExecutionScenario.remote_slurm
    for field in ("required_devices", "node_count"):
        check_positive(getattr(request, field), field)

    command_field = _COMMAND_FIELD.get(workflow)
    if command_field and not getattr(request, command_field):
        raise ResolveError(f"{command_field} is required for workflow_type {workflow.value}")
    if workflow is WorkflowType.custom and not (request.custom_cmd or request.custom_script):
        raise ResolveError("custom_cmd or custom_script is required for workflow_type custom")
    if workflow is WorkflowType.custom and request.custom_cmd and request.custom_script:
        raise ResolveError("give custom_cmd or custom_script, not both")

    category: Category = workflow.value
    if workflow is WorkflowType.pytest and _is_perf_sanity_pytest(request):
        category = "perf_sanity"
    if category == "perf_sanity" and not is_slurm:
        raise ResolveError("perf_sanity (benchmark) jobs need Slurm: local_docker is not supported")

    if not Path(request.repo_root).is_dir():
        raise ResolveError(
            f"repo_root {request.repo_root} is not a directory: give the TensorRT-LLM checkout "
            "on this machine (--repo-root)"
        )
    loaded: LoadedSlurmEnv | None = None
    partition: Partition | None = None
    if is_slurm:
        partition_name = slurm_params.require(request.partition, "partition", scenario.value)
        account = slurm_params.require(request.account, "account", scenario.value)
        loaded = load_slurm_env(request.slurm_env_file, scenario.value)
        partition = slurm_params.find_partition(loaded.env, partition_name)
        slurm_params.check_account(loaded.env, account)
        trail.add("partition", partition_name, "input partition (validated in slurm_env)")
        trail.add("account", account, "input account")

    if remote:
        for field in ("remote_repo_path", "remote_work_dir"):
            if not getattr(request, field):
                raise ResolveError(
                    f"remote_slurm needs {field} (from trtllm-case-executor); "
                    "scriptast never computes or defaults it"
                )
    project = request.remote_repo_path if remote else request.repo_root
    log_dir = request.remote_work_dir if remote else request.work_dir
    assert project is not None and log_dir is not None
    if is_slurm and "\\" in log_dir:
        field = "remote_work_dir" if remote else "work_dir"
        raise ResolveError(
            f"{field} {log_dir!r} holds a backslash, which turns off Slurm's %-patterns (%j "
            "too) in the log file names; use a path without a backslash"
        )
    trail.add("project_path", project, "input remote_repo_path" if remote else "input repo_root")
    trail.add("log_dir", log_dir, "input remote_work_dir" if remote else "input work_dir")

    arch = resolve_arch(scenario, partition, loaded.env if loaded else None, machine)
    trail.add("arch", arch.name, arch.source)
    image = resolve_image(request.container_image, request.repo_root, arch.name, squashfs=is_slurm)
    trail.add("docker_image", image.canonical, image.source)

    if not request.llm_models_root:
        raise ResolveError(
            "llm_models_root is required: pass the models root inside the container "
            "(--llm-models-root); scriptast does not invent a default"
        )
    if not request.llm_models_root.startswith("/"):
        raise ResolveError(f"llm_models_root {request.llm_models_root!r} must be an absolute path")
    trail.add("llm_models_root", request.llm_models_root, "input llm_models_root")

    custom_script, custom_script_local = _custom_script(request, log_dir)
    env = loaded.env if loaded else None
    if remote:
        home_dir, home_source = remote_home(env.remote_cwd if env else None, request.remote_home)
    else:
        home_dir, home_source = home or local_home(), "$HOME"
    trail.add("home", home_dir, home_source)
    _check_local_models(request, trail)
    plan = plan_mounts(
        llm_models_root=request.llm_models_root,
        home=home_dir,
        project=project,
        checkpoint_path=request.checkpoint_path,
        models_path=request.models_path,
        slurm_env_mounts=env.mounts if env else None,
        default_models_repo=request.env_check.default_models_repo if request.env_check else None,
        extra_folders=_custom_folders(request, custom_script, log_dir),
    )
    trail.add(
        "models_host_path", plan.models_host_path or "(from slurm_env.mounts)", plan.models_source
    )
    trail.add(
        "container_mounts",
        ",".join(f"{m.source}:{m.target}" for m in plan.mounts),
        "models, home, project" + (", custom_script folder" if custom_script else ""),
    )

    per_node = slurm_params.gpus_per_node(partition, request.env_check)
    fields: dict[str, object] = {}
    derived_name: str | None = None
    perf: PerfPlan | None = None
    par: Parallelism

    if category == "perf_sanity":
        par, perf, derived_name = _perf_sanity(request, trail)
    elif workflow is WorkflowType.pytest:
        assert request.test_cmd is not None
        par, fields["test_workdir"], derived_name = _pytest(request, project, per_node, trail)
        fields["test"] = user_command(request.test_cmd, "test_cmd")
    elif workflow is WorkflowType.eval:
        assert request.eval_cmd is not None
        par, per_node = eval_parallelism(request.eval_cmd, per_node)
        if par.multi_node_eval and not is_slurm:
            raise ResolveError(
                f"eval world_size = {par.world_size} needs {par.nodes} nodes (gpus_per_node = "
                f"{per_node.value if per_node else '?'}), but local_docker runs on this one "
                "machine and trtllm-eval is single-node; run it on Slurm (local_slurm or "
                "remote_slurm), where it goes through the perf-sanity path"
            )
        if par.multi_node_eval:
            perf = _eval_fallback(request, par, per_node, trail)
            category = "perf_sanity"
        else:
            fields["eval"] = _eval_command(request.eval_cmd, plan.models_host_path, request, trail)
            fields["eval_requirements"] = (Path(request.repo_root) / EVAL_REQUIREMENTS).is_file()
        derived_name = names.from_model_flag(request.eval_cmd, "eval_cmd")
    elif workflow is WorkflowType.bench:
        assert request.bench_cmd is not None
        par = bench_parallelism(request.bench_cmd, per_node)
        if par.ep.value > 1 and par.tp.value % par.ep.value:
            trail.warnings.append(
                f"bench_cmd asks for --ep {par.ep.value} with --tp {par.tp.value}: TRT-LLM "
                "splits the tensor-parallel ranks into expert-parallel groups (ep must divide "
                f"tp), so the job gets {par.world_size} GPU(s) and trtllm-bench will refuse "
                f"it; did you mean --tp {par.ep.value} --ep {par.ep.value}?"
            )
        prepare, run = split_bench(request.bench_cmd)
        fields["bench_prepare"] = user_command(prepare, "bench_cmd") if prepare else None
        fields["bench_run"] = user_command(run, "bench_cmd")
        trail.add("bench_prepare", prepare or "(none)", "bench_cmd before the top-level &&")
        trail.add("bench_run", run, "bench_cmd after the top-level &&" if prepare else "bench_cmd")
        derived_name = names.from_model_flag(request.bench_cmd, "bench_cmd")
    else:
        par = custom_parallelism(request.required_devices, request.node_count, per_node)
        if custom_script:
            script_path = custom_script
            fields["custom"] = UserCommand(text=f"bash {script_path}", argv=("bash", script_path))
        else:
            assert request.custom_cmd is not None
            fields["custom"] = UserCommand(text=request.custom_cmd)
            derived_name = names.from_model_flag(request.custom_cmd, "custom_cmd")
        fields["custom_env"] = parse_custom_env(request.custom_env)
        fields["custom_script_local"] = custom_script_local
        fields["custom_run_script_local"] = posixpath.join(request.work_dir, RUN_SCRIPT)
        fields["custom_run_script"] = posixpath.join(log_dir, RUN_SCRIPT)
        derived_name = derived_name or "custom"

    for name, value in (
        ("tp", par.tp),
        ("pp", par.pp),
        ("ep", par.ep),
        ("required_devices", par.required_devices),
    ):
        trail.add(name, value.value, value.source)
    trail.add(
        "world_size",
        par.world_size,
        "tp * pp"
        if category in ("eval", "bench")
        else (par.ranks_source or "one task")
        if category == "pytest"
        else "required_devices",
    )

    if request.model_name:
        model = request.model_name
        source = "input model_name"
        if not is_safe_component(model):
            model = names.normalize_model_name(request.model_name)
            if not model:
                raise ResolveError(
                    f"model_name {request.model_name!r} has no letter or digit, so it names no "
                    "file: give a --model-name such as llama_3_1_8b"
                )
            source = f"input model_name {request.model_name!r}, made a safe file name"
            trail.warnings.append(
                f"model_name {request.model_name!r} is not a safe file name; {model!r} is used"
            )
        trail.add("model_name", model, source)
    else:
        model = derived_name or workflow.value
        trail.add(
            "model_name",
            model,
            f"derived ({'default' if not derived_name else 'from the command'})",
        )
    # the longest names made from it: `<job>_<job id>.out` and `<job>.slurm`
    job_name = check_component(
        f"{model}_{SUFFIXES[category]}", "job name (model_name + suffix)", reserve=16
    )
    trail.add("job_name", job_name, "model_name + workflow suffix")

    slurm: SlurmParams | None = None
    if is_slurm:
        assert request.partition and request.account
        limit, limit_source = slurm_params.time_limit(request.time_limit, partition)
        trail.add("time_limit", limit, limit_source)
        plugin, plugin_source = slurm_params.mpi_plugin(env, arch.pmix_trusted)
        gres_value = None
        if category != "perf_sanity":
            trail.add("mpi_plugin", plugin, plugin_source)
            per_node_need = (
                par.required_devices.value if category == "pytest" else par.ntasks_per_node
            )
            gres_value = f"gpu:{per_node_need}" if slurm_params.uses_gres(partition) else None
            gres_source = f"partition gres {partition.gres if partition else None}"
            trail.add("gres", gres_value or "(none)", gres_source)
            trail.add("nodes", par.nodes, "single node")
            pytest_tasks = "MPI ranks, as TRT-LLM's CI runs such tests" if par.ntasks > 1 else "1"
            trail.add("ntasks", par.ntasks, pytest_tasks if category == "pytest" else "world_size")
        slurm = SlurmParams(
            partition=request.partition,
            account=request.account,
            time_limit=limit,
            nodes=par.nodes,
            ntasks=par.ntasks,
            ntasks_per_node=par.ntasks_per_node,
            gpus_per_node=per_node.value if per_node else None,
            gres=gres_value,
            mpi_plugin=plugin,
        )
    if per_node is not None:
        trail.add("gpus_per_node", per_node.value, per_node.source)

    persistent = None
    if scenario is ExecutionScenario.local_slurm:
        persistent = True if request.persistent_mode is None else request.persistent_mode
        trail.add(
            "persistent_mode",
            persistent,
            "input" if request.persistent_mode is not None else "default",
        )
    install = request.install and not remote
    if request.wheel_path and request.install_mode != "wheel":
        raise ResolveError("wheel_path is used by --install-mode wheel; add --install-mode wheel")
    if install:
        how = request.wheel_path or f"the first {WHEEL_GLOB}"
        shown = f"wheel ({how})" if request.install_mode == "wheel" else "source (pip install -e .)"
        trail.add("install_mode", shown, "input" if request.install_mode != "source" else "default")
    trail.add(
        "install",
        install,
        "off for remote_slurm" if remote else ("input" if not request.install else "default"),
    )

    return ResolvedJob(
        request=request,
        category=category,
        workflow=workflow,
        scenario=scenario,
        model_name=model,
        job_name=job_name,
        work_dir=request.work_dir,
        log_dir=log_dir,
        project_path=project,
        repo_root=request.repo_root,
        image=image.canonical,
        image_enroot=image.enroot,
        mounts=plan.mounts,
        models_host_path=plan.models_host_path,
        llm_models_root=request.llm_models_root,
        required_devices=par.required_devices.value,
        world_size=par.world_size,
        tp=par.tp.value,
        pp=par.pp.value,
        ep=par.ep.value,
        install=install,
        slurm=slurm,
        persistent_mode=persistent,
        slurm_env_raw=loaded.raw if loaded else None,
        perf=perf,
        warnings=tuple(trail.warnings),
        trail=tuple(trail.entries),
        **fields,  # type: ignore[arg-type]
    )


def _pytest(
    request: Request, project: str, per_node: Sourced | None, trail: _Trail
) -> tuple[Parallelism, str | None, str | None]:
    """The pytest rule: GPUs and MPI ranks, the largest over every selected test; what the
    command selects that cannot be read falls back to required_devices (else 1)."""
    from scriptast.builders.pytest_devices import Need, read_needs
    from scriptast.builders.pytest_selection import read_selection, run_folder

    assert request.test_cmd is not None
    selection = read_selection(request.test_cmd, request.repo_root)
    devices: list[Need] = []
    ranks: list[Need] = []
    for located in selection.files:
        trail.add("test_file", located.path, f"test path in test_cmd ({located.form})")
        needs = read_needs(located.path, located.target)
        devices += [needs.devices] if needs.devices else []
        ranks += [needs.ranks] if needs.ranks else []
    found = max(devices, key=lambda n: n.count) if devices else None
    file_devices = Sourced(found.count, found.source) if found else None
    if selection.uninspected:
        given = request.required_devices
        fallback = Sourced(given or 1, "input required_devices" if given else "default")
        what = ", ".join(selection.uninspected)
        trail.warnings.append(
            f"test_cmd selects tests scriptast cannot read ({what}); required_devices = "
            f"{fallback.value} ({fallback.source})"
            + (f", or {found.count} from the files it names" if found else "")
            + " is used: pass --required-devices if the selected tests need more"
        )
        if file_devices is None or fallback.value > file_devices.value:
            file_devices = fallback
    elif not selection.files:
        raise ResolveError(
            f"test_cmd {request.test_cmd!r} names no test file (a path ending in .py) "
            "and selects no test"
        )
    rank_need = max(ranks, key=lambda n: n.count) if ranks else None
    par = pytest_parallelism(
        file_devices,
        request.required_devices,
        request.node_count,
        per_node,
        Sourced(rank_need.count, rank_need.source) if rank_need else None,
    )
    if par.world_size > 1 and request.execution_scenario is ExecutionScenario.local_docker:
        raise ResolveError(
            f"{par.ranks_source} needs {par.world_size} MPI ranks, and local_docker runs one "
            "process; run it on Slurm (local_slurm or remote_slurm), where each rank is a task"
        )
    folder = run_folder(selection, request.repo_root)
    workdir = None if folder is None else posixpath.join(project, folder).rstrip("/")
    names_of = selection.files[0].target.names if selection.files else ()
    return par, workdir, names.from_test(names_of)


def _custom_script(request: Request, log_dir: str) -> tuple[str | None, str | None]:
    """(the path the job runs, the local file to copy there or None). remote_slurm: a script
    that exists here travels to remote_work_dir; any other is a path on the cluster."""
    path = request.custom_script
    if not path:
        return None, None
    if request.execution_scenario is not ExecutionScenario.remote_slurm:
        return _require_file(path, "custom_script"), None
    if Path(path).is_file():
        return posixpath.join(log_dir, posixpath.basename(path)), path
    return path, None


def _check_local_models(request: Request, trail: _Trail) -> None:
    """A models path on this machine that does not exist: docker cannot mount it; a Slurm
    node may still have it, so there it is a warning."""
    if request.execution_scenario is ExecutionScenario.remote_slurm:
        return
    for field in ("models_path", "checkpoint_path"):
        value = getattr(request, field)
        if not value or Path(value).exists():
            continue
        if request.execution_scenario is ExecutionScenario.local_docker:
            raise ResolveError(f"{field} {value} does not exist; docker cannot mount it")
        trail.warnings.append(
            f"{field} {value} does not exist on this machine; the job's nodes must have it"
        )


def _custom_folders(
    request: Request, custom_script: str | None, log_dir: str
) -> tuple[tuple[str, str], ...]:
    """Custom jobs also need the custom script's folder and the run script's folder mounted."""
    if request.workflow_type is not WorkflowType.custom:
        return ()
    folders = [(log_dir, "work directory (holds slurm_run_custom.sh)")]
    if custom_script:
        folders.insert(0, (posixpath.dirname(custom_script), "custom_script folder"))
    return tuple(folders)


def _submit_py(request: Request) -> str:
    return _require_file(str(Path(request.repo_root) / SUBMIT_PY), "submit.py")


def _perf_sanity(request: Request, trail: _Trail) -> tuple[Parallelism, PerfPlan, str]:
    """perf_sanity: submit.py derives every Slurm parameter from the config's hardware section."""
    submit = _submit_py(request)
    one = Sourced(1, "derived by submit.py from the config")
    par = Parallelism(one, 1, one, one, Sourced(0, "submit.py"), 1, 1, 1)
    if request.perf_config_yaml:
        config = _require_file(request.perf_config_yaml, "perf_config_yaml")
        trail.add("perf_config_yaml", config, "input perf_config_yaml")
        return (
            par,
            PerfPlan(submit_py=submit, config_file=config, test_name=request.perf_test_name),
            names.from_config(config),
        )
    if request.workflow_type is WorkflowType.pytest and request.test_cmd:
        from scriptast.builders.pytest_selection import find_test_target

        target = find_test_target(request.test_cmd)
        test_list = "::".join([target.path, *target.names]) + (
            f"[{target.param_id}]" if target.param_id else ""
        )
        trail.add("test_list", test_list, "perf-sanity test id in test_cmd")
        model = names.normalize_model_name(target.param_id or "") or "perf_sanity"
        return par, PerfPlan(submit_py=submit, test_list=test_list), model
    raise ResolveError(
        "perf_config_yaml is required for workflow_type perf_sanity (--perf-config-yaml)"
    )


def _eval_fallback(
    request: Request, par: Parallelism, per_node: Sourced | None, trail: _Trail
) -> PerfPlan:
    """Multi-node eval: not a Category 5 script but the perf-sanity path with accuracy on."""
    if not request.perf_config_yaml:
        raise ResolveError(
            f"eval world_size = {par.world_size} needs {par.nodes} nodes (gpus_per_node = "
            f"{per_node.value if per_node else '?'}), but trtllm-eval is single-node only; pass "
            "--perf-config-yaml to run it through the perf-sanity path with "
            "accuracy.enable_accuracy_test: true"
        )
    config = _require_file(request.perf_config_yaml, "perf_config_yaml")
    trail.add("category", "perf_sanity", f"eval over {par.nodes} nodes falls back to perf-sanity")
    return PerfPlan(
        submit_py=_submit_py(request),
        config_file=config,
        test_name=request.perf_test_name,
        accuracy=True,
    )


def _eval_command(
    eval_cmd: str, models_host: str | None, request: Request, trail: _Trail
) -> UserCommand:
    """eval_cmd with a HuggingFace `--model` rewritten to its directory under llm_models_root."""
    command = user_command(eval_cmd, "eval_cmd")
    argv = list(command.argv or ())
    for index, word in enumerate(argv):
        inline = word.startswith("--model=")
        if word != "--model" and not inline:
            continue
        value_index = index if inline else index + 1
        if value_index >= len(argv):
            break
        value = argv[value_index].removeprefix("--model=")
        if not is_hf_id(value):
            continue
        relative = find_model_dir(models_host, value) if models_host else None
        if relative is None:
            trail.warnings.append(
                f"model {value!r} was not found under the models host path "
                f"{models_host or '(unknown)'} (depth <= 3); trtllm-eval will try to download it"
            )
            continue
        local = posixpath.join(request.llm_models_root or "/", relative)
        argv[value_index] = f"--model={local}" if inline else local
        trail.add("eval --model", local, f"HF id {value} found under {models_host}")
    if command.argv is None:
        if "--model" in eval_cmd:
            trail.warnings.append("eval_cmd is not a plain command; its --model was not rewritten")
        return command
    return UserCommand(text=eval_cmd, argv=tuple(argv), redirects=command.redirects)
