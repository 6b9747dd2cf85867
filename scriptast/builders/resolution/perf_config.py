"""A perf-sanity config file (the YAML submit.py reads): its mapping, and whether it is
aggregated (server_configs) or disaggregated (worker_config). The perf_sanity category plans
submit.py from it; an eval given one asks whether it is disaggregated."""

from __future__ import annotations

from typing import Any

from scriptast.common.text_files import read_text_file
from scriptast.errors import ResolveError


def load_config(path: str) -> dict[str, Any]:
    """A perf-sanity config file as a mapping, or ResolveError naming the file."""
    from scriptast.common.bounded_yaml import BoundedYamlError, load_bounded

    try:
        data = load_bounded(read_text_file(path, "perf_config_yaml"))[0]
    except BoundedYamlError as error:
        raise ResolveError(
            f"perf_config_yaml {path} is not YAML: {error}", field="perf_config_yaml"
        ) from None
    if not isinstance(data, dict):
        raise ResolveError(f"perf_config_yaml {path} must hold a mapping", field="perf_config_yaml")
    return data


def runtime_mode(config: dict[str, Any], path: str) -> str:
    """`disaggregated` for a config with worker_config, `aggregated` for server_configs."""
    if "worker_config" in config:
        return "disaggregated"
    if "server_configs" in config:
        return "aggregated"
    raise ResolveError(
        f"perf_config_yaml {path} has neither worker_config (disaggregated) nor server_configs "
        "(aggregated): it is not a perf-sanity config",
        field="perf_config_yaml",
    )
