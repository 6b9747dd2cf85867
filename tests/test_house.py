"""The shape of the code: short functions, one-line module docstrings, emitters that only write,
request flags that agree with Request, and the package's one list of public names."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

import scriptast
from scriptast import Command, ModelError, Mount, Param, SbatchDirective
from scriptast.builders.read_request import request_type
from scriptast.builders.request.fields import EnvCheck
from scriptast.cli import emit_flags as cli_fields

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


LAYERS = {
    "errors": 0,
    "common": 1,
    "workdir": 2,
    "model": 3,
    "contract": 3,
    "cluster": 4,
    "emitters": 5,
    "readers": 5,
    "plan": 5,
    "builders": 6,
    "schedulers": 6,
    "transports": 7,
    "results": 7,
    "pipeline": 8,
    "executor": 8,
    "cli": 9,
}
"""Each wing of the package and its height: an arrow may run down or stay in its wing, never up,
and never sideways between two wings of one height (model and contract; emitters, readers and
the launch plan; the builders and the scheduler backends, which stand beside each other over
the plan; the transports and the results; pipeline and executor)."""
MOST_TOP_MODULES = 5
ROOMS = {
    "readers": {"roundtrip": 0, "shellwords": 1, "linter": 2},
    "workdir": {"files": 0, "journal": 1, "write": 2},
    "builders": {
        "request": 0,
        "resolution": 1,
        "category": 2,
        "categories": 3,
        "missing_fields": 4,
        "unused_fields": 4,
        "read_request": 5,
        "resolve": 5,
    },
}
"""Rooms inside a wing and their heights, by the same rule as the wings' (a room's own modules
may import each other). In builders: the request, then the shared rules and the resolved job,
the category record, the categories, and on top reading a request and resolving it."""
SIBLINGS = {("builders", "categories"): "the registry"}
"""Rooms whose folders stand side by side: one may import none of the others, nor the room's
own package (which names them all)."""


def _wing(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "scriptast" and len(parts) > 1 else None


def test_the_top_level_holds_packages_and_at_most_five_modules() -> None:
    modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    packages = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
    assert len(modules) <= MOST_TOP_MODULES, modules
    assert set(packages) == set(LAYERS) - {"errors"}, packages
    assert {p.stem for p in PACKAGE.glob("*.py")} - {"__init__", "__main__"} <= set(LAYERS)


def test_every_package_says_what_it_is_and_what_it_may_import() -> None:
    for init in PACKAGE.glob("*/**/__init__.py"):
        doc = ast.get_docstring(_tree(init))
        assert doc and len(doc.splitlines()) <= 5, init


def _wrong_arrows(imports: dict[str, set[str]]) -> list[str]:
    """Each import (module path inside the package -> modules it imports) that runs up, or
    sideways between two wings of one height."""
    wrong = []
    for relative, modules in sorted(imports.items()):
        here = relative.split("/")[0].removesuffix(".py")
        if here not in LAYERS:
            continue  # __init__ and __main__: the public API and the entry sit above every wing
        for module in sorted(modules):
            there = _wing(module)
            if module == "scriptast" and here != "cli":
                wrong.append(f"{relative} -> scriptast (the public API is for users, not wings)")
            elif _arrow_wrong(here, relative, module, there):
                wrong.append(f"{relative} -> {module}")
    return wrong


def _arrow_wrong(here: str, relative: str, module: str, there: str | None) -> bool:
    """An import that runs up or sideways, between wings or between one wing's rooms."""
    if there == here:
        return _room_arrow_wrong(here, relative, module)
    return there is not None and (there not in LAYERS or LAYERS[there] >= LAYERS[here])


def _room_arrow_wrong(wing: str, relative: str, module: str) -> bool:
    """An import inside `wing` from one of its rooms to another that is no lower, or from one
    sibling folder to another."""
    rooms = ROOMS.get(wing, {})
    here = relative.split("/")[1].removesuffix(".py") if "/" in relative else None
    parts = module.split(".")
    there = parts[2] if len(parts) > 2 else None
    if here == there and (wing, here) in SIBLINGS:
        return _sibling_arrow_wrong(relative, parts)
    if here not in rooms or there not in rooms or here == there:
        return False
    return rooms[there] >= rooms[here]


