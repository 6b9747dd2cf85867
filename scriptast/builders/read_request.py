"""The request read from a file and flags: the fields merged (flags win), checked as text and as
paths, type-checked in the flat form a file writes, then split into the shared fields and each
category's part."""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

import msgspec

from scriptast.builders.missing_fields import ALWAYS, check_missing
from scriptast.builders.request.fields import (
    ENV_CHECK_FIELDS,
    HOST_PATH_FIELDS,
    LOCAL_PATH_FIELDS,
    PARTS_AFTER,
    REMOTE_PATH_FIELDS,
    SHARED_FIELDS,
    Request,
    RequestPart,
)
from scriptast.common.file_names import NAME_MAX
from scriptast.common.suggest import did_you_mean, shown
from scriptast.common.text_files import decode_utf8, file_bytes
from scriptast.contract.axes import PLACEMENTS, WorkflowType
from scriptast.errors import InputError


class Shape(msgspec.Struct, frozen=True):
    """The request as the registered categories make it: each one's part, in the registry's
    order; the flat type a file writes; every field name; the fields that are local paths."""

    parts: tuple[type[RequestPart], ...]
    flat: type[msgspec.Struct]
    names: frozenset[str]
    local_paths: tuple[str, ...]


def shape() -> Shape:
    """The request's shape for the categories registered now (made once for each registry)."""
    from scriptast.builders.categories import CATEGORIES

    return _shape(tuple(dict.fromkeys(c.request_part for c in CATEGORIES.values())))


@functools.cache
def _shape(parts: tuple[type[RequestPart], ...]) -> Shape:
    shared = [f for f in msgspec.structs.fields(Request) if f.name != "parts"]
    owned = [f for kind in parts for f in msgspec.structs.fields(kind)]
    names = [f.name for f in (*shared, *owned)]
    if len(names) != len(set(names)):
        raise AssertionError(f"a request field is owned twice: {sorted(names)}")
    cut = SHARED_FIELDS.index(PARTS_AFTER) + 1
    ordered = [*shared[:cut], *owned, *shared[cut:]]
    flat = msgspec.defstruct(
        "Request",
        [(f.name, f.type, f.default) for f in ordered],
        kw_only=True,
        frozen=True,
        forbid_unknown_fields=True,
    )
    flat.__doc__ = FLAT_DOC
    local = (*LOCAL_PATH_FIELDS, *(f for kind in parts for f in kind.LOCAL_PATHS))
    return Shape(parts=parts, flat=flat, names=frozenset(names), local_paths=local)


FLAT_DOC = (
    "A job request as a file or the flags give it: the seed's Input table, each category's own "
    "fields among the shared ones; `install` is scriptast's own switch for the `pip install` "
    "step."
)


def request_type() -> type[msgspec.Struct]:
    """The request as a file writes it: the shared fields with every category's part among
    them, flat (`scriptast schema request` prints it)."""
    return shape().flat


def request_fields() -> tuple[str, ...]:
    """Every field name a request file may hold, in the order `scriptast schema request` lists
    them."""
    return tuple(request_type().__struct_fields__)


def _split(flat: msgspec.Struct, parts: tuple[type[RequestPart], ...]) -> Request:
    """The flat request as the shared fields and the parts that set a field."""
    values = msgspec.structs.asdict(flat)
    found = []
    for kind in parts:
        own = {name: values.pop(name) for name in kind.__struct_fields__}
        if any(value is not None for value in own.values()):
            found.append(kind(**own))
    return Request(**values, parts=tuple(found))


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
    from scriptast.common.bounded_yaml import BoundedYamlError, load_bounded

    try:
        return load_bounded(text)[0]
    except BoundedYamlError as error:
        raise InputError(f"request file {path} is not valid YAML: {error}") from None


def check_field_names(
    fields: dict[str, Any], origin: str, known: frozenset[str] | None = None
) -> None:
    """Unknown field names are an error that names them (a typo must not pass silently)."""
    known = shape().names if known is None else known
    for name in fields:
        if not isinstance(name, str):
            raise InputError(
                f"request field name {name!r} in {origin} is not a string; "
                "see `scriptast schema request` for the fields"
            )
        if name not in known:
            raise InputError(
                f"unknown request field {shown(name)} in {origin}"
                f"{did_you_mean(name, request_fields())}; see `scriptast schema request` for "
                "the fields"
            )
    env_check = fields.get("env_check")
    if isinstance(env_check, dict):
        for name in env_check:
            if not isinstance(name, str) or name not in ENV_CHECK_FIELDS:
                raise InputError(
                    f"unknown env_check field {shown(str(name))} in {origin}"
                    f"{did_you_mean(str(name), ENV_CHECK_FIELDS)}; "
                    f"known: {', '.join(ENV_CHECK_FIELDS)}"
                )


def _check_remote_script(value: object, base: Path, remote: bool) -> None:
    """On remote_slurm a custom_script is a file here (it travels to the cluster) or an
    absolute path on the cluster; a relative path to no file here would be joined to this
    machine's folder and run on the cluster as if it were one of its paths."""
    if not remote or not isinstance(value, str) or not value or value.startswith("/"):
        return
    if (base / os.path.expanduser(value)).is_file():
        return
    raise InputError(
        f"custom_script {value!r} is relative and no file here ({base}): on remote_slurm give "
        "a script on this machine (it travels to remote_work_dir) or an absolute path on the "
        "cluster",
        field="custom_script",
    )


def build_request(
    file_fields: dict[str, Any] | None,
    flag_fields: dict[str, Any],
    *,
    cwd: str | None = None,
    origin: str = "the request",
) -> Request:
    """Merge file values with flags (flags win), make local paths absolute, and type-check."""
    made = shape()
    merged: dict[str, Any] = {}
    if file_fields:
        check_field_names(file_fields, origin, made.names)
        merged.update(file_fields)
    check_field_names(flag_fields, "the flags", made.names)
    for name, value in flag_fields.items():
        if name == "env_check" and isinstance(value, dict):
            merged["env_check"] = {**(merged.get("env_check") or {}), **value}
        elif value is not None:
            merged[name] = value
    for name, value in merged.items():
        _check_text(name, value)
    base = Path(cwd or os.getcwd())
    if any(merged.get(name) in (None, "") for name in ALWAYS):
        check_missing(merged, str(base))
    scenario = merged.get("execution_scenario")
    where = PLACEMENTS.get(str(scenario))
    if scenario is not None and where is None:
        raise InputError(f"invalid request: execution_scenario {scenario!r} is none of the known "
                         f"execution_scenario values: {', '.join(PLACEMENTS)}")  # fmt: skip
    _check_remote_script(merged.get("custom_script"), base, where is not None and where.remote)
    for name in made.local_paths:
        value = merged.get(name)
        if isinstance(value, str) and value:
            merged[name] = os.path.normpath(os.path.join(base, os.path.expanduser(value)))
    remote = where is not None and where.remote
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
    for name in (*made.local_paths, *HOST_PATH_FIELDS, *REMOTE_PATH_FIELDS):
        _check_path_length(name, merged.get(name))
    try:
        flat = msgspec.convert(merged, type=made.flat, strict=False)
    except msgspec.ValidationError as error:
        raise InputError(f"invalid request: {_explain_validation(str(error))}") from None
    check_missing(merged, str(base))
    return _split(flat, made.parts)


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
    if "$.workflow_type" in message:
        known = ", ".join(member.value for member in WorkflowType)
        return f"{message} (known workflow_type values: {known})"
    return message
