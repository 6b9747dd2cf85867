"""The bash emitter on hand-built scripts: snapshots, bash -n, ShellCheck, and the verifier."""

from __future__ import annotations

from collections.abc import Callable

import msgspec
import pytest
from hypothesis import given, settings, strategies as st
from syrupy.assertion import SnapshotAssertion

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
    RawShell,
    SbatchDirective,
    Script,
    SrunOption,
    SrunStep,
    Unset,
    VerifyError,
    cmd,
    concat,
    emit,
    to_stderr,
)
from scriptast.emitters.bash import BashEmitter
from scriptast.errors import QuoteError
from scriptast.readers.roundtrip.srun_argv import parse_srun
from scriptast.readers.roundtrip.verify import verify_emitted
from tests.model_strategies import scripts, srun_steps
from tests.profiles import scaled
from tests.shell_checks import assert_bash_syntax, assert_shellcheck_clean
from tests.snapshot_files import ShellFile, SlurmFile

CONTAINER = PyxisContainer(
    image="nvcr.io#nvidia/tensorrt-llm/release:1.0.0",
    name="llama_bench",
    mounts=(
        Mount(source="/home/alice", target="/home/alice"),
        Mount(source="/data/models", target="/models", flags=("ro",)),
    ),
    workdir="/home/alice/TensorRT-LLM",
)


def _two_step_bench() -> Script:
    return Script(
        header=(Comment(text="A hand-built two-step job."),),
        directives=(
            SbatchDirective(option="job-name", value="llama_bench"),
            SbatchDirective(option="output", value="/logs/llama_bench_%j.out"),
            SbatchDirective(option="nodes", value=1),
            SbatchDirective(option="ntasks", value=2),
            SbatchDirective(option="gres", value="gpu:2"),
            SbatchDirective(option="time", value="02:00:00"),
            SbatchDirective(option="comment", value="needs 'quotes' and # hash"),
        ),
        body=(
            cmd("set", "-euo", "pipefail"),
            cmd("echo", concat("Job ", Param(name="SLURM_JOB_ID"), " on ", Param(name="HOSTNAME"))),
            SrunStep(
                ntasks=1,
                kill_on_bad_exit=True,
                container=CONTAINER,
                payload=Payload(
                    body=(cmd("cd", "/home/alice/TensorRT-LLM"), cmd("pip", "install", "-e", "."))
                ),
            ),
            SrunStep(
                ntasks=2,
                mpi="pmix_v4",
                kill_on_bad_exit=True,
                extra=(SrunOption(name="cpus-per-task", value=8),),
                container=CONTAINER,
                payload=Payload(
                    body=(
                        Export(name="LLM_MODELS_ROOT", value=Lit(value="/models")),
                        cmd(
                            "trtllm-llmapi-launch",
                            "trtllm-bench",
                            "--model",
                            "meta-llama/Llama-3.1-8B",
                            "throughput",
                            "--tp",
                            "2",
                            "--dataset",
                            "/tmp/data set.json",
                        ),
                    )
                ),
            ),
        ),
    )


def _control_flow() -> Script:
    return Script(
        body=(
            cmd("set", "-euo", "pipefail"),
            For(
                var="name",
                items=(
                    Param(name="PMI", form="prefix_names"),
                    Param(name="SLURM", form="prefix_names"),
                ),
                body=(
                    If(
                        condition=cmd("[", Param(name="name"), "!=", "SLURM_PROCID", "]"),
                        then=(Unset(names=(Param(name="name"),)),),
                    ),
                ),
            ),
            Blank(),
            cmd("set", "+e"),
            AndOr(
                op="||",
                left=cmd("test", "-d", "/tmp"),
                right=cmd("echo", "no tmp", redirects=(to_stderr(),)),
            ),
            Assign(name="rc", value=Param(name="?")),
            cmd("set", "-e"),
            If(
                condition=cmd("[", Param(name="rc"), "-ne", "0", "]"),
                then=(cmd("echo", concat("failed with exit code ", Param(name="rc"))),),
                orelse=(cmd("echo", "ok"),),
            ),
            cmd("exit", Param(name="rc")),
        )
    )


def _docker() -> Script:
    return Script(
        body=(
            DockerRun(
                image="nvcr.io/nvidia/tensorrt-llm/release:1.0.0",
                name="llama_local",
                env=(EnvVar(name="LLM_MODELS_ROOT", value=Lit(value="/models")),),
                mounts=(
                    BindMount(source="/home/alice", target="/home/alice"),
                    BindMount(source="/data/my,models", target="/models", readonly=True),
                ),
                workdir="/home/alice/TensorRT-LLM",
                payload=Payload(
                    body=(
                        cmd("python3", "-c", "import tensorrt_llm"),
                        cmd("pytest", "-v", "tests/unittest/test_x.py::test_a[tp2-it's]"),
                    )
                ),
            ),
        )
    )


