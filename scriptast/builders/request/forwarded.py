"""work_dir's existing job_spec.json: the values trtllm-case-executor already resolved there
(`remote_repo_path`, `remote_work_dir`, `llm_models_root`), read when the request lacks them,
and the fields a re-emit keeps because it does not own them (the orchestrator's additions)."""

from __future__ import annotations

import json
import os
from typing import Any

import msgspec

from scriptast.builders.request.fields import Request
from scriptast.common.text_files import regular_file_bytes
from scriptast.contract.job_spec import JobSpec
from scriptast.errors import InputError

JOB_SPEC = "job_spec.json"
FORWARDED = ("remote_repo_path", "remote_work_dir", "llm_models_root")
REMOTE_ONLY = frozenset({"remote_repo_path", "remote_work_dir"})
SOURCE = "work_dir's job_spec.json (resolved by trtllm-case-executor)"


def existing_job_spec(work_dir: str) -> dict[str, Any] | None:
    """The JSON object in `<work_dir>/job_spec.json`; None when there is none; InputError when
    it is there but not a JSON object."""
    path = os.path.join(work_dir, JOB_SPEC)
    try:
        data, _ = regular_file_bytes(path, follow_links=False)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror}") from None
    try:
        found = json.loads(data)
    except (ValueError, UnicodeDecodeError) as error:
        raise InputError(
            f"{path} is not JSON ({error}): fix it, or remove it for a fresh emit"
        ) from None
    if not isinstance(found, dict):
        raise InputError(f"{path} is not a JSON object: fix it, or remove it for a fresh emit")
    return found


def with_forwarded(request: Request) -> tuple[Request, frozenset[str]]:
    """The request with each forwarded value it lacks taken from work_dir's job_spec.json, and
    the names of the fields taken."""
    remote = request.placement.remote
    wanted = [
        field
        for field in FORWARDED
        if not getattr(request, field) and (remote or field not in REMOTE_ONLY)
    ]
    if not wanted:
        return request, frozenset()
    existing = existing_job_spec(request.work_dir)
    if existing is None:
        return request, frozenset()
    found: dict[str, str] = {}
    for field in wanted:
        value = existing.get(field)
        if value is None:
            continue
        if not isinstance(value, str) or not value.startswith("/"):
            raise InputError(
                f"{field} {value!r} in {os.path.join(request.work_dir, JOB_SPEC)} is not an "
                "absolute path: fix it there, or pass the field in the request"
            )
        found[field] = value
    return msgspec.structs.replace(request, **found), frozenset(found)


def kept_fields(work_dir: str) -> dict[str, Any]:
    """The fields of work_dir's job_spec.json that emit does not write (none when there is no
    readable one): a re-emit keeps them, in their order, after its own."""
    try:
        existing = existing_job_spec(work_dir)
    except InputError:
        return {}
    owned = set(JobSpec.__struct_fields__)
    return {key: value for key, value in (existing or {}).items() if key not in owned}
