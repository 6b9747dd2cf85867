"""What a pytest selection needs, read from its test file with `ast` (never imported): GPUs from
`skip_less_device(N)` and MPI ranks from `skip_less_mpi_world_size(N)`, each on the selected
pytest.param, the function, its class or the module (the most specific wins), GPU counts in the
names and ids, and what the test's body demands (scriptast.builders.pytest_body); the largest
of these. `skip_less_device_memory(M)` is memory and counts nothing. A test id names one test;
a class or a file selects every test in it, and the need is the maximum."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import msgspec

from scriptast.builders.resolution.pytest_ids import TestTarget
from scriptast.common.text_files import read_text_file
from scriptast.errors import ResolveError

DEVICE_MARK = "skip_less_device"
RANKS_MARK = "skip_less_mpi_world_size"


class Need(msgspec.Struct, frozen=True):
    """A count and what decided it (which mark of which test)."""

    count: int
    source: str


class Needs(msgspec.Struct, frozen=True):
    """The largest GPU and MPI-rank needs over every selected test (None: nothing says), and
    the demands of test bodies that could not be evaluated, as written."""

    devices: Need | None
    ranks: Need | None
    unevaluated: tuple[str, ...] = ()
    model: str | None = None
    """The MODEL_NAME the target's test class declares (upstream's accuracy tests do)."""
    shared: tuple[str, ...] = ()
    """Oversubscribed `mpirun` ranks the bodies start: they share the GPUs, and size nothing."""


Function = ast.FunctionDef | ast.AsyncFunctionDef


def _mark_value(node: ast.expr, mark: str) -> int | None:
    """N from `pytest.mark.<mark>(N)` / `<mark>(N)`, the largest inside a list of marks."""
    if isinstance(node, ast.List | ast.Tuple):
        found = [n for n in (_mark_value(e, mark) for e in node.elts) if n is not None]
        return max(found) if found else None
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name == mark and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, int):
                return first.value
    return None


def _decorated(decorators: list[ast.expr], mark: str) -> int | None:
    found = [n for n in (_mark_value(d, mark) for d in decorators) if n is not None]
    return max(found) if found else None


_PARAMETRIZE = frozenset({"parametrize", "parametrize_with_ids"})
"""`pytest.mark.parametrize`, and TRT-LLM's `parametrize_with_ids` helper (defs/conftest.py)."""


def _params(decorators: list[ast.expr]) -> list[tuple[str | None, ast.expr | None]]:
    """Each parametrize value as (its id, its marks expression)."""
    found: list[tuple[str | None, ast.expr | None]] = []
    for decorator in decorators:
        func = decorator.func if isinstance(decorator, ast.Call) else None
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if not (
            isinstance(decorator, ast.Call)
            and name in _PARAMETRIZE
            and len(decorator.args) > 1
            and isinstance(decorator.args[1], ast.List | ast.Tuple)
        ):
            continue
        ids = next((k.value for k in decorator.keywords if k.arg == "ids"), None)
        id_list = [
            e.value if isinstance(e, ast.Constant) and isinstance(e.value, str) else None
            for e in (ids.elts if isinstance(ids, ast.List | ast.Tuple) else [])
        ]
        for position, element in enumerate(decorator.args[1].elts):
            given = id_list[position] if position < len(id_list) else None
            marks = None
            if isinstance(element, ast.Call) and getattr(element.func, "attr", None) == "param":
                keywords = {k.arg: k.value for k in element.keywords}
                value = keywords.get("id")
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    given = value.value
                marks = keywords.get("marks")
            found.append((given, marks))
    return found


class _Test(msgspec.Struct, frozen=True):
    """One selected test: its class, function and param id (None: every param)."""

    cls: ast.ClassDef | None
    func: Function
    param_id: str | None


def _need_of(test: _Test, module: int | None, mark: str, file: str) -> Need | None:
    """The most specific `mark` for one test; with no param id, the largest over its params
    (a param's own mark, else the function's, class's or module's)."""
    name = "::".join(n for n in (test.cls.name if test.cls else None, test.func.name) if n)
    decorators = [*test.func.decorator_list, *(test.cls.decorator_list if test.cls else [])]
    params = _params(decorators)
    if test.param_id is not None:
        pieces = set(test.param_id.split("-")) | {test.param_id}
        params = [(i, m) for i, m in params if i in pieces]
    own = [(_mark_value(m, mark) if m is not None else None, i) for i, m in params]
    marked = [
        Need(value, f"{mark}({value}) on pytest.param {param!r} of {name} in {file}")
        for value, param in own
        if value is not None
    ]
    inherited = not own or any(value is None for value, _ in own)
    if test.param_id is not None:
        inherited = not marked
    levels = [
        (_decorated(test.func.decorator_list, mark), name),
        (_decorated(test.cls.decorator_list, mark) if test.cls else None, f"class {name}"),
        (module, f"the module pytestmark ({name})"),
    ]
    level = next((Need(v, f"{mark}({v}) on {w} in {file}") for v, w in levels if v), None)
    candidates = [*marked, *([level] if level is not None and inherited else [])]
    return max(candidates, key=lambda need: need.count) if candidates else None


def _ids_need(test: _Test, file: str) -> Need | None:
    ids = [test.param_id] if test.param_id else [i for i, _ in _params(test.func.decorator_list)]
    counts = [devices_from_ids(test.func.name, i) for i in ids if i] or [
        devices_from_ids(test.func.name)
    ]
    known = [count for count in counts if count is not None]
    if not known:
        return None
    count = max(known)  # each id alone: tp8 and tp2pp2 are two tests, not tp8pp2
    return Need(count, f"GPU count in the name or ids of {test.func.name} in {file}")