def _nasty_payload() -> Script:
    nasty = 'print("it\'s $HOME `date` \\\\ ${X")\n\ttab!*?[x]{a,b}(c)<d>|e&f;g#h~i=j%k,l:m'
    return Script(
        directives=(SbatchDirective(option="job-name", value="nasty"),),
        body=(
            SrunStep(
                container=PyxisContainer(
                    image="registry#img:tag",
                    env=("HOME", "PATH"),
                    mount_home=False,
                    remap_root=True,
                    writable=True,
                    name="n",
                    name_flag="exec",
                ),
                payload=Payload(
                    body=(cmd("python3", "-c", nasty), cmd("printf", "%s\\n", "bell\x07"))
                ),
            ),
        ),
    )


SCRIPTS = {
    "two_step_bench": _two_step_bench,
    "control_flow": _control_flow,
    "docker": _docker,
    "nasty_payload": _nasty_payload,
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_hand_built_scripts(name: str, snapshot: SnapshotAssertion) -> None:
    text = emit(SCRIPTS[name]())
    assert_bash_syntax(text)
    assert_shellcheck_clean(text)
    extension = ShellFile if name == "docker" else SlurmFile
    assert text == snapshot(extension_class=extension)


def test_emit_is_deterministic() -> None:
    assert emit(_two_step_bench()) == emit(_two_step_bench())


def test_json_round_trip_emits_the_same_text() -> None:
    script = _nasty_payload()
    again = msgspec.json.decode(msgspec.json.encode(script), type=Script)
    assert emit(again) == emit(script)


def test_long_commands_put_one_option_a_line() -> None:
    text = emit(_two_step_bench())
    assert "srun -l \\\n    --ntasks=1 \\\n    --kill-on-bad-exit=1 \\\n" in text


def test_payload_is_one_quoted_word() -> None:
    text = emit(_two_step_bench())
    assert "bash -c 'cd /home/alice/TensorRT-LLM\npip install -e .'" in text


def test_directives_come_before_the_first_command() -> None:
    lines = emit(_two_step_bench()).splitlines()
    last_directive = max(i for i, line in enumerate(lines) if line.startswith("#SBATCH"))
    first_command = lines.index("set -euo pipefail")
    assert last_directive < first_command


@pytest.mark.parametrize(
    ("tamper", "message"),
    [
        (lambda t: t.replace("    --ntasks=2 \\\n", "    --ntasks=3 \\\n"), "reads back as"),
        (
            lambda t: t.replace("set -euo pipefail\n", "set -euo pipefail\n#SBATCH --nodes=2\n"),
            "after the first command",
        ),
        (lambda t: t.replace("#SBATCH --nodes=1", "#SBATCH --nodes=2"), "do not read back"),
        (lambda t: t.replace("'/tmp/data set.json'", "/tmp/data set.json"), "reads back as"),
        (lambda t: t.replace("pip install -e .", "pip install -e . ; rm -rf /"), "reads back as"),
        (lambda t: t.replace("set -euo pipefail\n", "set -euo pipefail; rm -rf /\n"), "commands"),
        (lambda t: t.replace("--tp 2", "--tp 4"), "reads back as"),
        (lambda t: t + "echo extra\n", "commands"),
        (lambda t: t.replace("bash -c 'cd", "bash -c 'cd '\"'\"'"), "parse|reads back|payload"),
    ],
)
def test_verifier_catches_text_that_differs_from_the_model(tamper: object, message: str) -> None:
    script = _two_step_bench()
    text = emit(script)
    tampered = tamper(text)  # type: ignore[operator]
    assert tampered != text
    with pytest.raises(VerifyError, match=message):
        verify_emitted(tampered, script, BashEmitter())


def test_raw_shell_is_emitted_verbatim_and_checked() -> None:
    script = Script(body=(cmd("echo", RawShell(text="$(date +%s)")),))
    text = emit(script)
    assert "echo $(date +%s)" in text
    with pytest.raises(VerifyError, match="raw shell"):
        verify_emitted(text.replace("%s", "%N"), script, BashEmitter())


def test_unrepresentable_mount_is_an_error_naming_the_path() -> None:
    container = PyxisContainer(image="i", mounts=(Mount(source="/my models", target="/models"),))
    script = Script(body=(SrunStep(command=(Lit(value="true"),), container=container),))
    with pytest.raises(QuoteError, match=r"'/my models'.*space"):
        emit(script)


def test_unknown_node_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        BashEmitter().statement(object(), 0)  # type: ignore[arg-type]


@settings(max_examples=scaled(300))
@given(srun_steps)
def test_srun_options_parse_back_into_the_same_step(step: SrunStep) -> None:
    lines = BashEmitter().srun_lines(step)
    argv = [w.value for line in lines for w in line if isinstance(w, Lit)]
    assert len(argv) == sum(len(line) for line in lines)
    parsed = parse_srun(argv)
    assert parsed == msgspec.structs.replace(step, payload=None, command=parsed.command)
    assert [w.value for w in parsed.command if isinstance(w, Lit)][:2] == ["bash", "-c"]


def test_remembered_lines_tell_true_from_one() -> None:
    def step(value: object) -> Script:
        option = SrunOption(name="comment", value=value)  # type: ignore[arg-type]
        return Script(body=(SrunStep(extra=(option,), command=(Lit(value="true"),)),))

    assert "--comment=1 " in emit(step(1), verify=False)
    assert "--comment=True " in emit(step(True), verify=False)
    assert "--comment=1 " in emit(step(1), verify=False)


def _outcome(script: Script) -> str:
    try:
        return emit(script, verify=False)
    except QuoteError as error:
        return f"error: {error}"


@given(st.lists(scripts, min_size=2, max_size=4))
@settings(max_examples=scaled(100))
def test_remembered_statements_emit_what_a_fresh_emitter_does(batch: list[Script]) -> None:
    from scriptast.emitters import bash

    remembered = [_outcome(s) for s in batch]
    bash.EMITTED.clear()
    assert [_outcome(s) for s in reversed(batch)][::-1] == remembered


def test_the_statement_memory_is_bounded() -> None:
    from scriptast.emitters import bash

    for index in range(bash.EMITTED.limit + 50):
        emit(Script(body=(cmd("echo", str(index)),)), verify=False)
    assert len(bash.EMITTED) == bash.EMITTED.limit


def test_a_statement_that_runs_into_the_next_is_caught() -> None:
    script = Script(body=(Command(argv=(Lit(value="echo"), RawShell(text="a\\"))), cmd("true")))
    text = emit(script, verify=False)
    assert text.endswith("echo a\\\ntrue\n")
    with pytest.raises(VerifyError, match="1 commands where the model has 2"):
        verify_emitted(text, script, BashEmitter())


@given(scripts)
@settings(max_examples=scaled(150))
def test_statement_by_statement_verification_agrees_with_one_parse(script: Script) -> None:
    from scriptast.readers.roundtrip import verify

    try:
        text = emit(script, verify=False)
    except QuoteError:
        return
    verify.VERIFIED.clear()

    def verdict(check: Callable[[], None]) -> str:
        try:
            check()
        except VerifyError as error:
            return str(error)
        return "ok"

    piecewise = verdict(lambda: verify_emitted(text, script, BashEmitter()))
    whole = verdict(lambda: verify._verify_statements(text, script.body, BashEmitter()))
    assert (piecewise == "ok") == (whole == "ok"), (piecewise, whole)


def test_verified_statements_are_not_parsed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    from scriptast.readers.roundtrip import verify

    script = _two_step_bench()
    text = emit(script, verify=False)
    verify.VERIFIED.clear()
    parses: list[str] = []
    original = verify.parse_commands

    def counting(piece: str) -> object:
        parses.append(piece)
        return original(piece)

    monkeypatch.setattr(verify, "parse_commands", counting)
    verify_emitted(text, script, BashEmitter())
    assert parses
    parses.clear()
    verify_emitted(text, script, BashEmitter())
    assert parses == []
    tampered = text.replace("--ntasks=2", "--ntasks=3")
    with pytest.raises(VerifyError):
        verify_emitted(tampered, script, BashEmitter())


def test_verification_runs_in_a_worker_thread() -> None:
    import threading

    from scriptast.readers.roundtrip import verify

    verify.VERIFIED.clear()
    found: list[str] = []
    worker = threading.Thread(target=lambda: found.append(emit(_two_step_bench())))
    worker.start()
    worker.join()
    assert found and found[0] == emit(_two_step_bench(), verify=False)


def test_closing_a_descriptor_reads_back() -> None:
    script = Script(body=(Command(argv=(Lit(value="echo"),), redirects=(to_stderr(),)),))
    assert emit(script).endswith("echo >&2\n")
    from scriptast import Redirect

    closing = Redirect(op=">&", target=Lit(value="-"))
    assert emit(Script(body=(Command(argv=(Lit(value="echo"),), redirects=(closing,)),))).endswith(
        "echo >&-\n"
    )
