"""resolve(request): the shared rules of SPEC §2 in order, the category's rule, one ResolvedJob."""

from __future__ import annotations

from pathlib import Path

import msgspec

from scriptast.builders.categories import category
from scriptast.builders.category import Category, HandOver, Resolution, SharedResolution
from scriptast.builders.request.caller_fields import per_node_disagreement, take_caller_fields
from scriptast.builders.request.fields import Request
from scriptast.builders.request.forwarded import SOURCE as FORWARDED_SOURCE, with_forwarded
from scriptast.builders.resolution import model_name as names, slurm_params
from scriptast.builders.resolution.arch import Arch, resolve_arch
from scriptast.builders.resolution.image import resolve_image
from scriptast.builders.resolution.job import ResolvedJob
from scriptast.builders.resolution.mounts import MountPlan, local_home, plan_mounts, remote_home
from scriptast.builders.resolution.parallelism import Sourced
from scriptast.builders.resolution.trail import Trail
from scriptast.builders.unused_fields import warn_unused
from scriptast.cluster.read_slurm_env import LoadedSlurmEnv, load_slurm_env
from scriptast.common.file_names import check_component, is_safe_component
from scriptast.contract.axes import SLURM, Placement, placement
from scriptast.contract.job_spec import SlurmParams
from scriptast.contract.slurm_env import Partition
from scriptast.errors import ResolveError
from scriptast.model.slurm_options import check_positive
from scriptast.plan.launch import WHEEL_GLOB


class _Place(msgspec.Struct, frozen=True, kw_only=True):
    """Where the job runs: the cluster's description and partition (None for docker), and the
    project and log folders as the job sees them."""

    loaded: LoadedSlurmEnv | None
    partition: Partition | None
    project: str
    log_dir: str


def resolve(
    request: Request, *, machine: str | None = None, home: str | None = None
) -> ResolvedJob:
    """Every rule of SPEC §2; raises ResolveError (or InputError) with the seed's texts."""
    trail = Trail()
    taken = with_forwarded(request)
    request, forwarded = taken.request, taken.taken
    for warning in taken.overruled:
        trail.warn(warning)
    request = _with_caller_fields(request, trail)
    where = placement(request.execution_scenario)
    chosen = _category(request, where)
    is_slurm = where.scheduler == SLURM
    if not Path(request.repo_root).is_dir():
        raise ResolveError(
            f"repo_root {request.repo_root} is not a directory: give the TensorRT-LLM checkout "
            "on this machine (--repo-root)",
            field="repo_root",
        )
    place = _place(request, where, trail, forwarded)
    env = place.loaded.env if place.loaded else None
    arch = resolve_arch(where, place.partition, env, machine)
    trail.add("arch", arch.name, arch.source)
    image = resolve_image(request.container_image, request.repo_root, arch.name, squashfs=is_slurm)
    image_source = _source("container_image", forwarded) if "container_image" in forwarded \
        else image.source  # fmt: skip
    trail.add("docker_image", image.canonical, image_source)
    models_root = _models_root(request, trail, forwarded)
    plan = _mounts(request, where, chosen, place, home, trail)
    facts = SharedResolution(
        request=request, placement=where, project=place.project, log_dir=place.log_dir,
        gpus_per_node=slurm_params.gpus_per_node(place.partition, request.env_check),
        models_host_path=plan.models_host_path)  # fmt: skip
    resolution = _resolution(chosen, facts, trail)
    chosen = category(resolution.work.category)
    _trail_parallelism(resolution, trail)
    warn_unused(request, resolution, trail)
    model = _model_name(request, resolution.derived_name, resolution.derived_source, trail)
    # the longest names made from it: `<job>_<job id>.out` and `<job>.slurm`
    job_name = check_component(
        f"{model}_{chosen.suffix}", "job name (model_name + suffix)", reserve=16
    )
    trail.add("job_name", job_name, "model_name + workflow suffix")
    slurm = _slurm(request, place, arch, resolution, trail) if is_slurm else None
    per_node = resolution.gpus_per_node
    if per_node is not None:
        trail.add("gpus_per_node", per_node.value, per_node.source)
    _warn_per_node(request, resolution, is_slurm, trail)
    persistent = _persistent(request, where, trail)
    install = _install(request, trail)
    par = resolution.parallelism
    return ResolvedJob(
        request=request,
        workflow=request.workflow_type,
        scenario=request.execution_scenario,
        placement=where,
        model_name=model,
        job_name=job_name,
        work_dir=request.work_dir,
        log_dir=place.log_dir,
        project_path=place.project,
        repo_root=request.repo_root,
        image=image.canonical,
        image_enroot=image.enroot,
        mounts=plan.mounts,
        models_host_path=plan.models_host_path,
        llm_models_root=models_root,
        required_devices=par.required_devices.value,
        world_size=par.world_size,
        tp=par.tp.value,
        pp=par.pp.value,
        ep=par.ep.value,
        install=install,
        work=resolution.work,
        slurm=slurm,
        persistent_mode=persistent,
        cluster=place.loaded,
        warnings=tuple(trail.warnings),
        trail=tuple(trail.entries),
    )


