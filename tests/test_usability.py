"""What a person meets first: help with examples, completion, errors, shells, stdin and --json."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings, strategies as st
from typer.testing import CliRunner

from scriptast.cli.app import app
from scriptast.cli.say import fail
from scriptast.emitters.shells import FishQuoter, PwshQuoter, ShellQuoter, quoter_for
from scriptast.errors import QuoteError
from tests.profiles import scaled
from tests.test_cli import console_script

runner = CliRunner()
ROOT = Path(__file__).resolve().parent.parent
COMMANDS = [
    [],
    ["emit"],
    ["verify"],
    ["schema"],
    ["probe-slurm"],
    *[["emit", w] for w in ("pytest", "eval", "bench", "custom", "perf-sanity")],
]
NASTY = st.text(
    alphabet=st.one_of(
        st.characters(blacklist_categories=("Cs", "Cc")),
        st.sampled_from("'\"$`\\!*?[]{}()<>|&;#~=%,:@ \t\n"),
    )
)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "scriptast")
def test_every_help_has_a_summary_and_examples(command: list[str]) -> None:
    result = runner.invoke(app, [*command, "--help"])
    assert result.exit_code == 0
    assert "Examples:" in result.stdout and "$ scriptast" in result.stdout
    if command[:1] == ["emit"] and len(command) == 2:
        for panel in ("Job", "Cluster", "Container and models", "Output"):
            assert f"─ {panel} " in result.stdout, panel


def test_scriptast_alone_prints_the_overview() -> None:
    result = runner.invoke(app, [])
    assert result.exit_code == 0 and "Commands" in result.stdout and "emit" in result.stdout


def _help_examples() -> list[str]:
    from scriptast.builders.categories import CATEGORIES
    from scriptast.cli import examples as cli_help

    examples = [cli_help.workflow_examples(c.examples) for c in CATEGORIES.values()]
    texts = [cli_help.OVERVIEW, cli_help.EMIT, *examples]
    return sorted(
        {
            line.strip()[2:]
            for text in texts
            for line in text.splitlines()
            if (line.strip().startswith("$ scriptast emit") and "--request examples/" in line)
            or (line.strip().startswith("$ scriptast emit") and "--work-dir" in line)
        }
    )


@pytest.mark.parametrize("example", _help_examples())
def test_help_examples_run(example: str, tmp_path: Path) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    shutil.copytree(ROOT / "tests/fixtures", tmp_path / "tests/fixtures")
    argv = shlex.split(example)[1:]
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = runner.invoke(app, argv)
    finally:
        os.chdir(old)
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    ("shell", "registers"),
    [("bash", "complete -o default -F _scriptast_completion scriptast"),
     ("zsh", "#compdef scriptast"), ("fish", "complete --command scriptast")],
)  # fmt: skip
def test_completion_scripts(shell: str, registers: str) -> None:
    """Each shell's completion script, asked for by name (`_SCRIPTAST_COMPLETE=source_<shell>`):
    the same however the suite is started. (`--show-completion` picks the shell it runs under,
    which a suite started by CI tooling, nohup or in the background does not have.)"""
    script = Path(sys.executable).parent / "scriptast"
    done = subprocess.run([str(script)], env={**os.environ, "_SCRIPTAST_COMPLETE": f"source_{shell}"},
                          capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          start_new_session=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert registers in done.stdout
    assert f"_SCRIPTAST_COMPLETE=complete_{shell}" in done.stdout


def _complete(env: dict[str, str]) -> list[str]:
    script = Path(sys.executable).parent / "scriptast"
    out = subprocess.run(
        [str(script)], env={**os.environ, **env}, cwd=ROOT, capture_output=True, text=True
    )
    return out.stdout.split()


def test_partition_names_complete_from_the_slurm_env_given_earlier() -> None:
    words = "scriptast emit bench --slurm-env-file examples/slurm_env.json --partition "
    assert _complete(
        {"_SCRIPTAST_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": "6"}
    ) == ["batch", "arm", "nogres", "unknown_arch"]
    fish = _complete(
        {
            "_SCRIPTAST_COMPLETE": "complete_fish",
            "_TYPER_COMPLETE_FISH_ACTION": "get-args",
            "_TYPER_COMPLETE_ARGS": words + "n",
        }
    )
    assert fish == ["nogres"]
    accounts = "scriptast emit bench --slurm-env-file examples/slurm_env.json --account "
    assert _complete(
        {"_SCRIPTAST_COMPLETE": "complete_bash", "COMP_WORDS": accounts, "COMP_CWORD": "6"}
    ) == ["coreai_trtllm", "perf_qa"]


def test_errors_are_coloured_only_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.delenv("NO_COLOR", raising=False)
    with pytest.raises(SystemExit):
        fail("boom")
    assert capsys.readouterr().err == "\x1b[1;31merror:\x1b[0m boom\n"
    monkeypatch.setenv("NO_COLOR", "1")
    with pytest.raises(SystemExit):
        fail("boom")
    assert capsys.readouterr().err == "error: boom\n"


def test_debug_shows_the_exception_and_default_shows_one_line(tmp_path: Path) -> None:
    argv = [
        "emit",
        "bench",
        "--execution-scenario",
        "local_slurm",
        "--work-dir",
        str(tmp_path / "w"),
        "--repo-root",
        str(tmp_path),
    ]
    quiet = runner.invoke(app, argv)
    assert (
        quiet.exit_code == 1 and quiet.stderr.count("\n") == 1 and "Traceback" not in quiet.stderr
    )
    loud = runner.invoke(app, [*argv, "--debug"])
    assert loud.exception is not None and type(loud.exception).__name__ == "InputError"


def test_json_result_and_stdin(tmp_path: Path) -> None:
    fields = json.loads((ROOT / "examples/eval_local_slurm.json").read_text())
    fields = {
        k: (str(ROOT / v) if k in ("repo_root", "slurm_env_file", "models_path") else v)
        for k, v in fields.items()
    }
    fields["work_dir"] = str(tmp_path / "w")
    result = runner.invoke(app, ["emit", "--request", "-", "--json"], input=json.dumps(fields))
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["script"] == str(tmp_path / "w/llama_3_1_8b_instruct_eval.slurm")
    assert sorted(data["files"]) == sorted(str(p) for p in (tmp_path / "w").iterdir())
    assert data["job_spec"]["slurm_params"]["mpi_plugin"] == "pmix_v4" and data["warnings"] == []
    assert data["job_spec"] == json.loads((tmp_path / "w/job_spec.json").read_text())


# --- the docker command for the user's shell ----------------------------------------------


def _docker_stdout(shell: str) -> str:
    old = os.getcwd()
    os.chdir(ROOT)
    try:
        result = runner.invoke(
            app,
            [
                "emit",
                "--request",
                "examples/custom_local_docker.json",
                "--stdout",
                "--shell",
                shell,
            ],
        )
    finally:
        os.chdir(old)
    assert result.exit_code == 0, result.output
    return result.stdout


def _expected_docker_words() -> list[str]:
    bash_text = _docker_stdout("bash")
    probe = 'docker() { printf "%s\\0" "$@"; }\n' + bash_text
    out = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", probe], capture_output=True, check=True
    )
    return out.stdout.decode().split("\0")[:-1]


def test_docker_command_for_bash_runs_as_the_file_does() -> None:
    words = _expected_docker_words()
    assert words[:3] == ["run", "--rm", "--net=host"] and words[-3:-1] == ["bash", "-c"]
    assert "pip install --retries 10 -e ." in words[-1]


@pytest.mark.skipif(
    shutil.which("fish") is None and os.environ.get("CI") != "true", reason="fish not installed"
)
def test_docker_command_for_fish_gives_the_same_argv() -> None:
    text = _docker_stdout("fish")
    assert " \\\n    " in text
    probe = "function docker; printf '%s\\0' $argv; end\n" + text
    out = subprocess.run(["fish", "--no-config", "-c", probe], capture_output=True, check=True)
    assert out.stdout.decode().split("\0")[:-1] == _expected_docker_words()


PWSH_QUOTES = "'\u2018\u2019\u201a\u201b"


def _read_pwsh(text: str) -> list[str]:
    """PowerShell's reading of our output, by its documented rules: words separated by blanks,
    single-quoted strings verbatim (any of ' and U+2018..U+201B opens or closes one, and two
    in a row stand for one), a backtick at line end continues the line."""
    text = text.replace(" `\n", " ")
    words, index = [], 0
    while index < len(text):
        if text[index] in " \t\n":
            index += 1
            continue
        if text[index] in PWSH_QUOTES:
            chunk, index = [], index + 1
            while True:
                if (
                    text[index] in PWSH_QUOTES
                    and text[index + 1 : index + 2] != ""
                    and text[index + 1] in PWSH_QUOTES
                ):
                    chunk.append(text[index])
                    index += 2
                elif text[index] in PWSH_QUOTES:
                    index += 1
                    break
                else:
                    chunk.append(text[index])
                    index += 1
            words.append("".join(chunk))
        else:
            end = index
            while end < len(text) and text[end] not in " \t\n":
                end += 1
            words.append(text[index:end])
            index = end
    return words


def test_docker_command_for_pwsh_by_its_documented_rules() -> None:
    text = _docker_stdout("pwsh")
    assert text.startswith("docker run `\n")
    assert _read_pwsh(text)[1:] == _expected_docker_words()


@settings(max_examples=scaled(300))
@given(NASTY)
def test_fish_quoting_survives_real_fish(value: str) -> None:
    if shutil.which("fish") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("fish is not installed; .ci/run installs it")
        return
    out = subprocess.run(
        ["fish", "--no-config", "-c", f"printf '%s\\0' {FishQuoter().word(value)}"],
        capture_output=True,
        check=True,
    )
    assert out.stdout == value.encode() + b"\0"


@given(NASTY)
def test_pwsh_quoting_by_documented_rules(value: str) -> None:
    word = PwshQuoter().word(value)
    if word.startswith("'"):
        assert _read_pwsh(word) == [value]
    else:
        assert re.fullmatch(r"[A-Za-z0-9_+=:./-]+", word) and word == value


def test_shell_detection_falls_back_to_posix() -> None:
    assert type(quoter_for(None)) is ShellQuoter and type(quoter_for("tcsh")) is ShellQuoter
    assert type(quoter_for("fish")) is FishQuoter and type(quoter_for("PowerShell")) is PwshQuoter
    with pytest.raises(QuoteError):
        FishQuoter().word("a\0b")
    result = runner.invoke(
        app,
        [
            "emit",
            "--request",
            str(ROOT / "examples/bench_local_docker.json"),
            "--stdout",
            "--shell",
            "tcsh",
        ],
    )
    assert result.exit_code == 2 and "unknown --shell 'tcsh'" in result.stderr


# --- verify against a cluster ------------------------------------------------------------

GOOD = """#!/bin/bash
#SBATCH -p arm
#SBATCH --gres=gpu:4 --time=02:00:00
srun --mpi=pmix_v4 --gres=gpu:2 --container-image=nvcr.io#nvidia/x:1 bash -c 'echo hi'
"""


def test_verify_against_slurm_env(tmp_path: Path) -> None:
    env = str(ROOT / "examples/slurm_env.json")
    good = tmp_path / "good.slurm"
    good.write_text(GOOD)
    ok = runner.invoke(app, ["verify", str(good), "--slurm-env-file", env])
    assert ok.exit_code == 0, ok.output
    bad = tmp_path / "bad.slurm"
    bad.write_text(
        GOOD.replace("gpu:4 ", "gpu:8 ")
        .replace("02:00:00", "9:00:00")
        .replace("pmix_v4", "pmix_v5")
    )
    result = runner.invoke(app, ["verify", str(bad), "--slurm-env-file", env])
    assert result.exit_code == 1
    assert "asks for 8 GPUs; nodes of 'arm' have 4" in result.stderr
    assert "--time=9:00:00 exceeds partition 'arm' MaxTime 8:00:00" in result.stderr
    assert "--mpi=pmix_v5 is not available (cluster offers: pmi2, pmix, pmix_v4)" in result.stderr
    other = tmp_path / "other.slurm"
    other.write_text("#!/bin/bash\n#SBATCH --partition=bach\n#SBATCH --gres=gpu:1\ntrue\n")
    result = runner.invoke(app, ["verify", str(other), "--slurm-env-file", env])
    assert (
        "partition 'bach' is not in slurm_env.json" in result.stderr
        and "did you mean 'batch'" in result.stderr
    )
    nogres = tmp_path / "nogres.slurm"
    nogres.write_text("#!/bin/bash\n#SBATCH --partition=nogres\n#SBATCH --gres=gpu:1\ntrue\n")
    assert (
        "has no GPU gres"
        in runner.invoke(app, ["verify", str(nogres), "--slurm-env-file", env]).stderr
    )


def test_pre_commit_hook_definition() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    (hook,) = hooks
    assert hook["id"] == "scriptast-verify" and hook["entry"] == "scriptast verify"
    assert re.search(hook["files"], "jobs/llama.slurm") and not re.search(
        hook["files"], "README.md"
    )


def _piped_help(*arguments: str) -> str:
    """`scriptast ARGUMENTS --help` as a pipe gets it (typer's help, 100 columns wide)."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "TERMINAL_WIDTH")}
    return subprocess.run([sys.executable, "-m", "scriptast", *arguments, "--help"],
                          capture_output=True, text=True, env=env, check=True).stdout  # fmt: skip


def test_piped_help_cuts_no_option_name_or_text() -> None:
    pages = {" ".join(path): _piped_help(*path) for path in _every_command()}
    assert len(pages) > 20 and not [key for key, page in pages.items() if "…" in page]


def test_a_category_help_shows_its_own_options_and_the_shared_ones() -> None:
    bench, custom = _piped_help("emit", "bench"), _piped_help("emit", "custom")
    assert "--bench-cmd" in bench and "--test-cmd" not in bench and "--custom-env" not in bench
    assert "--custom-env" in custom and "--custom-script" in custom and "--bench-cmd" not in custom
    for page in (bench, custom):
        assert "--partition" in page and "--llm-models-root" in page and "--explain" in page
    emit = _piped_help("emit")
    assert "--bench-cmd" in emit and "--test-cmd" in emit


def test_a_flag_of_another_workflow_is_a_usage_error() -> None:
    """`emit bench --help` leaves out --eval-cmd, and `emit bench --eval-cmd` is refused: it
    would not be used."""
    done = _console("emit", "bench", "--eval-cmd", "x", "--request",
                    "examples/bench_local_slurm.json", "--stdout")  # fmt: skip
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        "error: --eval-cmd is not an option of bench (it is eval's): drop it, or run "
        "`scriptast emit eval`\n"
    )
    same = _console("emit", "--workflow-type", "bench", "--test-cmd", "pytest x", "--request",
                    "examples/bench_local_slurm.json", "--stdout")  # fmt: skip
    assert same.returncode == 2 and "--test-cmd is not an option of bench" in same.stderr


