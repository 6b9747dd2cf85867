"""bench's work and rule: tp/pp/ep of the last trtllm-bench invocation (single node), and the
command split at its top-level `&&` into a prepare step and a run step."""

from __future__ import annotations

import posixpath

from scriptast.builders.category import Resolution, SharedResolution
from scriptast.builders.request.fields import Request
from scriptast.builders.request.parts import BenchRequest
from scriptast.builders.resolution import model_name as names
from scriptast.builders.resolution.commands import user_command
from scriptast.builders.resolution.job import Work
from scriptast.builders.resolution.parallelism import Parallelism, Sourced, int_flag, single_node
from scriptast.builders.resolution.trail import Trail
from scriptast.errors import ResolveError
from scriptast.plan.steps import UserCommand
from scriptast.readers.shellwords import split_top_level, tokenize


class BenchWork(Work, frozen=True, kw_only=True, tag="bench"):
    """The prepare step (one task, None when the command has no `&&`) and the run step."""

    prepare: UserCommand | None = None
    run: UserCommand

    def commands(self) -> tuple[tuple[str, UserCommand], ...]:
        steps = (self.prepare, self.run) if self.prepare else (self.run,)
        return tuple(("bench_cmd", step) for step in steps)


def check_request(request: Request) -> None:
    """bench_cmd is required."""
    if not request.part(BenchRequest).bench_cmd:
        raise ResolveError("bench_cmd is required for workflow_type bench", field="bench_cmd")


def last_bench_invocation(bench_cmd: str) -> list[str]:
    """The words of the LAST `trtllm-bench` invocation, up to the next operator."""
    tokens = tokenize(bench_cmd, "bench_cmd")
    starts = [
        i
        for i, t in enumerate(tokens)
        if t.kind == "word" and posixpath.basename(t.value) == "trtllm-bench"
    ]
    if not starts:
        raise ResolveError(
            f"bench_cmd has no trtllm-bench invocation: {bench_cmd!r}", field="bench_cmd"
        )
    found: list[str] = []
    for token in tokens[starts[-1] :]:
        if token.kind != "word":
            break
        found.append(token.value)
    return found


def split_bench(bench_cmd: str) -> tuple[str | None, str]:
    """(prepare step, run step) at the one top-level `&&`; no `&&` means no prepare step."""
    pieces = split_top_level(bench_cmd, "&&", "bench_cmd")
    if len(pieces) > 2:
        raise ResolveError(
            f"bench_cmd has {len(pieces) - 1} top-level '&&'; it must be one prepare command "
            "&& one run command (or just the run command)",
            field="bench_cmd",
        )
    if any(not piece for piece in pieces):
        raise ResolveError(
            f"bench_cmd has an empty command around '&&': {bench_cmd!r}", field="bench_cmd"
        )
    if len(pieces) == 1:
        return None, pieces[0]
    _check_binds_to_the_and(pieces[1])
    return pieces[0], pieces[1]


def _check_binds_to_the_and(run: str) -> None:
    """The run step is what bash runs after the `&&` only when no list separator follows:
    in `prep && run; more`, bash runs `more` even when `prep` fails."""
    tokens = tokenize(run, "bench_cmd")
    for index, token in enumerate(tokens):
        if token.kind == "op" and token.value in (";", "\n", "||", "&", ";;"):
            if token.value == "\n" and all(t.value == "\n" for t in tokens[index:]):
                continue
            shown = "a newline" if token.value == "\n" else repr(token.value)
            raise ResolveError(
                f"bench_cmd has {shown} after its top-level '&&', so bash would not run all "
                "of the rest only after the prepare step: give `prepare && run` with one "
                "command (or pipeline) on each side",
                field="bench_cmd",
            )


def bench_parallelism(bench_cmd: str, gpus_per_node: Sourced | None) -> Parallelism:
    """bench: --tp/--pp/--ep of the last trtllm-bench invocation; single node only."""
    argv = last_bench_invocation(bench_cmd)
    tp = int_flag(argv, "--tp", 1, "bench_cmd")
    pp = int_flag(argv, "--pp", 1, "bench_cmd")
    ep = int_flag(argv, "--ep", 0, "bench_cmd")
    world = tp.value * pp.value
    if gpus_per_node is not None and world > gpus_per_node.value:
        raise ResolveError(
            f"world_size = {world} (tp {tp.value} * pp {pp.value}) exceeds gpus_per_node = "
            f"{gpus_per_node.value} ({gpus_per_node.source}); "
            "multi-node trtllm-bench is not supported.",
            field="bench_cmd",
        )
    devices = Sourced(world, f"tp * pp = {tp.value} * {pp.value}")
    return Parallelism(devices, world, tp, pp, ep, *single_node(world))


def resolve(facts: SharedResolution, trail: Trail) -> Resolution:
    """tp/pp/ep of the last trtllm-bench invocation; the prepare and run steps."""
    request = facts.request
    bench_cmd = request.part(BenchRequest).bench_cmd
    assert bench_cmd is not None
    par = bench_parallelism(bench_cmd, facts.gpus_per_node)
    if par.ep.value > 1 and par.tp.value % par.ep.value:
        trail.warn(
            f"bench_cmd asks for --ep {par.ep.value} with --tp {par.tp.value}: TRT-LLM "
            "splits the tensor-parallel ranks into expert-parallel groups (ep must divide "
            f"tp), so the job gets {par.world_size} GPU(s) and trtllm-bench will refuse "
            f"it; did you mean --tp {par.ep.value} --ep {par.ep.value}?"
        )
    prepare, run = split_bench(bench_cmd)
    work = BenchWork(
        prepare=user_command(prepare, "bench_cmd") if prepare else None,
        run=user_command(run, "bench_cmd"),
    )
    trail.add("bench_prepare", prepare or "(none)", "bench_cmd before the top-level &&")
    trail.add("bench_run", run, "bench_cmd after the top-level &&" if prepare else "bench_cmd")
    return Resolution(
        work=work,
        parallelism=par,
        derived_name=names.from_model_flag(bench_cmd, "bench_cmd"),
        world_source="tp * pp",
        gpus_per_node=facts.gpus_per_node,
        gres_need=par.ntasks_per_node,
    )