def _resolution(chosen: Category, facts: SharedResolution, trail: Trail) -> Resolution:
    """The category's rule; when it hands the job over, the other category's."""
    made = chosen.resolve(facts, trail)
    if not isinstance(made, HandOver):
        return made
    taker = category(made.to)
    if taker.take_over is None:
        raise ResolveError(f"category {chosen.name} hands the job to {made.to}, which takes "
                           "none over", field="workflow_type")  # fmt: skip
    return taker.take_over(facts, trail, made)


def _with_caller_fields(request: Request, trail: Trail) -> Request:
    """The request with trtllm-case-executor's own names taken into its fields, said in the
    trail; every count it gives is above 0."""
    for field in ("required_devices", "node_count", "total_required_devices",
                  "required_devices_per_node"):  # fmt: skip
        check_positive(getattr(request, field), field, ResolveError)
    caller = take_caller_fields(request)
    for field, value, source in caller.notes:
        trail.add(field, value, source)
    for warning in caller.warnings:
        trail.warn(warning)
    return caller.request


def _warn_per_node(request: Request, resolution: Resolution, is_slurm: bool, trail: Trail
                   ) -> None:  # fmt: skip
    """The caller's required_devices_per_node against the GPUs a node the rules give the job:
    --gres's count on Slurm, all the job's GPUs on one docker host; nothing to hold it against
    when the category does not size the job (submit.py does)."""
    if request.required_devices_per_node is None or (is_slurm and resolution.gres_need is None):
        return
    if is_slurm:
        assert resolution.gres_need is not None
        said = per_node_disagreement(request, resolution.gres_need, "--gres=gpu:N a node")
    else:
        devices = resolution.parallelism.required_devices
        said = per_node_disagreement(request, devices.value, f"required_devices, {devices.source}")
    if said is not None:
        trail.warn(said)


def _category(request: Request, where: Placement) -> Category:
    """The workflow's category checks the request first and may hand it to another one
    (a perf-sanity pytest id goes to perf_sanity); a Slurm-only category refuses docker."""
    workflow = category(str(request.workflow_type))
    workflow.check_request(request)
    routed = workflow.route(request)
    chosen = category(routed) if routed else workflow
    scenario = request.execution_scenario
    if chosen.only_on is not None and where.scheduler != chosen.only_on:
        refusal = chosen.refusal.format(scenario=str(scenario))
        raise ResolveError(refusal, field="execution_scenario")
    return chosen


def _source(field: str, forwarded: frozenset[str]) -> str:
    return f"{FORWARDED_SOURCE} {field}" if field in forwarded else f"input {field}"