def _console(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [console_script(), *argv], capture_output=True, text=True, cwd=ROOT,
        env={**os.environ, "NO_COLOR": "1"},
    )  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ("emit", "bench", "--partiton", "batch"),
            "error: no such option --partiton (did you mean '--partition'?); `scriptast emit "
            "bench --help` lists the options",
        ),
        (
            ("run", "--run-timeout", "5x", "out/x"),
            "error: invalid value for '--run-timeout': '5x' is not a duration (90, 90s, 5m, 2h "
            "or 02:00:00); `scriptast run --help` says more",
        ),
        (
            ("emit", "--request", "examples/bench_local_docker.json", "--stdout", "--shell", "zhs"),
            "error: unknown --shell 'zhs' (did you mean 'zsh'?); known: bash, dash, fish, ksh, "
            "powershell, pwsh, sh, zsh",
        ),
        (
            ("emit", "--request", "examples/bench_local_slurm.json", "--stdout", "--shell", "fish"),
            "error: --shell quotes a docker command, and a local_slurm job prints a Slurm "
            "script, which bash runs: drop --shell",
        ),
        (
            ("emti",),
            "error: no such command 'emti' (did you mean 'emit'?); `scriptast --help` lists the "
            "commands",
        ),
        (
            ("emit", "bench", "--required-devices", "two"),
            "error: invalid value for '--required-devices': Input should be a valid integer, "
            "unable to parse string as an integer; `scriptast emit bench --help` says more",
        ),
    ],
)
def test_a_usage_error_is_one_line_and_exit_2(argv: tuple[str, ...], line: str) -> None:
    done = _console(*argv)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", line + "\n")