def _sibling_arrow_wrong(relative: str, parts: list[str]) -> bool:
    """An import from a sibling folder (`builders/categories/eval/...`) to another sibling or
    to the room's own package."""
    mine = relative.split("/")
    if len(mine) < 4:
        return False  # the room's own package (the registry) names its folders
    theirs = parts[3] if len(parts) > 3 else None
    return theirs != mine[2]


def test_no_arrow_runs_up_or_between_wings_of_one_height() -> None:
    imports = {str(p.relative_to(PACKAGE)): _imported(p) for p in MODULES}
    assert not _wrong_arrows(imports)


def test_every_room_of_a_wing_with_rooms_has_a_height() -> None:
    """A module or folder added to a wing with rooms is given its height (else no rule holds
    it); the sibling folders are each a category with its record."""
    for wing, rooms in ROOMS.items():
        found = {p.name.removesuffix(".py") for p in (PACKAGE / wing).iterdir()
                 if p.suffix == ".py" or (p / "__init__.py").is_file()} - {"__init__"}  # fmt: skip
        assert found == set(rooms), (wing, found ^ set(rooms))
    for wing, room in SIBLINGS:
        folders = [p for p in (PACKAGE / wing / room).iterdir() if (p / "__init__.py").is_file()]
        assert len(folders) >= 5 and all((f / "category.py").is_file() for f in folders)


def test_perf_sanity_is_one_folder_reached_through_its_record() -> None:
    """The perf-sanity path (submit.py's plan and argv, running it and taking back what it
    wrote, reading its launch script back) lives in categories/perf_sanity/, and nothing
    outside the folder imports it but the registry: emit reaches it through the category's
    `submit`. (What eval reads too, a perf config's mode, is in resolution/perf_config.py.)"""
    folder = "builders/categories/perf_sanity/"
    outside = sorted(
        str(p.relative_to(PACKAGE)) for p in MODULES
        if not str(p.relative_to(PACKAGE)).startswith(folder)
        and any(m.startswith("scriptast.builders.categories.perf_sanity") for m in _imported(p))
    )  # fmt: skip
    assert outside == ["builders/categories/__init__.py"]
    names = {p.stem for p in (PACKAGE / folder).glob("*.py")}
    assert {"submit_py", "launch_written", "launch_readback", "submit_argv", "submit_call",
            "call_for_job", "submit_plan", "fallback"} <= names  # fmt: skip


def test_the_house_rule_sees_arrows_up_and_sideways() -> None:
    imports = {
        "model/words.py": {"scriptast.pipeline.emit_job", "scriptast.errors"},
        "emitters/bash.py": {"scriptast.readers.roundtrip.verify", "scriptast.model.words"},
        "executor/run.py": {"scriptast.pipeline.sweep", "scriptast.builders.job_spec"},
        "builders/resolve.py": {"scriptast"},
        "cli/app.py": {"scriptast", "scriptast.executor.run"},
        "readers/roundtrip/verify.py": {"scriptast.readers.linter.lint",
                                        "scriptast.readers.roundtrip.readback"},
        "readers/shellwords.py": {"scriptast.readers.linter.slurm_cli"},
        "readers/linter/lint.py": {"scriptast.readers.shellwords",
                                   "scriptast.readers.roundtrip.verify"},
        "builders/categories/eval/work.py": {"scriptast.builders.categories.perf_sanity.work",
                                             "scriptast.builders.categories",
                                             "scriptast.builders.categories.eval.request",
                                             "scriptast.builders.request.parts"},
        "builders/categories/__init__.py": {"scriptast.builders.categories.eval.category"},
        "builders/request/fields.py": {"scriptast.builders.categories"},
        "builders/resolution/job.py": {"scriptast.builders.resolve",
                                       "scriptast.builders.resolution.trail"},
    }  # fmt: skip
    assert _wrong_arrows(imports) == [
        "builders/categories/eval/work.py -> scriptast.builders.categories",
        "builders/categories/eval/work.py -> scriptast.builders.categories.perf_sanity.work",
        "builders/request/fields.py -> scriptast.builders.categories",
        "builders/resolution/job.py -> scriptast.builders.resolve",
        "builders/resolve.py -> scriptast (the public API is for users, not wings)",
        "emitters/bash.py -> scriptast.readers.roundtrip.verify",
        "executor/run.py -> scriptast.pipeline.sweep",
        "model/words.py -> scriptast.pipeline.emit_job",
        "readers/roundtrip/verify.py -> scriptast.readers.linter.lint",
        "readers/shellwords.py -> scriptast.readers.linter.slurm_cli",
    ]