def _place(request: Request, where: Placement, trail: Trail, forwarded: frozenset[str]
           ) -> _Place:  # fmt: skip
    """slurm_env, partition and account (Slurm), then the project and log folders."""
    scenario = request.execution_scenario
    remote = where.remote
    loaded: LoadedSlurmEnv | None = None
    partition: Partition | None = None
    if where.scheduler == SLURM:
        partition_name = slurm_params.require(request.partition, "partition", str(scenario))
        account = slurm_params.require(request.account, "account", str(scenario))
        loaded = load_slurm_env(request.slurm_env_file, str(scenario))
        if loaded.env.client_tools_missing and not loaded.env.partitions:
            # the probe ran where sinfo/scontrol are missing: the seed's fallback, not a refusal
            trail.warn(
                f"slurm_env.json says SLURM client tools not found and lists no partitions: "
                f"partition {partition_name!r} is not checked; arch from this machine "
                "(local_slurm) or x86_64 (remote_slurm), --mpi=pmix, no --gres"
            )
        else:
            partition = slurm_params.find_partition(loaded.env, partition_name)
        slurm_params.check_account(loaded.env, account)
        state = (partition.state or "") if partition is not None else ""
        if state.lower().startswith(("down", "drain", "inact")):
            trail.warn(
                f"partition {partition_name!r} is {state} in slurm_env.json: the job "
                "waits in the queue until it is up"
            )
        checked = "validated in slurm_env" if partition is not None else "not in slurm_env"
        trail.add("partition", partition_name, f"input partition ({checked})")
        trail.add("account", account, "input account")
    if remote:
        for field in ("remote_repo_path", "remote_work_dir"):
            if not getattr(request, field):
                raise ResolveError(
                    f"remote_slurm needs {field} (from trtllm-case-executor); "
                    "scriptast never computes or defaults it",
                    field=field,
                )
    project = request.remote_repo_path if remote else request.repo_root
    log_dir = request.remote_work_dir if remote else request.work_dir
    assert project is not None and log_dir is not None
    if loaded is not None and "\\" in log_dir:
        field = "remote_work_dir" if remote else "work_dir"
        raise ResolveError(
            f"{field} {log_dir!r} holds a backslash, which turns off Slurm's %-patterns (%j "
            "too) in the log file names; use a path without a backslash",
            field=field,
        )
    trail.add(
        "project_path",
        project,
        _source("remote_repo_path", forwarded) if remote else "input repo_root",
    )
    trail.add(
        "log_dir", log_dir, _source("remote_work_dir", forwarded) if remote else "input work_dir"
    )
    return _Place(loaded=loaded, partition=partition, project=project, log_dir=log_dir)


def _models_root(request: Request, trail: Trail, forwarded: frozenset[str]) -> str:
    """llm_models_root: required, absolute, never invented."""
    if not request.llm_models_root:
        raise ResolveError(
            "llm_models_root is required: pass the models root inside the container "
            "(--llm-models-root); scriptast does not invent a default",
            field="llm_models_root",
        )
    if not request.llm_models_root.startswith("/"):
        raise ResolveError(
            f"llm_models_root {request.llm_models_root!r} must be an absolute path",
            field="llm_models_root",
        )
    trail.add("llm_models_root", request.llm_models_root, _source("llm_models_root", forwarded))
    return request.llm_models_root


def _mounts(request: Request, where: Placement, chosen: Category, place: _Place,
            home: str | None, trail: Trail) -> MountPlan:  # fmt: skip
    """Models, home and project mounts, and the folders the category needs."""
    assert request.llm_models_root is not None
    extra = chosen.mount_folders(request, place.log_dir)
    env = place.loaded.env if place.loaded else None
    if where.remote:
        home_dir, home_source = remote_home(
            env.remote_cwd if env else None, request.remote_home, env.home if env else None
        )
    else:
        home_dir, home_source = home or local_home(), "$HOME"
    trail.add("home", home_dir, home_source)
    _check_local_models(request, where, trail)
    plan = plan_mounts(
        llm_models_root=request.llm_models_root,
        home=home_dir,
        project=place.project,
        checkpoint_path=request.checkpoint_path,
        models_path=request.models_path,
        slurm_env_mounts=env.mounts if env else None,
        default_models_repo=request.env_check.default_models_repo if request.env_check else None,
        extra_folders=extra.folders,
    )
    trail.add(
        "models_host_path", plan.models_host_path or "(from slurm_env.mounts)", plan.models_source
    )
    trail.add(
        "container_mounts",
        ",".join(f"{m.source}:{m.target}" for m in plan.mounts),
        "models, home, project" + extra.note,
    )
    return plan


def _check_local_models(request: Request, where: Placement, trail: Trail) -> None:
    """A models path on this machine that does not exist: a job this machine runs (docker)
    cannot mount it; a Slurm node may still have it, so there it is a warning."""
    if where.remote:
        return
    for field in ("models_path", "checkpoint_path"):
        value = getattr(request, field)
        if not value or Path(value).exists():
            continue
        if where.scheduler != SLURM:
            raise ResolveError(
                f"{field} {value} does not exist; docker cannot mount it", field=field
            )
        trail.warn(f"{field} {value} does not exist on this machine; the job's nodes must have it")


