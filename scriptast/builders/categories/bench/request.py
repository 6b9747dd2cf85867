"""bench's part of the request: the trtllm-bench command."""

from typing import Annotated

import msgspec

from scriptast.builders.request.fields import RequestPart


class BenchRequest(RequestPart, frozen=True, kw_only=True):
    """The trtllm-bench command: `prepare && run`, or the run alone."""

    bench_cmd: Annotated[
        str | None,
        msgspec.Meta(
            description="trtllm-bench command, optionally 'prepare && run' (bench workflow)."
        ),
    ] = None