def test_request_flags_are_the_request_fields_with_their_types() -> None:
    info = msgspec.inspect.type_info(request_type())
    assert isinstance(info, msgspec.inspect.StructType)
    fields = [f.name for f in info.fields if f.name not in cli_fields.NO_FLAG]
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


VAGUE_RECORD_NAMES = frozenset({"Made", "Taken", "Watched", "Writes", "Staged", "Facts", "Later"})
"""Names of records that say neither what they hold nor whose they are (the house review's
list): a past participle or a plural alone."""


def test_records_are_named_for_what_they_hold() -> None:
    vague = [
        f"{path.relative_to(PACKAGE)}:{node.name}"
        for path in MODULES
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.ClassDef) and node.name in VAGUE_RECORD_NAMES
    ]
    assert not vague


SHARED_ROLES = frozenset(
    {"__init__", "category", "work", "steps", "measures", "backend", "launcher", "registry"}
)
"""Module names that mean one role wherever they stand: each category folder's own record, work
and steps, each backend folder's record and launcher, each seam's registry."""


def test_two_modules_share_a_name_only_when_they_fill_one_role() -> None:
    """Names that say which: two modules of one name (two `journal.py`, a type's `slurm_env.py`
    and its reader's) mean two things under one word."""
    by_name: dict[str, list[str]] = {}
    for path in MODULES:
        by_name.setdefault(path.stem, []).append(str(path.relative_to(PACKAGE)))
    shared = {n: sorted(p) for n, p in by_name.items() if len(p) > 1 and n not in SHARED_ROLES}
    assert not shared
    assert not [p for p in MODULES if p.stem.startswith("test_")]  # a product module is no test


def _module_file(module: str) -> Path | None:
    """The file of a scriptast module (a package's __init__.py), or None."""
    if not module.startswith("scriptast"):
        return None
    base = PACKAGE.parent.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imports_of(path: Path) -> set[Path]:
    """The package's files `path` imports, at any level (a type-only or a late import too)."""
    found: set[Path] = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [f"{node.module}.{alias.name}" for alias in node.names]
            targets = [_module_file(n) for n in names] + [_module_file(node.module)]
            found.update(t for t in targets if t is not None)
        elif isinstance(node, ast.Import):
            found.update(t for a in node.names if (t := _module_file(a.name)) is not None)
    found.discard(path)
    return found


def test_no_two_files_import_each_other_round_a_circle() -> None:
    """At file level too (a type-only import counts: it ties the two files' meaning): no file
    reaches itself through the files it imports. Packages' own __init__ files, which name
    their parts, are left out."""
    graph = {p: {q for q in _imports_of(p) if q.name != "__init__.py"}
             for p in MODULES if p.name != "__init__.py"}  # fmt: skip
    circles = []
    for start in graph:
        seen, stack = set(), list(graph[start])
        while stack:
            current = stack.pop()
            if current == start:
                circles.append(str(start.relative_to(PACKAGE)))
                break
            if current not in seen:
                seen.add(current)
                stack.extend(graph.get(current, ()))
    assert not circles