def test_every_missing_field_is_named_at_once(tmp_path: Path) -> None:
    """Eight fields missing: one try names them all."""
    done = _console("emit", "bench", "--execution-scenario", "remote_slurm", "--work-dir",
                    str(tmp_path / "w"), "--repo-root", str(ROOT / "tests/fixtures/trtllm"))  # fmt: skip
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (
        "error: missing for bench on remote_slurm: --bench-cmd, --slurm-env-file, "
        "--partition, --account, --remote-repo-path, --remote-work-dir, --llm-models-root; "
        "give each in the request file or as the flag; `scriptast probe-slurm -o "
        "slurm_env.json` writes the cluster's partitions and accounts\n"
    )
    assert not (tmp_path / "w").exists()
    docker = _console("emit", "eval", "--execution-scenario", "local_docker", "--work-dir",
                      str(tmp_path / "w"), "--repo-root", str(ROOT / "tests/fixtures/trtllm"))  # fmt: skip
    assert docker.stderr == (
        "error: missing for eval on local_docker: --eval-cmd, --llm-models-root, "
        "--models-path (or --checkpoint-path); give each in the request file or as the flag\n"
    )


def test_help_shows_no_type_on_a_switch_and_no_python_type_names() -> None:
    pages = [_piped_help(*path) for path in (("emit",), ("emit", "pytest"), ("verify",),
                                             ("run",), ("results", "compare"))]  # fmt: skip
    assert all("<bool>" not in page for page in pages)
    assert all("list[" not in page for page in pages)
    assert "SCRIPT      <path>" in pages[2]


