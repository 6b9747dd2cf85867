"""Any model name: the run is an error, or every file it writes is one safe name in work_dir."""

from __future__ import annotations

import os
import re
from pathlib import Path

from hypothesis import example, given, settings, strategies as st

from scriptast.builders.read_request import build_request
from scriptast.errors import ScriptastError
from scriptast.pipeline.emit_job import generate, write_outputs
from tests.hostile.bad_inputs import base_fields
from tests.profiles import scaled

SAFE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,254}\Z")
NAMES = st.text(st.characters(exclude_categories=["Cs"]), max_size=300) | st.text(
    st.sampled_from(list("/.-~ %\\\n'\"$*é")), max_size=12
)


@settings(max_examples=scaled(300))
@given(name=NAMES)
@example(name="/")
@example(name="../../..")
@example(name=".")
@example(name="-rf")
@example(name="x" * 300)
@example(name="a/../../b")
def test_any_model_name_writes_only_inside_work_dir(name: str, tmp_path_factory: object) -> None:
    root = Path(os.environ.get("SCRIPTAST_TEST_ROOT", "/tmp")) / f"names-{os.getpid()}"
    work = root / "work"
    fields = {**base_fields(root), "work_dir": str(work), "model_name": name}
    try:
        output = generate(build_request(fields, {}), home=str(root))
    except ScriptastError:
        return
    for item in output.files:
        assert os.path.dirname(item.path) == str(work)
        assert SAFE.match(os.path.basename(item.path)), item.path
    write_outputs(output)
    written = [p for p in root.rglob("*") if p.is_file()]
    assert written and all(p.parent == work for p in written)
    for path in written:
        path.unlink()
