"""The shape of the code: short functions, one-line module docstrings, emitters that only write,
request flags that agree with Request, and the package's one list of public names."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

import scriptast
from scriptast import Command, ModelError, Mount, Param, SbatchDirective, cli_fields
from scriptast.builders.request import EnvCheck, Request

PACKAGE = Path(scriptast.__file__).resolve().parent
MODULES = sorted(PACKAGE.rglob("*.py"))
LONGEST_FUNCTION = 80


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def test_no_function_is_longer_than_80_lines() -> None:
    long = [
        f"{path.relative_to(PACKAGE)}:{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for path in MODULES
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > LONGEST_FUNCTION
    ]
    assert not long


def test_every_module_says_what_it_does_first() -> None:
    silent = [str(p.relative_to(PACKAGE)) for p in MODULES if ast.get_docstring(_tree(p)) is None]
    assert not silent


def _imported(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def _importing(folder: str, prefix: str) -> dict[str, list[str]]:
    found = {
        f"{p.relative_to(PACKAGE)}": sorted(m for m in _imported(p) if m.startswith(prefix))
        for p in (PACKAGE / folder).rglob("*.py")
    }
    return {name: modules for name, modules in found.items() if modules}


def test_emitters_only_write_and_readers_only_read() -> None:
    assert not _importing("emitters", "scriptast.readers")
    assert not _importing("readers", "scriptast.emitters")


def test_builders_do_not_import_the_pipeline_or_the_command_line() -> None:
    above = ("scriptast.pipeline", "scriptast.submitted", "scriptast.render", "scriptast.cli")
    found = {
        f"{p.relative_to(PACKAGE)}": sorted(m for m in _imported(p) if m.startswith(above))
        for p in (PACKAGE / "builders").rglob("*.py")
    }
    assert not {name: modules for name, modules in found.items() if modules}


def test_request_flags_are_the_request_fields_with_their_types() -> None:
    info = msgspec.inspect.type_info(Request)
    assert isinstance(info, msgspec.inspect.StructType)
    fields = [f.name for f in info.fields if f.name != "env_check"]
    assert sorted(n for n, *_ in cli_fields.REQUEST_FLAGS) == sorted(fields)
    kinds = {n: k for n, k, *_ in cli_fields.REQUEST_FLAGS}
    assert kinds["required_devices"] is int and kinds["install"] is bool
    assert kinds["workflow_type"] is str and kinds["install_mode"] is str
    assert [n for n, *_ in cli_fields.ENV_CHECK_FLAGS] == list(EnvCheck.__struct_fields__)


def test_a_request_field_without_help_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    table = dict(cli_fields.REQUEST_HELP)
    del table["time_limit"]
    monkeypatch.setattr(cli_fields, "REQUEST_HELP", table)
    with pytest.raises(AssertionError, match="time_limit"):
        cli_fields._request_flags()


def test_the_public_names_are_one_list_and_each_loads() -> None:
    source = (PACKAGE / "__init__.py").read_text(encoding="utf-8")
    assert "__all__ =" not in source and "_EXPORTS" not in source
    names = scriptast.__all__
    assert "generate" in names and "Lit" in names and len(names) == len(set(names))
    for name in names:
        assert getattr(scriptast, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'bogus'"):
        _ = scriptast.bogus


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: Param(name="1x"), "name"),
        (lambda: Param(name="x", default="y"), "default"),
        (lambda: Command(argv=()), "argv"),
        (lambda: Mount(source="relative", target="/x"), "source"),
        (lambda: SbatchDirective(option="no-such-option", value=1), "option"),
    ],
)
def test_model_errors_name_their_field(make: Callable[[], object], field: str) -> None:
    with pytest.raises(ModelError) as raised:
        make()
    assert raised.value.field == field