def test_perf_sanity_answers_to_both_names_and_offers_only_what_it_takes() -> None:
    assert "(also: emit perf_sanity)" in _piped_help("emit")
    own = _piped_help("emit", "perf-sanity")
    assert "--stdout" not in own and "--shell" not in own and "local_docker" not in own
    assert "local_slurm or remote_slurm (Slurm only)." in own
    for name in ("perf-sanity", "perf_sanity"):
        result = runner.invoke(app, ["emit", name, "--help"])
        assert result.exit_code == 0 and "--perf-config-yaml" in result.output
    refused = runner.invoke(
        app, ["emit", "perf_sanity", "--execution-scenario", "local_docker", "--work-dir", "w",
              "--repo-root", "tests/fixtures/trtllm", "--llm-models-root", "/models"],
    )  # fmt: skip
    assert refused.exit_code == 1
    assert "local_docker is not supported" in refused.stderr


def test_shell_without_stdout_is_refused_not_ignored(tmp_path: Path) -> None:
    request = json.loads(
        (Path(__file__).parent.parent / "examples/bench_local_docker.json").read_text()
    )
    work = tmp_path / "w"
    result = runner.invoke(
        app,
        ["emit", "--request", str(Path(__file__).parent.parent / "examples/bench_local_docker.json"),
         "--work-dir", str(work), "--shell", "fish"],
    )  # fmt: skip
    assert result.exit_code == 2
    assert result.stderr == (
        "error: --shell quotes the docker command --stdout prints: add --stdout or drop --shell\n"
    )
    assert not work.exists() and request["workflow_type"] == "bench"


