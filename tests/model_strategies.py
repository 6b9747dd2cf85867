"""Hypothesis strategies that build valid model values of every node kind."""

from __future__ import annotations

from hypothesis import strategies as st

from scriptast import (
    AndOr,
    Assign,
    BindMount,
    Blank,
    Command,
    Comment,
    DockerRun,
    EnvVar,
    Export,
    For,
    If,
    Lit,
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
)
from scriptast.model.words import Concat, RawShell

NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from("\n\t'\"$")
)
PATHS = st.from_regex(r"/[A-Za-z0-9_./-]{0,20}", fullmatch=True)

lits = st.builds(Lit, value=TEXT)
params = st.one_of(
    st.builds(Param, name=NAMES),
    st.builds(
        Param,
        name=NAMES,
        form=st.just("default"),
        default=st.from_regex(r"[a-z0-9/]{0,5}", fullmatch=True),
    ),
    st.builds(Param, name=NAMES, form=st.just("prefix_names")),
    st.builds(Param, name=st.sampled_from(["?", "#", "@", "1"])),
)


def _not_a_padded_descriptor(word: Lit) -> bool:
    return not (word.value.isdecimal() and word.value != str(int(word.value)))


raws = st.builds(RawShell, text=st.text(min_size=1, max_size=8))
parts = st.one_of(lits, params, raws)
words = st.one_of(lits, params, st.builds(Concat, parts=st.tuples(parts, parts)))
commands = st.builds(
    Command,
    argv=st.lists(words, min_size=1, max_size=4).map(tuple),
    assigns=st.lists(st.builds(Assign, name=NAMES, value=words), max_size=1).map(tuple),
    redirects=st.lists(
        st.sampled_from([">", ">>", "<", ">&"]).flatmap(
            lambda op: st.builds(
                Redirect,
                op=st.just(op),
                # the model refuses `>&00` (bash reads it as descriptor 0): not a valid node
                target=lits if op != ">&" else lits.filter(_not_a_padded_descriptor),
                fd=st.none() | st.integers(0, 9),
            )
        ),
        max_size=1,
    ).map(tuple),
)
simple = st.one_of(
    commands,
    st.builds(Assign, name=NAMES, value=words),
    st.builds(Export, name=NAMES, value=st.none() | words),
    st.builds(
        Unset, names=st.lists(NAMES.map(lambda n: Lit(value=n)), min_size=1, max_size=3).map(tuple)
    ),
    st.builds(AndOr, op=st.sampled_from(["&&", "||"]), left=commands, right=commands),
    st.builds(Comment, text=st.from_regex(r"[^\n\r\x00]{0,20}", fullmatch=True)),
    st.builds(Blank),
)
statements = st.recursive(
    simple,
    lambda inner: st.one_of(
        st.builds(
            If,
            condition=commands,
            then=st.tuples(commands, inner),
            orelse=st.just(()) | st.tuples(commands),
        ),
        st.builds(For, var=NAMES, items=st.tuples(words), body=st.tuples(commands, inner)),
    ),
    max_leaves=6,
)
payloads = st.builds(
    Payload,
    body=st.tuples(commands).flatmap(
        lambda first: st.lists(statements, max_size=3).map(lambda rest: first + tuple(rest))
    ),
)
mounts = st.builds(
    Mount,
    source=PATHS,
    target=PATHS,
    flags=st.lists(st.sampled_from(["ro", "rw", "x-create=dir"]), max_size=2, unique=True).map(
        tuple
    ),
)
containers = st.builds(
    PyxisContainer,
    image=st.from_regex(r"[a-z0-9]+(\.[a-z0-9]+)*#[a-z0-9]+(/[a-z0-9]+)*:\w[\w.]*", fullmatch=True),
    mounts=st.lists(mounts, max_size=3).map(tuple),
    name=st.none() | st.from_regex(r"[a-z_]{1,10}", fullmatch=True),
    workdir=st.none() | PATHS,
    env=st.lists(NAMES, max_size=2).map(tuple),
    mount_home=st.none() | st.booleans(),
    remap_root=st.none() | st.booleans(),
    writable=st.none() | st.booleans(),
)
srun_steps = st.builds(
    SrunStep,
    payload=payloads,
    ntasks=st.none() | st.integers(1, 16),
    ntasks_per_node=st.none() | st.integers(1, 8),
    nodes=st.none() | st.integers(1, 4),
    gres=st.none() | st.integers(1, 8).map(lambda n: f"gpu:{n}"),
    mpi=st.none() | st.sampled_from(["pmix", "pmix_v4", "pmi2", "none"]),
    kill_on_bad_exit=st.none() | st.booleans(),
    extra=st.sampled_from(
        [(), (SrunOption(name="overlap"),), (SrunOption(name="cpus-per-task", value=4),)]
    ),
    container=st.none() | containers,
)
docker_runs = st.builds(
    DockerRun,
    image=st.from_regex(r"[a-z0-9]+([./][a-z0-9]+)*:\w[\w.]*", fullmatch=True),
    name=st.none() | st.from_regex(r"[a-z_]{1,10}", fullmatch=True),
    env=st.lists(st.builds(EnvVar, name=NAMES, value=lits), max_size=2).map(tuple),
    mounts=st.lists(
        st.builds(BindMount, source=PATHS, target=PATHS, readonly=st.booleans()), max_size=2
    ).map(tuple),
    payload=payloads,
)
directives = st.lists(
    st.one_of(
        st.builds(SbatchDirective, option=st.just("nodes"), value=st.integers(1, 8)),
        st.builds(
            SbatchDirective,
            option=st.just("time"),
            value=st.sampled_from(["02:00:00", "30", "1-00:00:00"]),
        ),
        st.builds(
            SbatchDirective,
            option=st.just("job-name"),
            value=TEXT.filter(lambda t: "\n" not in t and "\r" not in t and "hetjob" not in t),
        ),
        st.builds(SbatchDirective, option=st.just("gres"), value=st.just("gpu:4")),
        st.builds(SbatchDirective, option=st.just("exclusive")),
    ),
    max_size=5,
    unique_by=lambda d: d.option,
).map(tuple)
scripts = st.builds(
    Script,
    directives=directives,
    body=st.lists(st.one_of(statements, srun_steps, docker_runs), min_size=1, max_size=4).map(
        tuple
    ),
)
