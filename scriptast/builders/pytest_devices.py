"""GPU count of a pytest test, read from its file with `ast` (never imported).

skip_less_device marks on the selected pytest.param, the function, its class or the module;
else GPU counts in the ids."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import msgspec

from scriptast.builders.shellwords import words
from scriptast.errors import ResolveError
from scriptast.text_files import read_text_file

DEFS = "tests/integration/defs"
_MARK = "skip_less_device"


class TestTarget(msgspec.Struct, frozen=True):
    """A test id from test_cmd: file path as written, class/function names, the param id."""

    path: str
    names: tuple[str, ...]
    param_id: str | None


class TestFile(msgspec.Struct, frozen=True):
    """Where the test file is, and whether it lies under tests/integration/defs."""

    path: Path
    under_defs: bool


def find_test_target(test_cmd: str) -> TestTarget:
    """The first word of test_cmd that names a .py file (with an optional ::test id)."""
    for word in words(test_cmd, "test_cmd"):
        path, _, rest = word.partition("::")
        if path.endswith(".py"):
            names = tuple(n for n in rest.split("::") if n) if rest else ()
            param_id = None
            if names and "[" in names[-1] and names[-1].endswith("]"):
                last, _, bracket = names[-1].partition("[")
                names = (*names[:-1], last)
                param_id = bracket[:-1]
            return TestTarget(path, names, param_id)
    raise ResolveError(f"test_cmd {test_cmd!r} names no test file (a path ending in .py)")


def locate_test_file(repo_root: str, target: TestTarget) -> TestFile:
    """The test path relative to <repo_root>/tests/integration/defs, or to repo_root."""
    root = Path(repo_root)
    defs = root / DEFS
    raw = Path(target.path)
    candidates = [raw] if raw.is_absolute() else [defs / raw, root / raw]
    for candidate in candidates:
        if candidate.is_file():
            resolved = candidate.resolve()
            return TestFile(resolved, resolved.is_relative_to(defs.resolve()))
    looked = ", ".join(str(c) for c in candidates)
    raise ResolveError(f"test file {target.path!r} not found (looked at {looked})")


def _mark_devices(node: ast.expr) -> int | None:
    """N from `pytest.mark.skip_less_device(N)` / `skip_less_device(N)`, inside lists too."""
    if isinstance(node, ast.List | ast.Tuple):
        found = [_mark_devices(element) for element in node.elts]
        numbers = [n for n in found if n is not None]
        return max(numbers) if numbers else None
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name == _MARK and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, int):
                return first.value
    return None


def _decorator_devices(decorators: list[ast.expr]) -> int | None:
    found = [_mark_devices(d) for d in decorators]
    numbers = [n for n in found if n is not None]
    return max(numbers) if numbers else None


def _is_parametrize(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "parametrize"
    )


def _param_devices(decorators: list[ast.expr], param_id: str) -> int | None:
    """skip_less_device in the marks of the pytest.param whose id the test id selects."""
    pieces = set(param_id.split("-")) | {param_id}
    for decorator in decorators:
        if not _is_parametrize(decorator):
            continue
        assert isinstance(decorator, ast.Call)
        values = decorator.args[1] if len(decorator.args) > 1 else None
        ids = next((k.value for k in decorator.keywords if k.arg == "ids"), None)
        id_list: list[object | None] = []
        if isinstance(ids, ast.List | ast.Tuple):
            id_list = [e.value if isinstance(e, ast.Constant) else None for e in ids.elts]
        if not isinstance(values, ast.List | ast.Tuple):
            continue
        for position, element in enumerate(values.elts):
            if not (
                isinstance(element, ast.Call) and getattr(element.func, "attr", None) == "param"
            ):
                continue
            keywords = {k.arg: k.value for k in element.keywords}
            given_id = keywords.get("id")
            element_id: object | None = (
                given_id.value if isinstance(given_id, ast.Constant) else None
            )
            if element_id is None and position < len(id_list):
                element_id = id_list[position]
            if element_id in pieces and "marks" in keywords:
                devices = _mark_devices(keywords["marks"])
                if devices is not None:
                    return devices
    return None


def devices_from_ids(*names: str) -> int | None:
    """GPU counts spelled in names and ids: `tp4`, `tp2pp2`, `pp2`, `4gpus`, `8_gpus`."""
    tp = pp = gpus = 0
    for name in names:
        for piece in re.split(r"[-_\[\]]", name.lower()):
            if match := re.fullmatch(r"tp(\d+)(?:pp(\d+))?(?:ep\d+)?", piece):
                tp = max(tp, int(match.group(1)))
                pp = max(pp, int(match.group(2) or 0))
            elif match := re.fullmatch(r"pp(\d+)", piece):
                pp = max(pp, int(match.group(1)))
        for match in re.finditer(r"(?<![a-z0-9])(\d+)_?gpus?(?![a-z])", name.lower()):
            gpus = max(gpus, int(match.group(1)))
    if not (tp or pp or gpus):
        return None
    return max(max(tp, 1) * max(pp, 1), gpus)


class Devices(msgspec.Struct, frozen=True):
    """The GPU count found, and where."""

    count: int
    source: str


def _find(
    body: list[ast.stmt], name: str
) -> ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | None:
    for node in body:
        if (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and node.name == name
        ):
            return node
    return None


def inspect_devices(file: Path, target: TestTarget) -> Devices | None:
    """The seed's pytest rule: the most specific skip_less_device mark, else GPU counts in ids."""
    try:
        tree = ast.parse(read_text_file(file, "test file"), filename=str(file))
    except SyntaxError as error:
        raise ResolveError(
            f"test file {file} does not parse: {error.msg} (line {error.lineno})"
        ) from None
    except ValueError as error:  # a NUL byte
        raise ResolveError(f"test file {file} is not Python source: {error}") from None
    module_devices = None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets
        ):
            module_devices = _mark_devices(node.value)
    cls: ast.ClassDef | None = None
    func: ast.FunctionDef | ast.AsyncFunctionDef | None = None
    scope = tree.body
    for name in target.names:
        found = _find(scope, name)
        if isinstance(found, ast.ClassDef):
            cls, scope = found, found.body
        elif found is not None:
            func = found
    if target.names and cls is None and func is None:
        raise ResolveError(f"test {'::'.join(target.names)} not found in {file}")
    checks: list[tuple[int | None, str]] = []
    if func is not None and target.param_id is not None:
        checks.append(
            (
                _param_devices(func.decorator_list, target.param_id),
                f"skip_less_device on pytest.param {target.param_id!r}",
            )
        )
    if cls is not None and target.param_id is not None:
        checks.append(
            (
                _param_devices(cls.decorator_list, target.param_id),
                f"skip_less_device on pytest.param {target.param_id!r} of {cls.name}",
            )
        )
    if func is not None:
        checks.append((_decorator_devices(func.decorator_list), f"skip_less_device on {func.name}"))
    if cls is not None:
        checks.append((_decorator_devices(cls.decorator_list), f"skip_less_device on {cls.name}"))
    checks.append((module_devices, "module pytestmark skip_less_device"))
    for count, source in checks:
        if count is not None:
            return Devices(count, f"{source} in {file.name}")
    id_names = [n for n in (func.name if func else None, target.param_id) if n]
    from_ids = devices_from_ids(*id_names)
    if from_ids is not None:
        return Devices(from_ids, f"GPU count in test id {'['.join(id_names)}")
    return None
