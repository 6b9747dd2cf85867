"""`verify` on scripts people write: valid bash is never an error (arrays of srun options,
options filled in by variables, short options, extglob, here-documents), what only the running
script knows is named as not checked, and what sbatch refuses (a negative count, `#SBATCH`
without `#!`, a variable in an `#SBATCH` line) is an error with its line."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from scriptast.cli.app import app
from scriptast.errors import VerifyError
from scriptast.readers.linter.lint import lint_text
from scriptast.readers.linter.script_commands import commands_named, scan_commands
from scriptast.readers.roundtrip.verify import parse_commands

runner = CliRunner()
ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests/fixtures/scripts_people_write"
SCRIPTS = sorted(CORPUS.glob("*.sh"))
WITH_SRUN = [p for p in SCRIPTS if p.name != "pytest_run.sh"]


def verify(path: Path, *more: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["verify", str(path), *more])
    return result.exit_code, result.stdout, result.stderr


def test_the_corpus_is_the_one_its_readme_lists() -> None:
    listed = (CORPUS / "README.md").read_text()
    assert SCRIPTS and all(f"`{path.name}`" in listed for path in SCRIPTS)


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_valid_bash_people_write_is_ok(path: Path) -> None:
    code, out, err = verify(path)
    assert (code, err) == (0, "")
    assert out.startswith(f"{path}: ok")


def test_only_the_pytest_runner_has_no_srun() -> None:
    """Upstream's slurm_run.sh runs inside the step; it starts none."""
    assert [p.name for p in SCRIPTS if not commands_named(p.read_text(), "srun")] == [
        "pytest_run.sh"
    ]


@pytest.mark.parametrize("path", WITH_SRUN, ids=[p.stem for p in WITH_SRUN])
def test_the_sruns_of_each_script_are_read(path: Path, tmp_path: Path) -> None:
    """Every script's srun steps are read, also where bashlex cannot read the script: a wrong
    option put into each one is found, on that srun's line."""
    text = path.read_text()
    found = commands_named(text, "srun")
    for command in found:
        lines = text.split("\n")
        index = command.line - 1
        while "srun" not in lines[index]:
            index += 1
        lines[index] = lines[index].replace("srun ", "srun --nodes=-1 ", 1)
        broken = tmp_path / path.name
        broken.write_text("\n".join(lines))
        code, _, err = verify(broken)
        assert code == 1
        assert f"{broken}:{command.line}: srun: --nodes=-1: a negative count; srun" in err


def test_what_only_the_run_knows_is_named_not_passed_off(tmp_path: Path) -> None:
    code, out, _ = verify(CORPUS / "aggregated_launch_draft.sh")
    assert code == 0
    assert 'not checked, known only when it runs: line 16: "${srunArgs[@]}"' in out
    assert "line 16: -N $nodeCount; line 16: --ntasks=$ranks" in out
    assert "no #! line: a fragment to source or splice" in out
    code, out, _ = verify(CORPUS / "install_with_extglob.sh")
    assert code == 0 and "not checked" not in out  # every srun option there is written out


def test_a_here_document_is_text_not_commands() -> None:
    text = (CORPUS / "install_with_extglob.sh").read_text()
    assert "srun --not-an-option" in text
    assert [c.words[:2] for c in commands_named(text, "srun")] == [("srun", "-c")]


