"""work_dir's existing job_spec.json: the values trtllm-case-executor already resolved there
(`remote_repo_path`, `remote_work_dir`, `llm_models_root`, `device_type`), read when the request
lacks them, and the fields a re-emit keeps because it does not own them (the orchestrator's
additions)."""

from __future__ import annotations

import json
import os
from typing import Any

import msgspec

from scriptast.builders.request.fields import Request
from scriptast.common.text_files import regular_file_bytes
from scriptast.contract.job_spec import JobSpec
from scriptast.contract.work_dir_names import JOB_SPEC
from scriptast.errors import InputError

FORWARDED = ("remote_repo_path", "remote_work_dir", "llm_models_root", "device_type",
             "container_image")  # fmt: skip
CALLERS_ONLY = frozenset({"container_image"})
"""Taken only from a job_spec.json scriptast did not write (trtllm-case-executor's, which
resolves the image once for every consumer): a re-emit resolves its own image again."""
PATHS = frozenset({"remote_repo_path", "remote_work_dir", "llm_models_root"})
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


class Forwarded(msgspec.Struct, frozen=True):
    """The request with job_spec.json's forwarded values, the names of the fields taken from
    it, and a warning for each request value job_spec.json overrules."""

    request: Request
    taken: frozenset[str]
    overruled: tuple[str, ...]


def with_forwarded(request: Request) -> Forwarded:
    """The request with each forwarded value it lacks taken from work_dir's job_spec.json; a
    remote path it gives that job_spec.json gives otherwise is job_spec.json's (the seed: the
    case-executor is the single source of truth for it), with a warning."""
    remote = request.placement.remote
    wanted = [
        field
        for field in FORWARDED
        if remote or field not in REMOTE_ONLY
        if not getattr(request, field) or field in REMOTE_ONLY
    ]
    if not wanted:
        return Forwarded(request, frozenset(), ())
    lacking = [field for field in wanted if not getattr(request, field)]
    try:
        existing = existing_job_spec(request.work_dir)
    except InputError:
        if any(field in PATHS for field in lacking):
            raise
        # only compared, or an optional value: emit replaces the file
        return Forwarded(request, frozenset(), ())
    if existing is None:
        return Forwarded(request, frozenset(), ())
    path = os.path.join(request.work_dir, JOB_SPEC)
    found: dict[str, str] = {}
    overruled: list[str] = []
    ours = "files" in existing  # every job_spec.json emit writes lists its files
    for field in wanted:
        value = existing.get(field)
        if value is None or (field in CALLERS_ONLY and ours):
            continue
        if not isinstance(value, str) or (field in PATHS and not value.startswith("/")):
            raise InputError(
                f"{field} {value!r} in {path} is not "
                f"{'an absolute path' if field in PATHS else 'a string'}: fix it there, or pass "
                "the field in the request"
            )
        given = getattr(request, field)
        if given and given != value:
            overruled.append(
                f"{field} {given} is not used: {path} gives {value}, the single source of "
                "truth for that path (trtllm-case-executor resolves it there); to change it, "
                "change it in that file, or remove the file"
            )
        elif given:
            continue
        found[field] = value
    return Forwarded(msgspec.structs.replace(request, **found), frozenset(found), tuple(overruled))


def readable_job_spec(work_dir: str) -> dict[str, Any] | None:
    """work_dir's job_spec.json as `existing_job_spec` reads it; None also when it is not
    a JSON object (a re-emit replaces it)."""
    try:
        return existing_job_spec(work_dir)
    except InputError:
        return None


def kept_monitor_timeout(existing: dict[str, Any] | None) -> float | None:
    """The `monitor_timeout_seconds` trtllm-case-executor wrote into work_dir's job_spec.json
    (`existing`: a number of seconds above 0), which a re-emit keeps; None when there is none."""
    value = (existing or {}).get("monitor_timeout_seconds")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if 0 < value < 10**9 else None


def kept_fields(existing: dict[str, Any] | None) -> dict[str, Any]:
    """The fields of work_dir's job_spec.json (`existing`) that emit does not write (none when
    there is no readable one): a re-emit keeps them, in their order, after its own."""
    owned = set(JobSpec.__struct_fields__)
    return {key: value for key, value in (existing or {}).items() if key not in owned}
