"""perf_sanity's part of the request: the perf config and its server config name (a pytest
perf-sanity id and a multi-node eval come this way too)."""

from typing import Annotated, ClassVar

import msgspec

from scriptast.builders.request.fields import RequestPart


class PerfSanityRequest(RequestPart, frozen=True, kw_only=True):
    """The config submit.py reads, and the server config to run of an aggregated one."""

    LOCAL_PATHS: ClassVar[tuple[str, ...]] = ("perf_config_yaml",)

    perf_config_yaml: Annotated[
        str | None, msgspec.Meta(description="Perf-sanity / benchmark config YAML.")
    ] = None
    perf_test_name: Annotated[
        str | None, msgspec.Meta(description="Server config name for aggregated mode.")
    ] = None