def _trail_parallelism(resolution: Resolution, trail: Trail) -> None:
    par = resolution.parallelism
    for name, value in (
        ("tp", par.tp),
        ("pp", par.pp),
        ("ep", par.ep),
        ("required_devices", par.required_devices),
    ):
        trail.add(name, value.value, value.source)
    trail.add("world_size", par.world_size, resolution.world_source)


def _model_name(request: Request, derived: str | None, derived_source: str, trail: Trail) -> str:
    """The request's model_name (made a safe file name if need be), else the derived one,
    else the workflow's name."""
    if not request.model_name:
        model = derived or str(request.workflow_type)
        how = "default" if not derived else derived_source
        trail.add("model_name", model, f"derived ({how})")
        return model
    model = request.model_name
    source = "input model_name"
    if not is_safe_component(model):
        model = names.normalize_model_name(request.model_name)
        if not model:
            raise ResolveError(
                f"model_name {request.model_name!r} has no letter or digit, so it names no "
                "file: give a --model-name such as llama_3_1_8b",
                field="model_name",
            )
        source = f"input model_name {request.model_name!r}, made a safe file name"
        trail.warn(f"model_name {request.model_name!r} is not a safe file name; {model!r} is used")
    trail.add("model_name", model, source)
    return model


def _slurm(
    request: Request, place: _Place, arch: Arch, resolution: Resolution, trail: Trail
) -> SlurmParams:
    """The Slurm header values; a category that sizes the job also gets --gres and --mpi."""
    assert request.partition and request.account
    partition = place.partition
    limit, limit_source = slurm_params.time_limit(request.time_limit, partition)
    trail.add("time_limit", limit, limit_source)
    env = place.loaded.env if place.loaded else None
    plugin, plugin_source = slurm_params.mpi_plugin(env, arch.pmix_trusted)
    par = resolution.parallelism
    gres_value = None
    if resolution.gres_need is not None:
        trail.add("mpi_plugin", plugin, plugin_source)
        uses_gres = slurm_params.uses_gres(partition)
        gres_value = f"gpu:{resolution.gres_need}" if uses_gres else None
        gres_source = f"partition gres {partition.gres if partition else None}"
        trail.add("gres", gres_value or "(none)", gres_source)
        trail.add("nodes", par.nodes, "single node")
        trail.add("ntasks", par.ntasks, resolution.ntasks_source)
    per_node: Sourced | None = resolution.gpus_per_node
    return SlurmParams(
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


def _persistent(request: Request, where: Placement, trail: Trail) -> bool | None:
    """local_slurm: persistent mode, on by default; elsewhere not applicable (None): a
    persistent allocation is a Slurm one, and a remote cluster's executor keeps its own."""
    if where.scheduler != SLURM or where.remote:
        return None
    persistent = True if request.persistent_mode is None else request.persistent_mode
    source = "input" if request.persistent_mode is not None else "default"
    trail.add("persistent_mode", persistent, source)
    return persistent


def _install(request: Request, trail: Trail) -> bool:
    """The install step: on unless turned off; remote_slurm installs as local jobs do, from the
    checkout at remote_repo_path (the chosen image is a development image: nothing of TRT-LLM
    is installed in it)."""
    install = request.install
    if not install and (request.install_mode != "source" or request.wheel_path):
        given = "install_mode wheel" if request.install_mode != "source" else "wheel_path"
        raise ResolveError(
            f"{given} chooses how the install step installs TensorRT-LLM, but install is off "
            "(--no-install): drop one of them",
            field="install_mode" if request.install_mode != "source" else "wheel_path",
        )
    if request.wheel_path and request.install_mode != "wheel":
        raise ResolveError(
            "wheel_path is used by --install-mode wheel; add --install-mode wheel",
            field="wheel_path",
        )
    if install:
        how = request.wheel_path or f"the first {WHEEL_GLOB}"
        shown = f"wheel ({how})" if request.install_mode == "wheel" else "source (pip install -e .)"
        trail.add("install_mode", shown, "input" if request.install_mode != "source" else "default")
    trail.add("install", install, "input" if not request.install else "default")
    return install
