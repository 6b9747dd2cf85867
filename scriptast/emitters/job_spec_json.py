"""job_spec.json text: the JobSpec encoded as indented, deterministic JSON."""

from __future__ import annotations

from typing import Any

import msgspec

from scriptast.model.job_spec import JobSpec


def emit_job_spec(spec: JobSpec, kept: dict[str, Any] | None = None) -> str:
    """Two-space indented JSON with a final newline; keys in the seed's order, then `kept`
    (fields of an earlier job_spec.json that emit does not own) in theirs."""
    if not kept:
        return msgspec.json.format(msgspec.json.encode(spec), indent=2).decode() + "\n"
    fields = {**msgspec.to_builtins(spec), **kept}
    return msgspec.json.format(msgspec.json.encode(fields), indent=2).decode() + "\n"