def test_extglob_is_read_only_when_the_script_turns_it_on(tmp_path: Path) -> None:
    path = tmp_path / "glob.sh"
    path.write_text("#!/bin/bash\nrm -f !(keep).log\n")
    code, _, err = verify(path)
    assert code == 1 and "syntax error near unexpected token `('" in err
    path.write_text("#!/bin/bash\nshopt -s nullglob extglob\nrm -f !(keep).log\n")
    assert verify(path)[0] == 0


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("#SBATCH --nodes=-1", "--nodes=-1: a negative count; sbatch refuses it"),
        ("#SBATCH -n -2", "--ntasks=-2: a negative count; sbatch refuses it"),
        ("#SBATCH --gres=gpu:-1", "--gres=gpu:-1: a negative count; sbatch refuses it"),
        ("#SBATCH --gpus-per-node=h100:-4", "--gpus-per-node=h100:-4: a negative count"),
        ("#SBATCH --ntasks=$N", "--ntasks=$N: sbatch does not expand variables in #SBATCH"),
        ("#SBATCH -N NODES", "--nodes=NODES: an unfilled template placeholder"),
        ("#SBATCH -p { partition }", "--partition={: an unfilled template placeholder"),
        ("#SBATCH --account=<your_account>", "--account=<your_account>: an unfilled template"),
        ("#SBATCH --begin=now+XXXhour", "--begin=now+XXXhour: an unfilled template placeholder"),
        ("#SBATCH --time=2:00:00:00", "--time=2:00:00:00: not a Slurm time"),
        ("#SBATCH --mem=4.5G", "--mem=4.5G: not a memory size"),
        ("#SBATCH --partition=gpu extra", "'extra' is not an option: sbatch refuses the script"),
        ("#SBATCH -partition=gpu", "-partition=gpu is -p artition=gpu (--partition=artition=gpu)"),
        ("#SBATCH --mail=ALL", "--mail is ambiguous to sbatch (--mail-type, --mail-user)"),
        ("#SBATCH --requeue=1", "--requeue takes no value; sbatch refuses --requeue=1"),
    ],
)
def test_a_directive_sbatch_refuses_is_an_error(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "job.slurm"
    path.write_text(f"#!/bin/bash\n{line}\nsrun hostname\n")
    code, out, err = verify(path)
    assert (code, out) == (1, "")
    assert err.startswith(f"{path}:2: {message}")


def test_a_range_of_nodes_is_not_a_negative_count(tmp_path: Path) -> None:
    path = tmp_path / "job.slurm"
    path.write_text("#!/bin/bash\n#SBATCH --nodes=2-4\nsrun hostname\n")
    assert verify(path)[0] == 0


def test_a_batch_script_without_a_shebang_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "job.slurm"
    path.write_text("#SBATCH --nodes=1\nsrun hostname\n")
    code, _, err = verify(path)
    assert code == 1
    assert err == (
        f"{path}:1: no #! line: sbatch refuses a script whose first line is not #! and an "
        "interpreter; add #!/bin/bash\n"
    )


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        ("srun -c 4 -w node1 -l hostname", None),
        ("srun -c4 -N2 -n 8 -p batch -t 10 hostname", None),
        ('srun --ntasks="$N" --gres=$G --container-image=$IMG hostname', None),
        ('srun "${args[@]}" bash -c "echo $HOST"', None),
        ("timeout -k 60 900 srun -N 1 hostname", None),
        ("srun --export='ALL,A=$B' hostname", None),
        ("srun -n 4 --gpus 4 $DIR/gkyl -g input.lua", None),
        ('srun -n 2 "$APP" --tp 2 -g', None),
        (
            "srun --gres=gpus:4 hostname",
            "--gres=gpus:4: no gres is named 'gpus' (Slurm names GPUs gpu, as GresTypes=gpu "
            "does): --gres=gpu:N; srun refuses it",
        ),
        (
            "srun --gres=gpu=4 hostname",
            "--gres=gpu=4: `gpu=4` is not name[:type][:count] (a gres is written gpu:4, not "
            "gpu=4); srun refuses it",
        ),
        (
            "srun --gres=gpu:four hostname",
            "--gres=gpu:four: 'four' is read as a GPU type (one GPU of type 'four'), not a "
            "count: write the number; srun refuses it where no node has that type",
        ),
        ("srun -Y 3 hostname", "srun has no option -Y (-Y); it refuses it"),
        ("srun -c", "-c needs a value; srun refuses it"),
        ("srun --ntasks=-1 hostname", "--ntasks=-1: a negative count; srun refuses it"),
        ("srun -N -1 hostname", "--nodes=-1: a negative count; srun refuses it"),
        (
            "srun --nodes=a-b hostname",
            "--nodes=a-b: not a node count (N or MIN-MAX); srun refuses it",
        ),
        (
            "srun --tim=5 hostname",
            "--tim is ambiguous to srun (--time, --time-min): it refuses it; write the whole name",
        ),
        (
            "srun --container-mounts=/a:/b hostname",
            "--container-mounts without --container-image or --container-name: pyxis ignores "
            "it and runs the step outside any container",
        ),
    ],
)
def test_srun_as_people_write_it(tmp_path: Path, command: str, problem: str | None) -> None:
    path = tmp_path / "job.sh"
    path.write_text(f"#!/bin/bash\n{command}\n")
    code, _, err = verify(path)
    if problem is None:
        assert (code, err) == (0, "")
    else:
        assert code == 1
        assert err == f"{path}:2: srun: {problem}\n"


