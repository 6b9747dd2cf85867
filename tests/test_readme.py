"""README's code runs as written, and the library example that left it for docs/library.md."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
LIBRARY = README.parent / "docs/library.md"
MOST_LINES = 250


def test_the_library_example_runs_and_emits_the_step() -> None:
    text = LIBRARY.read_text()
    block = re.search(r"<!-- library-example -->\n```python\n(.*?)```", text, re.S)
    assert block is not None
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block.group(1), "docs/library.md", "exec"), {})
    emitted = out.getvalue()
    assert emitted.startswith("#!/bin/bash\n#SBATCH --job-name=bench\n#SBATCH --nodes=1\n")
    assert "--mpi=pmix \\\n" in emitted and "--gres=gpu:4 \\\n" in emitted
    assert "--container-mounts=/lustre/models:/models:ro" in emitted
    assert "trtllm-llmapi-launch trtllm-bench --tp 4" in emitted


def test_readme_gives_two_setup_commands_and_ci_runs_the_test_one() -> None:
    text = README.read_text()
    commands = re.findall(r"```bash\n(python3 -m venv .*)\n```", text)
    assert len(commands) == 2
    assert "scriptast emit --request examples/" in commands[0]
    ci = (README.parent / ".ci/run").read_text()
    assert commands[1] in ci


def test_readme_tour_output_is_what_the_commands_print(tmp_path: Path) -> None:
    import os
    import shutil
    import subprocess
    import sys

    root = README.parent
    shutil.copytree(root / "examples", tmp_path / "examples")
    shutil.copytree(root / "tests/fixtures", tmp_path / "tests/fixtures")
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        "HOME": "/home/alice",
    }
    env.pop("NO_COLOR", None)
    blocks = re.findall(r"<!-- tour -->\n```console\n\$ (.*?)\n(.*?)```", README.read_text(), re.S)
    assert len(blocks) >= 5
    for command, expected in blocks:
        result = subprocess.run(
            ["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        shown = (result.stdout + result.stderr).replace(str(tmp_path), "/path/to/scriptast")
        assert shown == expected, command


def test_readme_is_a_users_page_that_points_to_the_rest() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= MOST_LINES
    for page in ("architecture", "reliability", "trtllm", "guide", "job_spec", "library"):
        assert f"`docs/{page}.md`" in text and (README.parent / f"docs/{page}.md").is_file()
    for heading in ("## Set up", "## A five-minute tour", "## Run it and get a verdict",
                    "## Commands", "## Read more"):  # fmt: skip
        assert heading in text
