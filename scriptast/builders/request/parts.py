"""Each category's part of the request (its commands and files), in one room below the
categories: a category reads its own part, and the parts it shares with another (a multi-node
eval runs through perf_sanity's config, a perf-sanity pytest id through its submit.py) without
importing that category."""

# No `from __future__ import annotations`: the flat request type is made from these
# annotations at run time (see fields.py).
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
            description="A TRT-LLM CI stage to reproduce, such as DGX_B200-4_GPUs-PyTorch-2 (its "
            "tests, GPUs and pytest flags, read from the repository as CI reads them)."
        ),
    ] = None
    waives_file: Annotated[
        str | None,
        msgspec.Meta(
            description="ci_stage: the waives file (default: the repository's waives.txt, "
            "beside its test lists)."
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


class EvalRequest(RequestPart, frozen=True, kw_only=True):
    """The trtllm-eval command (over more nodes than one, perf_sanity's fields run it)."""

    eval_cmd: Annotated[
        str | None, msgspec.Meta(description="trtllm-eval command (eval workflow).")
    ] = None


class BenchRequest(RequestPart, frozen=True, kw_only=True):
    """The trtllm-bench command: `prepare && run`, or the run alone."""

    bench_cmd: Annotated[
        str | None,
        msgspec.Meta(
            description="trtllm-bench command, optionally 'prepare && run' (bench workflow)."
        ),
    ] = None


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


class PerfSanityRequest(RequestPart, frozen=True, kw_only=True):
    """The config submit.py reads, and the server config to run of an aggregated one."""

    LOCAL_PATHS: ClassVar[tuple[str, ...]] = ("perf_config_yaml",)

    perf_config_yaml: Annotated[
        str | None, msgspec.Meta(description="Perf-sanity / benchmark config YAML.")
    ] = None
    perf_test_name: Annotated[
        str | None, msgspec.Meta(description="Server config name for aggregated mode.")
    ] = None
