"""job_spec.json text: the JobSpec encoded as indented, deterministic JSON, with slurm_env.json's
object written as it was read (its unknown keys too)."""

from __future__ import annotations

from typing import Any

import msgspec

from scriptast.contract.job_spec import JobSpec


def emit_job_spec(
    spec: JobSpec, kept: dict[str, Any] | None = None, slurm_env: dict[str, Any] | None = None
) -> str:
    """Two-space indented JSON with a final newline; keys in the seed's order, then `kept`
    (fields of an earlier job_spec.json that emit does not own) in theirs. `slurm_env` is the
    object slurm_env.json held, embedded verbatim in place of the typed view."""
    fields = msgspec.to_builtins(spec)
    if slurm_env is not None and "slurm_env" in fields:
        fields["slurm_env"] = slurm_env
    fields.update(kept or {})
    return msgspec.json.format(msgspec.json.encode(fields), indent=2).decode() + "\n"
