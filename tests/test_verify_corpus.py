"""`verify` on stand-ins for public batch scripts (tests/fixtures/scripts_people_write/public):
each class of the scripts people write both ways, the valid form passing and the defect failing
with the finding its judgement names, and nothing else said."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scriptast.contract.slurm_env import PluginOption
from scriptast.readers.linter.lint import Finding, Report, lint_text

PUBLIC = Path(__file__).parent / "fixtures" / "scripts_people_write" / "public"
ENTRIES: list[dict[str, Any]] = json.loads((PUBLIC / "corpus.json").read_text())["entries"]
SCRIPTAST = str(Path(sys.executable).parent / "scriptast")


def _id(entry: dict[str, Any]) -> str:
    declared = "" if "plugins" not in entry else f"+plugins{len(entry['plugins'])}"
    return f"{entry['file'].removesuffix('.sh')}{declared}"


def _everything(report: Report) -> tuple[list[Finding], list[Finding]]:
    findings = list(report.findings)
    notes = list(report.notes)
    for embedded in report.embedded:
        findings += embedded.report.findings
        notes += embedded.report.notes
    return findings, notes


@pytest.mark.parametrize("entry", ENTRIES, ids=[_id(e) for e in ENTRIES])
def test_each_stand_in_gets_its_judgement(entry: dict[str, Any]) -> None:
    path = PUBLIC / entry["file"]
    plugins = None
    if "plugins" in entry:
        plugins = tuple(PluginOption(p["name"], p["arg"]) for p in entry["plugins"])
    report = lint_text(path.read_text(), context=str(path), batch_script=True, plugins=plugins)
    findings, notes = _everything(report)
    said = [f"{f.where}: {f.message}" for f in findings]
    if entry["verdict"] == "ok":
        assert said == []
    else:
        assert len(said) == len(entry["expect"]), said
        for expected in entry["expect"]:
            assert [line for line in said if f"{path}{expected}" in line], (expected, said)
    shown = [f.message for f in notes]
    assert len(shown) == len(entry.get("notes", [])), shown
    for expected in entry.get("notes", []):
        assert [note for note in shown if expected in note], (expected, shown)


def test_every_class_is_there_both_ways_with_its_provenance() -> None:
    classes: dict[str, set[str]] = {}
    for entry in ENTRIES:
        classes.setdefault(entry["class"], set()).add(entry["verdict"])
        assert set(entry["from"]) == {"repository", "path", "commit"}
        assert len(entry["from"]["commit"]) == 40
        assert (PUBLIC / entry["file"]).is_file()
    assert all(verdicts == {"ok", "error"} for verdicts in classes.values()), classes
    for needed in (
        "site plugin options",
        "generators of batch scripts",
        "array and heterogeneous jobs",
        "pyxis and enroot as they are",
        "a here-document's text is not the file's own directives",
        "words of another program",
    ):
        assert needed in classes


def test_the_command_line_says_the_same_in_one_process() -> None:
    """`scriptast verify` of the whole corpus: an `ok` line for each valid stand-in, one line per
    finding for each defect, notes marked as notes, exit 1."""
    files = sorted({e["file"] for e in ENTRIES if "plugins" not in e})
    done = subprocess.run(
        [SCRIPTAST, "verify", *(str(PUBLIC / f) for f in files)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    judged = {e["file"]: e for e in ENTRIES if "plugins" not in e}
    for name in files:
        ok_line = f"{PUBLIC / name}: ok"
        said_ok = any(line.startswith(ok_line) for line in done.stdout.splitlines())
        assert said_ok == (judged[name]["verdict"] == "ok"), name
    assert f"{PUBLIC / 'shifter_image_spaced.sh'}:3: note: --image is not an option" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_clusters_declared_plugin_options_are_checked(tmp_path: Path) -> None:
    env = json.loads((Path(__file__).parent.parent / "examples" / "slurm_env.json").read_text())
    env["plugin_options"] = [{"name": "image", "arg": "required"}]
    env_file = tmp_path / "slurm_env.json"
    env_file.write_text(json.dumps(env))
    script = tmp_path / "job.sh"
    script.write_text(
        "#!/bin/bash\n#SBATCH --image=docker:ubuntu\n#SBATCH --module=gpu\nsrun hostname\n"
    )
    done = subprocess.run(
        [SCRIPTAST, "verify", str(script), "--slurm-env-file", str(env_file)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr == (
        f"{script}:3: --module is not an option of sbatch or of this cluster's plugins "
        "(slurm_env.json plugin_options): sbatch there refuses it\n"
    )


def test_a_plugin_option_of_no_known_kind_is_refused_in_one_line(tmp_path: Path) -> None:
    env = json.loads((Path(__file__).parent.parent / "examples" / "slurm_env.json").read_text())
    env["plugin_options"] = [{"name": "image", "arg": "maybe"}]
    env_file = tmp_path / "slurm_env.json"
    env_file.write_text(json.dumps(env))
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\nsrun hostname\n")
    done = subprocess.run(
        [SCRIPTAST, "verify", str(script), "--slurm-env-file", str(env_file)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"error: slurm_env_file {env_file} has the wrong shape: Invalid enum value 'maybe' - "
        "at `$.plugin_options[0].arg`\n"
    )
