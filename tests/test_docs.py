"""The documentation is current and its code runs."""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs"))


def test_generated_docs_are_current() -> None:
    import build

    assert (ROOT / "docs/guide.md").read_text() == build.guide(), "run python docs/build.py"
    assert (ROOT / "docs/job_spec.md").read_text() == build.job_spec(), "run python docs/build.py"


def test_job_spec_doc_lists_every_field() -> None:
    from scriptast.contract.job_spec import JobSpec

    text = (ROOT / "docs/job_spec.md").read_text()
    for field in JobSpec.__struct_fields__:
        assert f"| `{field}` |" in text


def test_guide_covers_every_workflow_and_scenario() -> None:
    text = (ROOT / "docs/guide.md").read_text()
    for workflow in ("pytest", "bench", "eval", "custom"):
        for where in ("cluster this machine submits to", "remote cluster", "local docker host"):
            assert f"### {workflow} on " in text and where in text


def test_library_doc_code_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs/library.md").read_text(), re.S)
    assert len(blocks) == 4
    old = os.getcwd()
    os.chdir(ROOT)
    try:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            for block in blocks:
                exec(compile(block, "docs/library.md", "exec"), {})
    finally:
        os.chdir(old)
    printed = out.getvalue()
    assert printed.count("refused:") == 2 and "mpi_plugin='pmix_v4'" in printed
    assert "derived from --tp 2 in bench_cmd" in printed


def test_the_departures_from_the_seed_are_one_page_each_with_its_test() -> None:
    """docs/departures.md lists each deliberate departure with its reason and the test that
    holds it; README points there and keeps no section of its own about the seed."""
    import re

    page = (ROOT / "docs/departures.md").read_text(encoding="utf-8")
    entries = [e for e in page.split("## Not departures")[0].split("\n- ")[1:]]
    assert len(entries) >= 6
    for entry in entries:
        named = re.findall(r"`(tests/[\w/]+\.py)`", entry)
        assert named, entry[:60]
        assert all((ROOT / path).is_file() for path in named), named
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/departures.md" in readme
    assert "## Where scriptast departs from the seed" not in readme
    trtllm = (ROOT / "docs/trtllm.md").read_text(encoding="utf-8")
    assert "--run-sh`/`--install-sh`" in trtllm and "never changes the user's checkout" in trtllm