@pytest.mark.parametrize(
    ("name", "known", "said"),
    [
        ("nope", ["batch", "arm", "nogres", "unknown_arch"], ""),
        ("bach", ["batch", "arm", "nogres"], " (did you mean 'batch'?)"),
        ("partiton", ["account", "partition"], " (did you mean 'partition'?)"),
        ("btach", ["batch"], " (did you mean 'batch'?)"),
        ("output_thruput", ["ttft", "output_throughput"], " (did you mean 'output_throughput'?)"),
        ("gpu", ["cpu", "gpus"], " (did you mean 'cpu'?)"),
        ("x", ["y"], ""),
        ("llama", ["mistral", "qwen"], ""),
    ],
)
def test_a_suggestion_is_offered_only_when_it_is_close(name: str, known: list[str], said: str
                                                        ) -> None:  # fmt: skip
    """At most one edit in four letters: a misspelling finds its name, another word nothing."""
    from scriptast.common.suggest import did_you_mean

    assert did_you_mean(name, known) == said


def test_a_partition_far_from_every_known_one_gets_no_suggestion(tmp_path: Path) -> None:
    bad = tmp_path / "job.slurm"
    bad.write_text("#!/bin/bash\n#SBATCH --partition=nope\ntrue\n")
    env = str(ROOT / "examples/slurm_env.json")
    result = runner.invoke(app, ["verify", str(bad), "--slurm-env-file", env])
    assert result.exit_code == 1
    assert "partition 'nope' is not in slurm_env.json (known: batch" in result.stderr
    assert "did you mean" not in result.stderr


