"""`scriptast verify` on scripts it did not write: never a false "does not parse" (real
`bash -n` decides what bashlex cannot read), and CRLF or NUL, which sbatch refuses, are errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from scriptast.cli.app import app
from scriptast.readers.linter.lint import BASHLEX_MAX_LINES, lint_text

runner = CliRunner()

VALID_BUT_NOT_FOR_BASHLEX = {
    "arithmetic": '#!/bin/bash\nn=$((SLURM_NNODES * 4))\necho "$n"\n',
    "case": '#!/bin/bash\ncase "$1" in\n  a) echo a ;;\n  *) echo other ;;\nesac\n',
    "double_brackets": "#!/bin/bash\nif [[ -n ${X:-} && $X == y* ]]; then echo y; fi\n",
    "arrays": '#!/bin/bash\nnodes=(a b c)\necho "${nodes[@]}"\n',
    "deep_nesting": "#!/bin/bash\n" + "if true; then\n" * 60 + "echo deep\n" + "fi\n" * 60,
    "quoted_heredoc": "#!/bin/bash\ncat <<'EOF'\n$HOME\nEOF\n",
}


@pytest.mark.parametrize("name", sorted(VALID_BUT_NOT_FOR_BASHLEX))
def test_valid_bash_bashlex_cannot_read_is_ok_by_bash(name: str, tmp_path: Path) -> None:
    path = tmp_path / f"{name}.sh"
    path.write_text(VALID_BUT_NOT_FOR_BASHLEX[name])
    result = runner.invoke(app, ["verify", str(path)])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(f"{path}: ok")
    report = lint_text(VALID_BUT_NOT_FOR_BASHLEX[name])
    assert report.findings == ()
    if report.bash_only is not None:  # said so, never passed off as a full check
        assert "syntax checked by bash -n" in result.stdout


def test_bash_only_is_said_so_and_its_sruns_are_still_read(tmp_path: Path) -> None:
    path = tmp_path / "a.sh"
    path.write_text(VALID_BUT_NOT_FOR_BASHLEX["arithmetic"])
    result = runner.invoke(app, ["verify", str(path)])
    assert "syntax checked by bash -n; bashlex cannot read it: arithmetic" in result.stdout
    path.write_text(VALID_BUT_NOT_FOR_BASHLEX["arithmetic"] + "srun --ntasks=$n --nodes=two x\n")
    result = runner.invoke(app, ["verify", str(path)])
    assert result.exit_code == 1
    assert result.stderr == (
        f"{path}:4: srun: --nodes=two: not a node count (N or MIN-MAX); srun refuses it\n"
    )


def test_a_long_script_goes_to_bash_alone_and_fast(tmp_path: Path) -> None:
    path = tmp_path / "long.sh"
    path.write_text("#!/bin/bash\n" + "".join(f"echo {i}\n" for i in range(100_000)))
    result = runner.invoke(app, ["verify", str(path)])
    assert result.exit_code == 0
    assert "bashlex cannot read it: 100002 lines are more than bashlex" in result.stdout
    broken = tmp_path / "long_broken.sh"
    broken.write_text(path.read_text() + "fi\n")
    result = runner.invoke(app, ["verify", str(broken)])
    assert result.exit_code == 1
    assert "bash -n: " in result.stderr and "syntax error" in result.stderr
    assert BASHLEX_MAX_LINES < 100_000


def test_invalid_bash_is_reported_with_bashs_words(tmp_path: Path) -> None:
    path = tmp_path / "bad.sh"
    path.write_text("#!/bin/bash\nx=$((1 + 2))\nif then fi\n")
    result = runner.invoke(app, ["verify", str(path)])
    assert result.exit_code == 1
    assert "syntax error near unexpected token `then'" in result.stderr


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"#!/bin/bash\r\n#SBATCH --nodes=1\r\necho hi\r\n", ":1: DOS line breaks (CRLF)"),
        (b"#!/bin/bash\necho a\x00b\n", ":2: NUL byte at offset 18"),
    ],
    ids=["crlf", "nul"],
)
def test_what_sbatch_refuses_is_an_error(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "s.slurm"
    path.write_bytes(data)
    result = runner.invoke(app, ["verify", str(path)])
    assert result.exit_code == 1
    assert message in result.stderr


def test_a_script_that_is_not_utf8_is_one_line_and_the_rest_are_checked(tmp_path: Path) -> None:
    latin = tmp_path / "latin1.sh"
    latin.write_bytes("#!/bin/bash\necho café\n".encode("latin-1"))
    good = tmp_path / "good.sh"
    good.write_text("#!/bin/bash\necho hi\n")
    result = runner.invoke(app, ["verify", str(latin), str(good)])
    assert result.exit_code == 1
    assert result.stderr == (
        f"error: script {latin} is not UTF-8 text: byte 0xe9 at offset 20; save it as UTF-8\n"
    )
    assert result.stdout == f"{good}: ok\n"


@pytest.mark.parametrize(
    ("command", "accepted"),
    [
        ("[[ -n ${X:-} ]] && echo $((1 + 2))", True),
        ('case "$1" in a) echo a ;; esac', True),
        ("for f in *.py; do echo $f; done", True),
        ("if then fi", False),
        ("echo $(( 1 +", False),
    ],
)
def test_a_command_run_as_its_own_text_must_be_bash(
    tmp_path: Path, command: str, accepted: bool
) -> None:
    root = Path(__file__).resolve().parent.parent
    result = runner.invoke(
        app,
        [
            "emit",
            "--request",
            str(root / "examples/custom_local_slurm.json"),
            "--work-dir",
            str(tmp_path / "w"),
            "--repo-root",
            str(root / "tests/fixtures/trtllm"),
            "--slurm-env-file",
            str(root / "examples/slurm_env.json"),
            "--models-path",
            str(root / "tests/fixtures/models"),
            "--custom-cmd",
            command,
        ],
    )
    if accepted:
        assert result.exit_code == 0, result.stderr
        assert "bash -c " in (tmp_path / "w" / "slurm_run_custom.sh").read_text()
    else:
        assert result.exit_code == 1
        assert result.stderr.startswith("error: custom_cmd is not valid bash: bash: ")
        assert not (tmp_path / "w").exists()