def test_an_array_may_hold_the_image_but_literal_options_still_count(tmp_path: Path) -> None:
    path = tmp_path / "job.sh"
    path.write_text('#!/bin/bash\nsrun "${pyxis[@]}" --container-mounts=/a:/b --gres=gpu:16 x\n')
    assert verify(path)[0] == 0
    env = ROOT / "examples/slurm_env.json"
    code, _, err = verify(path, "--slurm-env-file", str(env))
    assert code == 1 and "--gres=gpu:16 asks for 16 GPUs" in err


SNAPSHOT_SCRIPTS = sorted(
    p for p in (ROOT / "snapshots").rglob("*") if p.suffix in (".slurm", ".sh")
)
_KEYWORDS = {"if", "then", "else", "elif", "fi", "do", "done", "while", "for", "!", "{", "}"}


def _without_keywords(commands: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """Commands as bashlex lists them: the reserved words around them left out."""
    kept = []
    for words in commands:
        rest = list(words)
        while rest and rest[0] in _KEYWORDS:
            rest.pop(0)
        if rest:
            kept.append(tuple(rest))
    return kept


@pytest.mark.parametrize("path", SNAPSHOT_SCRIPTS, ids=[p.name for p in SNAPSHOT_SCRIPTS])
def test_the_scanner_finds_what_bashlex_finds(path: Path) -> None:
    """On every script scriptast writes, the scanner (which reads what bashlex cannot) finds
    the simple commands bashlex finds, with the same words; and every one verifies clean."""
    text = path.read_text()
    assert lint_text(text, batch_script=True).findings == ()
    try:
        by_bashlex = [tuple(command.words) for command in parse_commands(text)]
    except VerifyError:  # the perf_sanity launch scripts: upstream's drafts use arrays
        assert "srunArgs" in text
        return
    by_scanner = [command.words for command in scan_commands(text)]
    assert _without_keywords(by_scanner) == _without_keywords(by_bashlex)


def test_a_batch_script_in_another_language_has_only_its_directives_read(tmp_path: Path) -> None:
    path = tmp_path / "job.py"
    path.write_text("#!/usr/bin/env python3\n#SBATCH --nodes=2\nimport os\nprint(os.getpid())\n")
    code, out, err = verify(path)
    assert (code, err) == (0, "")
    assert out == f"{path}: ok (a python3 script: only its #SBATCH lines were read)\n"
    path.write_text("#!/usr/bin/env python3\n#SBATCH --nodes=two\nimport os\n")
    code, _, err = verify(path)
    assert (code, err) == (
        1,
        f"{path}:2: --nodes=two: not a node count (N or MIN-MAX); sbatch refuses it\n",
    )


def test_an_unquoted_here_document_is_read_as_bash_writes_it(tmp_path: Path) -> None:
    """`\\$X` is written as `$X` (a variable of the job, not judged), `$N` expanded when it was
    written; a quoted here-document is written as it stands, so its `$` is sbatch's problem."""
    body = "#!/bin/bash\n#SBATCH --ntasks=\\$N\n#SBATCH --nodes=$M\nsrun -n \\$N x\n"
    path = tmp_path / "gen.sh"
    path.write_text(f"cat > job.sh <<EOF\n{body}EOF\nsbatch job.sh\n")
    assert verify(path)[0] == 0
    path.write_text("cat > job.sh <<'EOF'\n#!/bin/bash\n#SBATCH --ntasks=$N\nsrun x\nEOF\n")
    code, _, err = verify(path)
    assert code == 1
    assert err.startswith(
        f"{path}:3: in job.sh (here-document): --ntasks=$N: sbatch does not expand variables"
    )


def test_a_here_document_that_is_no_batch_script_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "gen.sh"
    path.write_text(
        "#!/bin/bash\ncat > run.py <<'EOF'\n#!/usr/bin/env python3\nprint('{ x }')\nEOF\n"
        "cat > notes.txt <<EOF\n#SBATCH lines go first\nEOF\nsrun python run.py\n"
    )
    code, _out, err = verify(path)
    assert (code, err) == (0, "")


def test_srun_ends_its_options_at_a_double_dash(tmp_path: Path) -> None:
    path = tmp_path / "job.sh"
    path.write_text("#!/bin/bash\nsrun -N 1 -- python train.py --nodes=x -pmix\n")
    assert verify(path)[:3:2] == (0, "")


@pytest.mark.parametrize(
    "line",
    [
        "#SBATCH --nodes=2-4", "#SBATCH -N1-2", "#SBATCH --mem 1G", "#SBATCH --mem=4000M",
        "#SBATCH -t 0:60:0", "#SBATCH --time=UNLIMITED", "#SBATCH --time=1-0",
        "#SBATCH --array=[1-5]%2", "#SBATCH --array=0-15:4,20", "#SBATCH --begin=2026-12-24T10:00",
        "#SBATCH --begin=16:00", "#SBATCH --begin=now+2hours", "#SBATCH --gres=gpu:a100:4",
        "#SBATCH --gpus-per-node=h100:8", "#SBATCH --tasks-per-node=4", "#SBATCH --mail-typ=END",
        "#SBATCH --exclusive", "#SBATCH --exclusive=user", "#SBATCH -c4 -J 'my job'",
        "#SBATCH --cpus-per-task 8 # eight cores", "#SBATCH --job-name=<name>",
        "#SBATCH -o %x-%j.out -e %x-%j.err", "#SBATCH --signal=B:USR1@120",
    ],
)  # fmt: skip
def test_a_directive_sbatch_takes_is_ok(tmp_path: Path, line: str) -> None:
    path = tmp_path / "job.slurm"
    path.write_text(f"#!/bin/bash\n{line}\nsrun hostname\n")
    assert verify(path)[::2] == (0, "")


def test_a_here_document_after_assignments_is_still_its_programs(tmp_path: Path) -> None:
    """`NAME=a exec tee f <<EOF` writes f, and `LANG=C sbatch <<EOF` submits the body."""
    path = tmp_path / "gen.sh"
    path.write_text(
        "#!/bin/bash\nNAME=a exec tee run.sbatch >/dev/null <<EOF\n#!/bin/bash\n"
        "#SBATCH --nodes=two\nhostname\nEOF\nLANG=C sbatch <<EOF\n#!/bin/bash\n"
        "#SBATCH --ntasks=0\nEOF\n"
    )
    code, _, err = verify(path)
    assert code == 1
    assert err == (
        f"{path}:4: in run.sbatch (here-document): --nodes=two: not a node count (N or "
        "MIN-MAX); sbatch refuses it\n"
        f"{path}:9: in the script sbatch reads from this here-document: --ntasks=0: not a "
        "count above 0; sbatch refuses it\n"
    )


def test_a_job_submitted_inside_a_command_substitution_is_checked(tmp_path: Path) -> None:
    """`jid=$(sbatch --parsable <<EOF ... EOF)`, how a generator keeps the id of what it
    submits: the body is sbatch's script, checked at its lines in the file."""
    path = tmp_path / "gen.sh"
    path.write_text(
        "#!/bin/bash\nfor seed in 1 2; do\n  jid=$(sbatch --parsable <<EOF\n#!/bin/bash\n"
        "#SBATCH --job-name=s$seed\n#SBATCH --time=00:10:00x\nsrun python run.py\nEOF\n)\n"
        '  echo "$jid"\ndone\n'
    )
    code, _, err = verify(path)
    assert code == 1
    assert err.startswith(
        f"{path}:6: in the script sbatch reads from this here-document: --time=00:10:00x: "
        "not a Slurm time"
    )
    path.write_text(path.read_text().replace("00:10:00x", "00:10:00"))
    assert verify(path)[::2] == (0, "")