def _every_command() -> list[list[str]]:
    import typer.main

    def walk(command: object, path: list[str]) -> list[list[str]]:
        found = [path]
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            if not getattr(sub, "hidden", False):
                found += walk(sub, [*path, name])
        return found

    return walk(typer.main.get_command(app), [])


def test_no_help_page_is_cut_at_80_columns() -> None:
    """Every command's help, as a terminal of 80 columns shows it: no word cut short with `…`
    (a long path or name in a help text is cropped by the table, so none is written)."""
    env = {**os.environ, "COLUMNS": "80"}
    cut = []
    for path in _every_command():
        shown = subprocess.run([sys.executable, "-m", "scriptast", *path, "--help"],
                               capture_output=True, text=True, env=env, check=True).stdout  # fmt: skip
        cut += [f"{' '.join(path)}: {line.strip()}" for line in shown.splitlines() if "…" in line]
    assert len(_every_command()) > 20
    assert cut == []


def test_each_command_is_summed_up_on_one_line_where_it_fits() -> None:
    """On a wide terminal every command's summary is one row: none breaks where its docstring
    does (cancel's did, at any width)."""
    env = {**os.environ, "COLUMNS": "200"}
    shown = subprocess.run([sys.executable, "-m", "scriptast", "--help"], capture_output=True,
                           text=True, env=env, check=True).stdout  # fmt: skip
    panel = shown.split("Commands")[1].split("╰")[0]
    rows = [line.strip("│").strip() for line in panel.splitlines()[1:] if line.strip("│ ")]
    commands = [path[0] for path in _every_command() if len(path) == 1]
    assert [row.split()[0] for row in rows] == commands or sorted(
        row.split()[0] for row in rows) == sorted(commands), rows  # fmt: skip
    assert "cancel       Cancel recorded runs (their own jobs, steps or containers) and wait " \
           "until they end." in rows  # fmt: skip


def test_a_category_is_described_in_a_users_words() -> None:
    shown = runner.invoke(app, ["emit", "eval", "--help"], env={"COLUMNS": "200"}).output
    assert "Run trtllm-eval (one node, always under --mpi)." in shown
    assert "Category" not in shown
