"""eval's part of the request: the trtllm-eval command."""

from typing import Annotated

import msgspec

from scriptast.builders.request.fields import RequestPart


class EvalRequest(RequestPart, frozen=True, kw_only=True):
    """The trtllm-eval command (over more nodes than one, perf_sanity's fields run it)."""

    eval_cmd: Annotated[
        str | None, msgspec.Meta(description="trtllm-eval command (eval workflow).")
    ] = None
