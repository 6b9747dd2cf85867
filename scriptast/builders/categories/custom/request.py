"""custom's part of the request: the command or script, and its environment."""

from typing import Annotated, ClassVar

import msgspec

from scriptast.builders.request.fields import RequestPart


class CustomRequest(RequestPart, frozen=True, kw_only=True):
    """A command, or a script run with bash (the script wins), and KEY=VALUE exports."""

    LOCAL_PATHS: ClassVar[tuple[str, ...]] = ("custom_script",)

    custom_cmd: Annotated[
        str | None, msgspec.Meta(description="Any command (custom workflow).")
    ] = None
    custom_script: Annotated[
        str | None, msgspec.Meta(description="A script to run with bash (custom workflow).")
    ] = None
    custom_env: Annotated[
        str | None,
        msgspec.Meta(
            description="Space-separated KEY=VALUE pairs exported for the custom command."
        ),
    ] = None
