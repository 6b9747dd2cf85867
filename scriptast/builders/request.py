"""The job request: every input field of the seed under its seed name, from a file and/or flags."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

import msgspec

from scriptast.builders.file_names import NAME_MAX
from scriptast.common.suggest import did_you_mean, shown
from scriptast.common.text_files import decode_utf8, file_bytes, yaml_problem
from scriptast.contract.axes import ExecutionScenario, WorkflowType
from scriptast.errors import InputError


class EnvCheck(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What trtllm-case-executor's environment check found on the host."""

    gpus_per_node: int | None = None
    available_gpus: int | None = None
    default_models_repo: str | None = None


class Request(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A job request. Field names are the seed's Input table; `install` is scriptast's own
    switch for the `pip install` step."""

    workflow_type: WorkflowType
    execution_scenario: ExecutionScenario
    work_dir: str
    repo_root: str
    skill_dir: str | None = None
    test_cmd: str | None = None
    eval_cmd: str | None = None
    bench_cmd: str | None = None
    custom_cmd: str | None = None
    custom_script: str | None = None
    custom_env: str | None = None
    perf_config_yaml: str | None = None
    perf_test_name: str | None = None
    model_name: str | None = None
    required_devices: int | None = None
    node_count: int | None = None
    partition: str | None = None
    account: str | None = None
    cluster_name: str | None = None
    slurm_env_file: str | None = None
    time_limit: str | None = None
    llm_models_root: str | None = None
    checkpoint_path: str | None = None
    models_path: str | None = None
    device_type: str | None = None
    persistent_mode: bool | None = None
    container_image: str | None = None
    remote_repo_path: str | None = None
    remote_work_dir: str | None = None
    remote_home: str | None = None
    env_check: EnvCheck | None = None
    install: bool = True
    install_mode: Literal["source", "wheel"] = "source"
    wheel_path: str | None = None


REQUEST_FIELDS: tuple[str, ...] = Request.__struct_fields__
LOCAL_PATH_FIELDS = (
    "work_dir",
    "repo_root",
    "skill_dir",
    "custom_script",
    "perf_config_yaml",
    "slurm_env_file",
)
HOST_PATH_FIELDS = ("checkpoint_path", "models_path")
"""Paths on the machine that runs the job: this one, or the cluster for remote_slurm."""
REMOTE_PATH_FIELDS = ("remote_repo_path", "remote_work_dir", "remote_home")
_ENV_CHECK_FIELDS = EnvCheck.__struct_fields__


def read_request_file(path: str, data: bytes | None = None) -> dict[str, Any]:
    """The fields of a JSON, TOML or YAML request file (`-` with `data` for standard input)."""
    if data is None:
        try:
            data = file_bytes(path)
        except OSError as error:
            raise InputError(f"cannot read request file {path}: {error.strerror}") from None
    text = decode_utf8(data, f"request file {path}")
    suffix = Path(path).suffix.lower()
    try:
        if suffix == ".toml":
            import tomllib

            loaded: Any = tomllib.loads(text)
        elif suffix in (".yaml", ".yml"):
            loaded = _load_yaml(text, path)
        else:
            loaded = json.loads(text)
    except ValueError as error:  # json's and tomllib's decode errors
        raise InputError(f"request file {path} is not valid: {error}") from None
    except RecursionError:
        raise InputError(f"request file {path} nests too deeply to be a request") from None
    if not isinstance(loaded, dict):
        raise InputError(f"request file {path} must hold one object of request fields")
    return loaded


def _load_yaml(text: str, path: str) -> Any:
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise InputError(f"request file {path} is not valid YAML: {yaml_problem(error)}") from None


def check_field_names(fields: dict[str, Any], origin: str) -> None:
    """Unknown field names are an error that names them (a typo must not pass silently)."""
    for name in fields:
        if not isinstance(name, str):
            raise InputError(
                f"request field name {name!r} in {origin} is not a string; "
                "see `scriptast schema request` for the fields"
            )
        if name not in REQUEST_FIELDS:
            raise InputError(
                f"unknown request field {shown(name)} in {origin}"
                f"{did_you_mean(name, REQUEST_FIELDS)}; see `scriptast schema request` for the "
                "fields"
            )
    env_check = fields.get("env_check")
    if isinstance(env_check, dict):
        for name in env_check:
            if not isinstance(name, str) or name not in _ENV_CHECK_FIELDS:
                raise InputError(
                    f"unknown env_check field {shown(str(name))} in {origin}"
                    f"{did_you_mean(str(name), _ENV_CHECK_FIELDS)}; "
                    f"known: {', '.join(_ENV_CHECK_FIELDS)}"
                )


def build_request(
    file_fields: dict[str, Any] | None,
    flag_fields: dict[str, Any],
    *,
    cwd: str | None = None,
    origin: str = "the request",
) -> Request:
    """Merge file values with flags (flags win), make local paths absolute, and type-check."""
    merged: dict[str, Any] = {}
    if file_fields:
        check_field_names(file_fields, origin)
        merged.update(file_fields)
    check_field_names(flag_fields, "the flags")
    for name, value in flag_fields.items():
        if name == "env_check" and isinstance(value, dict):
            merged["env_check"] = {**(merged.get("env_check") or {}), **value}
        elif value is not None:
            merged[name] = value
    for required in ("workflow_type", "execution_scenario", "work_dir", "repo_root"):
        if merged.get(required) in (None, ""):
            flag = "--" + required.replace("_", "-")
            raise InputError(f"{required} is required: give it in the request file or as {flag}")
    for name, value in merged.items():
        _check_text(name, value)
    base = Path(cwd or os.getcwd())
    for name in LOCAL_PATH_FIELDS:
        value = merged.get(name)
        if isinstance(value, str) and value:
            merged[name] = os.path.normpath(os.path.join(base, os.path.expanduser(value)))
    remote = merged.get("execution_scenario") == "remote_slurm"
    for name in HOST_PATH_FIELDS:
        value = merged.get(name)
        if isinstance(value, str) and value and not remote:
            merged[name] = os.path.normpath(os.path.join(base, os.path.expanduser(value)))
    for name in (*REMOTE_PATH_FIELDS, *(HOST_PATH_FIELDS if remote else ())):
        value = merged.get(name)
        if isinstance(value, str) and not value.startswith("/"):
            raise InputError(
                f"{name} {value!r} must be an absolute path on the cluster (it is used verbatim)"
            )
    for name in (*LOCAL_PATH_FIELDS, *HOST_PATH_FIELDS, *REMOTE_PATH_FIELDS):
        _check_path_length(name, merged.get(name))
    try:
        return msgspec.convert(merged, type=Request, strict=False)
    except msgspec.ValidationError as error:
        raise InputError(f"invalid request: {_explain_validation(str(error))}") from None


PATH_MAX = 4096


def _check_text(name: str, value: Any) -> None:
    """A string that no file, argv or UTF-8 text can hold is refused, naming the field."""
    if isinstance(value, dict):
        for key, inner in value.items():
            _check_text(f"{name}.{key}", inner)
        return
    if not isinstance(value, str):
        return
    if "\0" in value:
        raise InputError(
            f"{name} holds a NUL byte at offset {value.index(chr(0))}, which no path, "
            "argument or script can carry"
        )
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise InputError(
            f"{name} holds a lone surrogate U+{ord(value[error.start]):04X} at offset "
            f"{error.start} (undecodable bytes?), which cannot be written as UTF-8"
        ) from None


def _check_path_length(name: str, value: Any) -> None:
    if not isinstance(value, str):
        return
    if len(value.encode("utf-8")) > PATH_MAX:
        raise InputError(f"{name} is longer than {PATH_MAX} bytes, the longest path Linux opens")
    for component in value.split("/"):
        size = len(component.encode("utf-8"))
        if size > NAME_MAX:
            raise InputError(
                f"{name} has a path component of {size} bytes ({component[:24]}...); "
                f"a file name has at most {NAME_MAX}"
            )


def _explain_validation(message: str) -> str:
    for field, enum in (("workflow_type", WorkflowType), ("execution_scenario", ExecutionScenario)):
        if f"$.{field}" in message:
            known = ", ".join(member.value for member in enum)
            return f"{message} (known {field} values: {known})"
    return message
