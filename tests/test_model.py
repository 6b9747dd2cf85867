"""The model: invariants hold where values are made, and every value survives JSON."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import example, given, settings

from scriptast import (
    Assign,
    Command,
    Comment,
    Export,
    For,
    If,
    Lit,
    ModelError,
    Mount,
    Param,
    Payload,
    PyxisContainer,
    Redirect,
    SbatchDirective,
    Script,
    SrunOption,
    SrunStep,
    Unset,
    cmd,
    emit,
)
from scriptast.model.docker import BindMount, DockerRun
from scriptast.model.slurm_time import parse_time_limit
from scriptast.model.words import Concat, RawShell, concat
from tests.model_strategies import scripts
from tests.profiles import scaled
from tests.shell_checks import assert_bash_syntax


@given(scripts)
def test_every_script_survives_json(script: Script) -> None:
    encoded = msgspec.json.encode(script)
    assert msgspec.json.decode(encoded, type=Script) == script


def test_nodes_are_frozen() -> None:
    node = Lit(value="x")
    with pytest.raises(AttributeError):
        node.value = "y"  # type: ignore[misc]


def test_nodes_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        Lit("x")  # type: ignore[call-arg]


def test_decoding_runs_the_invariants() -> None:
    with pytest.raises(msgspec.ValidationError, match="nodes"):
        msgspec.json.decode(b'{"kind":"sbatch","option":"nodes","value":0}', type=SbatchDirective)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Command(argv=()), "at least one word"),
        (lambda: Export(name="1A"), "not a shell identifier"),
        (lambda: Unset(names=(Lit(value="a-b"),)), "not a shell identifier"),
        (lambda: Param(name="a b"), "not a shell identifier"),
        (lambda: Param(name="?", form="prefix_names"), "plain form"),
        (lambda: Param(name="X", form="default", default="}"), "may only hold"),
        (lambda: Param(name="X", default="y"), "needs form='default'"),
        (lambda: RawShell(text=""), "must not be empty"),
        (lambda: Concat(parts=()), "at least one part"),
        (lambda: Comment(text="two\nlines"), "one line"),
        (lambda: If(condition=cmd("true"), then=(Comment(text="x"),)), "then branch"),
        (lambda: For(var="x", items=(), body=(cmd("true"),)), "at least one item"),
        (lambda: Payload(body=(Comment(text="only"),)), "at least one command"),
        (lambda: SbatchDirective(option="nodez", value=1), "not an sbatch option"),
        (lambda: SbatchDirective(option="nodes", value=0), ">= 1"),
        (lambda: SbatchDirective(option="nodes", value="2"), "integer"),
        (lambda: SbatchDirective(option="time", value="2h"), "not a Slurm time"),
        (lambda: SbatchDirective(option="gres", value="gpu:0"), "name\\[:type\\]:N"),
        (lambda: SbatchDirective(option="gres", value="gpu"), "name\\[:type\\]:N"),
        (lambda: SbatchDirective(option="parsable", value="x"), "takes no value"),
        (lambda: SbatchDirective(option="comment", value="a hetjob b"), "hetjob"),
        (lambda: SbatchDirective(option="partition"), "needs a value"),
        (lambda: SrunOption(name="mpi", value="pmix"), "typed field"),
        (lambda: SrunOption(name="container-image", value="x"), "container"),
        (lambda: SrunOption(name="bogus"), "not an srun option"),
        (lambda: SrunStep(), "exactly one"),
        (
            lambda: SrunStep(payload=Payload(body=(cmd("x"),)), command=(Lit(value="y"),)),
            "exactly one",
        ),
        (lambda: SrunStep(command=(Lit(value="y"),), ntasks=0), ">= 1"),
        (lambda: SrunStep(command=(Lit(value="y"),), mpi="openmpi"), "mpi plugin"),
        (
            lambda: SrunStep(command=(Lit(value="y"),), extra=(SrunOption(name="overlap"),) * 2),
            "repeat",
        ),
        (lambda: Mount(source="rel", target="/x"), "absolute"),
        (lambda: Mount(source="/a", target="/x", flags=("bogus",)), "mount flag"),
        (lambda: PyxisContainer(image="a b"), "holds ' ' at offset 1"),
        (lambda: PyxisContainer(image="--volume=/:/host"), "read it as an option"),
        (lambda: DockerRun(image="-v/:/host"), "read it as an option"),
        (lambda: DockerRun(image="/images/trtllm.sqsh"), "not an image reference"),
        (lambda: PyxisContainer(image="i", name="a:b"), "container name"),
        (lambda: PyxisContainer(image="i", name_flag="exec"), "needs a container name"),
        (lambda: PyxisContainer(image="i", workdir="rel"), "absolute"),
        (lambda: PyxisContainer(image="i", env=("A=B",)), "variable NAME"),
        (lambda: DockerRun(image="i"), "exactly one"),
        (lambda: BindMount(source="x", target="/y"), "absolute"),
        (
            lambda: Script(
                body=(cmd("true"),),
                directives=(SbatchDirective(option="nodes", value=1),) * 2,
            ),
            "repeat",
        ),
        (lambda: Script(body=(cmd("true"),), shebang="bin/bash"), "must start with #!"),
    ],
)
def test_invalid_values_cannot_be_made(make: object, message: str) -> None:
    with pytest.raises(ModelError, match=message):
        make()  # type: ignore[operator]


def test_concat_merges_literals() -> None:
    assert concat("a", "b") == Lit(value="ab")
    word = concat("--x=", Param(name="HOME"), "/y")
    assert isinstance(word, Concat) and len(word.parts) == 3


@pytest.mark.parametrize(
    ("text", "minutes"),
    [
        ("02:00:00", 120),
        ("90", 90),
        ("1:30", 2),
        ("1-00", 1440),
        ("1-01:30", 1530),
        ("2-00:00:30", 2881),
        ("UNLIMITED", None),
        ("infinite", None),
    ],
)
def test_time_limits(text: str, minutes: int | None) -> None:
    assert parse_time_limit(text) == minutes


@pytest.mark.parametrize("text", ["", "2h", "00:00:00", "1:60:00", "0", "-1", "1:2:3:4"])
def test_bad_time_limits(text: str) -> None:
    with pytest.raises(ModelError, match="not a Slurm time"):
        parse_time_limit(text)


def _one_command(command: Command) -> Script:
    return Script(body=(command,))


@settings(max_examples=scaled(150))
@given(scripts.filter(lambda s: b"raw_shell" not in msgspec.json.encode(s)))
# `>&-0` is `>&-` then the word `0` to bash: the target is quoted
@example(_one_command(cmd("", redirects=(Redirect(op=">&", target=Lit(value="-0")),))))
@example(_one_command(cmd("x", redirects=(Redirect(op=">&", target=Lit(value="-e"), fd=2),))))
# bashlex 0.18 fails on `<(`/`>(` inside the single quotes of an assignment value
@example(
    _one_command(
        Command(argv=(Lit(value="x"),), assigns=(Assign(name="v", value=Lit(value="a>(b")),))
    )
)
@example(
    _one_command(
        Command(argv=(Lit(value="x"),), assigns=(Assign(name="v", value=Lit(value="<(")),))
    )
)
def test_every_script_emits_verified_and_parses_in_bash(script: Script) -> None:
    assert_bash_syntax(emit(script))


def test_an_all_digit_dup_target_is_written_canonically() -> None:
    # bash reads `>&00` as descriptor 0 whatever the quoting: the model refuses the spelling
    with pytest.raises(ModelError, match="write it as 0"):
        Redirect(op=">&", target=Lit(value="00"))
    assert (
        emit(Payload(body=(cmd("x", redirects=(Redirect(op=">&", target=Lit(value="2")),)),)))
        == "x >&2"
    )