_NODES_GPUS = re.compile(r"(?<![a-z0-9])(\d+)_?nodes?_(\d+)_?gpus?(?![a-z])")
"""`2nodes_8gpus`: upstream's name for a test on 2 nodes of 8 GPUs (16 in all: its body asks
tp 16, or tp 8 pp 2)."""


def devices_from_ids(*names: str) -> int | None:
    """GPU counts spelled in names and ids: `tp4`, `tp2pp2`, `pp2`, `4gpus`, `8_gpus`, and
    `2nodes_8gpus` (nodes times GPUs a node)."""
    tp = pp = gpus = 0
    for name in names:
        lowered = name.lower()
        for piece in re.split(r"[-_\[\]]", lowered):
            if match := re.fullmatch(r"tp(\d+)(?:pp(\d+))?(?:ep\d+)?", piece):
                tp = max(tp, int(match.group(1)))
                pp = max(pp, int(match.group(2) or 0))
            elif match := re.fullmatch(r"pp(\d+)", piece):
                pp = max(pp, int(match.group(1)))
        for match in _NODES_GPUS.finditer(lowered):
            gpus = max(gpus, int(match.group(1)) * int(match.group(2)))
        for match in re.finditer(
            r"(?<![a-z0-9])(\d+)_?gpus?(?![a-z])", _NODES_GPUS.sub("", lowered)
        ):
            gpus = max(gpus, int(match.group(1)))
    if not (tp or pp or gpus):
        return None
    return max(max(tp, 1) * max(pp, 1), gpus)


def _parse(file: Path) -> ast.Module:
    try:
        return ast.parse(read_text_file(file, "test file"), filename=str(file))
    except SyntaxError as error:
        raise ResolveError(
            f"test file {file} does not parse: {error.msg} (line {error.lineno})", field="test_cmd"
        ) from None
    except ValueError as error:  # a NUL byte
        raise ResolveError(
            f"test file {file} is not Python source: {error}", field="test_cmd"
        ) from None


def _selected(tree: ast.Module, target: TestTarget, file: Path) -> list[_Test]:
    """The tests a target selects: one test, every test of a class, or of the file."""
    scope: list[ast.stmt] = tree.body
    cls: ast.ClassDef | None = None
    for name in target.names:
        found = next(
            (
                node
                for node in scope
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                and node.name == name
            ),
            None,
        )
        if isinstance(found, ast.ClassDef):
            cls, scope = found, found.body
        elif found is not None:
            return [_Test(cls, found, target.param_id)]
        else:
            raise ResolveError(
                f"test {'::'.join(target.names)} not found in {file}", field="test_cmd"
            )
    tests = []
    for node in scope:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            "test"
        ):
            tests.append(_Test(cls, node, None))
        elif cls is None and isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            tests += _selected(tree, TestTarget(target.path, (node.name,), None), file)
    return tests


def read_needs(file: Path, target: TestTarget) -> Needs:
    """The GPU and MPI-rank needs of every test the target selects in `file`."""
    tree = _parse(file)
    modules = {
        mark: next(
            (
                _mark_value(node.value, mark)
                for node in tree.body
                if isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets)
            ),
            None,
        )
        for mark in (DEVICE_MARK, RANKS_MARK)
    }
    from scriptast.builders.categories.pytest.body import bindings, body_need, module_functions

    functions = module_functions(tree)
    devices: list[Need] = []
    ranks: list[Need] = []
    unevaluated: list[str] = []
    shared: list[str] = []
    for test in _selected(tree, target, file):
        found = [_need_of(test, modules[DEVICE_MARK], DEVICE_MARK, file.name)]
        decorators = [*(test.cls.decorator_list if test.cls else []), *test.func.decorator_list]
        name = "::".join(n for n in (test.cls.name if test.cls else None, test.func.name) if n)
        cases = bindings(decorators, test.param_id) or [{}]
        body = body_need(test.func, cases, functions, f"{name} in {file.name}")
        if body.count is not None:
            found.append(Need(body.count, body.source))
        found.append(_ids_need(test, file.name))  # on a tie, a mark or the body says why
        unevaluated += [u for u in body.unevaluated if u not in unevaluated]
        shared += [s for s in body.shared if s not in shared]
        device = _largest([need for need in found if need is not None])
        if device is not None:
            devices.append(device)
        rank = _need_of(test, modules[RANKS_MARK], RANKS_MARK, file.name)
        if rank is not None:
            ranks.append(rank)
    model = _declared_model(tree, target)
    return Needs(_largest(devices), _largest(ranks), tuple(unevaluated), model, tuple(shared))


def _largest(needs: list[Need]) -> Need | None:
    return max(needs, key=lambda need: need.count) if needs else None


def _declared_model(tree: ast.Module, target: TestTarget) -> str | None:
    """The MODEL_NAME string the target's test class declares, if any."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name in target.names:
            for statement in node.body:
                if (
                    isinstance(statement, ast.Assign)
                    and any(
                        isinstance(t, ast.Name) and t.id == "MODEL_NAME" for t in statement.targets
                    )
                    and isinstance(statement.value, ast.Constant)
                    and isinstance(statement.value.value, str)
                ):
                    return statement.value.value
    return None
