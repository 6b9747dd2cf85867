"""The eval-fallback perf config copy as YAML text (keys in their original order)."""

from __future__ import annotations

from typing import Any


def emit_perf_config(data: dict[str, Any]) -> str:
    """YAML of a perf config mapping; PyYAML loads only when a fallback needs it."""
    import yaml

    text: str = yaml.safe_dump(data, sort_keys=False)
    return text
