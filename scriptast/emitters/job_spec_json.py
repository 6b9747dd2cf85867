"""job_spec.json text: the JobSpec encoded as indented, deterministic JSON."""

from __future__ import annotations

import msgspec

from scriptast.model.job_spec import JobSpec


def emit_job_spec(spec: JobSpec) -> str:
    """Two-space indented JSON with a final newline; keys in the seed's order."""
    return msgspec.json.format(msgspec.json.encode(spec), indent=2).decode() + "\n"
