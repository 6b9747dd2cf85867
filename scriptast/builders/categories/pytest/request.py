"""pytest's part of the request: the test command."""

from typing import Annotated

import msgspec

from scriptast.builders.request.fields import RequestPart


class PytestRequest(RequestPart, frozen=True, kw_only=True):
    """The pytest command (a perf-sanity test id in it goes the perf_sanity way)."""

    test_cmd: Annotated[
        str | None, msgspec.Meta(description="pytest command (pytest workflow).")
    ] = None
