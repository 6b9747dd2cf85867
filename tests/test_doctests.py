"""The `>>>` examples in scriptast's docstrings run, and show what the code returns."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

import scriptast

PACKAGE = Path(scriptast.__file__).resolve().parent
WITH_EXAMPLES = sorted(
    ".".join(("scriptast", *path.relative_to(PACKAGE).with_suffix("").parts))
    for path in PACKAGE.rglob("*.py")
    if ">>>" in path.read_text(encoding="utf-8")
)


def test_some_modules_have_examples() -> None:
    assert (
        "scriptast.model.slurm_time" in WITH_EXAMPLES and "scriptast.model.words" in WITH_EXAMPLES
    )


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0, result
