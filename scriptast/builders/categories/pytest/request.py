"""pytest's part of the request: the test command."""

from typing import Annotated, ClassVar

import msgspec

from scriptast.builders.request.fields import RequestPart


class PytestRequest(RequestPart, frozen=True, kw_only=True):
    """The pytest command (a perf-sanity test id in it goes the perf_sanity way), or the CI
    stage whose tests and command are read from the repository."""

    LOCAL_PATHS: ClassVar[tuple[str, ...]] = ("waives_file",)

    test_cmd: Annotated[
        str | None, msgspec.Meta(description="pytest command (pytest workflow).")
    ] = None
    ci_stage: Annotated[
        str | None,
        msgspec.Meta(
            description="A TRT-LLM CI stage to reproduce (DGX_B200-4_GPUs-PyTorch-2): its "
            "tests, GPUs and pytest flags, read from the repository as CI reads them."
        ),
    ] = None
    waives_file: Annotated[
        str | None,
        msgspec.Meta(
            description="ci_stage: the waives file (default: the repository's "
            "tests/integration/test_lists/waives.txt)."
        ),
    ] = None
    all_splits: Annotated[
        bool | None,
        msgspec.Meta(description="ci_stage: every split of the stage, a work dir each."),
    ] = None
    only_tests: Annotated[
        tuple[str, ...] | None,
        msgspec.Meta(
            description="Only these test ids (relative to tests/integration/defs, as pytest "
            "prints them): test_cmd's own selection, or the CI stage's list, narrowed to them "
            "(emit --rerun-failed RUN fills it with a stored run's failed tests)."
        ),
    ] = None
