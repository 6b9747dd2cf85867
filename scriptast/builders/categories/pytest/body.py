"""GPUs a test's body demands, read with `ast` (never imported): a `get_device_count()`
comparison that skips or fails the test (`if get_device_count() < tp_size * pp_size:
pytest.skip(...)`), in the test or in a function of its module that it calls, and a literal
`mpirun -n N` in a command it runs (but `mpirun --oversubscribe`, whose ranks share the GPUs);
evaluated with the values the selected id's parametrize decorators give its arguments."""

from __future__ import annotations

import ast
import itertools
import operator
import re
from collections.abc import Callable, Iterator
from typing import Any

import msgspec

Function = ast.FunctionDef | ast.AsyncFunctionDef


class _Unknown:
    """A value the file does not state (a fixture, a call, an attribute)."""

    def __repr__(self) -> str:
        return "unknown"


UNKNOWN: Any = _Unknown()
MAX_CASES = 4096
"""Parametrize combinations looked at for one test (a product of many decorators is cut)."""
MAX_DEPTH = 3
"""Calls followed into the module's functions."""
_PARAMETRIZE = frozenset({"parametrize", "parametrize_with_ids"})
_MPIRUN = re.compile(r"\bmpirun\b(?:\s+--?\S+(?:\s+[^-\s]\S*)?)*?\s+-(?:n|np)\s+(\d+)\b")


_OVERSUBSCRIBE = frozenset({"--oversubscribe", "-oversubscribe"})


def _oversubscribed(text: str, start: int) -> bool:
    """Whether the mpirun command at `start` of `text` (up to the end of its line or the next
    `&&`, `||`, `;` or `|`) asks for more ranks than slots, wherever the option stands."""
    command = re.split(r"\n|&&|\|\||;|\|", text[start:], maxsplit=1)[0]
    return not _OVERSUBSCRIBE.isdisjoint(command.split())


class BodyNeed(msgspec.Struct, frozen=True):
    """The largest count the body demands (None: none found that could be evaluated), what
    decided it, and the demands that could not be evaluated, as written."""

    count: int | None
    source: str
    unevaluated: tuple[str, ...] = ()
    shared: tuple[str, ...] = ()
    """`mpirun --oversubscribe -n N` the body runs: ranks that share the GPUs, not GPUs."""


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return UNKNOWN


def _auto_id(name: str, value: Any, index: int) -> str:
    """pytest's id for one argument value it was not given an id for."""
    if isinstance(value, bool | int | float | str) or value is None:
        return str(value)
    return f"{name}{index}"


def _cases(decorator: ast.expr) -> list[tuple[str | None, dict[str, Any]]] | None:
    """(id, {argname: value}) for each value of a parametrize decorator; None if it is not one."""
    if not isinstance(decorator, ast.Call) or _name(decorator.func) not in _PARAMETRIZE:
        return None
    if len(decorator.args) < 2 or not isinstance(decorator.args[1], ast.List | ast.Tuple):
        return None
    names_node = decorator.args[0]
    names_value = _literal(names_node)
    if isinstance(names_value, str):
        names = [n.strip() for n in names_value.split(",") if n.strip()]
    elif isinstance(names_value, list | tuple) and all(isinstance(n, str) for n in names_value):
        names = list(names_value)
    else:
        return None
    ids_node = next((k.value for k in decorator.keywords if k.arg == "ids"), None)
    given_ids = _literal(ids_node) if isinstance(ids_node, ast.List | ast.Tuple) else UNKNOWN
    id_lambda = ids_node if isinstance(ids_node, ast.Lambda) else None
    with_ids = _name(decorator.func) == "parametrize_with_ids"
    cases: list[tuple[str | None, dict[str, Any]]] = []
    for index, element in enumerate(decorator.args[1].elts):
        explicit: str | None = None
        if isinstance(element, ast.Call) and _name(element.func) == "param":
            keywords = {k.arg: k.value for k in element.keywords}
            id_node = keywords.get("id")
            if isinstance(id_node, ast.Constant) and isinstance(id_node.value, str):
                explicit = id_node.value
            values = [_literal(arg) for arg in element.args]
        else:
            value = _literal(element)
            values = list(value) if len(names) > 1 and isinstance(value, tuple) else [value]
        if len(values) != len(names):
            values = [UNKNOWN] * len(names)
        bound = dict(zip(names, values, strict=True))
        if explicit is None and isinstance(given_ids, list | tuple) and index < len(given_ids):
            explicit = str(given_ids[index])
        if explicit is None and id_lambda is not None and len(id_lambda.args.args) == 1:
            made = evaluate(id_lambda.body, {id_lambda.args.args[0].arg: values[0]})
            explicit = made if isinstance(made, str) else None
        if explicit is None and with_ids:
            explicit = "-".join(f"{n}={v}" for n, v in bound.items())
        if explicit is None and ids_node is None:
            explicit = "-".join(_auto_id(n, v, index) for n, v in bound.items())
        cases.append((explicit, bound))
    return cases


def bindings(decorators: list[ast.expr], param_id: str | None) -> list[dict[str, Any]]:
    """The argument values of each parametrized case the id selects (every case without an
    id), from the decorators listed top-down as written (pytest joins ids closest-first)."""
    per_decorator = [c for c in (_cases(d) for d in reversed(decorators)) if c is not None]
    if not per_decorator:
        return [{}]
    found: list[dict[str, Any]] = []
    for combination in itertools.islice(itertools.product(*per_decorator), MAX_CASES):
        ids = [case_id for case_id, _ in combination]
        if param_id is not None and (None in ids or "-".join(map(str, ids)) != param_id):
            continue
        merged: dict[str, Any] = {}
        for _, bound in combination:
            merged.update(bound)
        found.append(merged)
    return found


_OPERATORS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}


Caller = Callable[[ast.Call, dict[str, Any]], Any]


def evaluate(node: ast.expr, env: dict[str, Any], call: Caller | None = None) -> Any:
    """The value of a simple expression over known names; UNKNOWN for anything else. `call`
    evaluates a call to one of the module's functions."""

    def value(inner: ast.expr) -> Any:
        return evaluate(inner, env, call)

    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return env.get(node.id, UNKNOWN)
    if isinstance(node, ast.Tuple | ast.List):
        return tuple(value(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        keys = [value(k) if k is not None else UNKNOWN for k in node.keys]
        pairs = zip(keys, node.values, strict=True)
        return {k: value(v) for k, v in pairs if k is not UNKNOWN and _hashable(k)}
    if isinstance(node, ast.JoinedStr):
        pieces = [
            value(p.value) if isinstance(p, ast.FormattedValue) else value(p) for p in node.values
        ]
        if any(piece is UNKNOWN for piece in pieces):
            return UNKNOWN
        return "".join(str(piece) for piece in pieces)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = value(node.left), value(node.right)
        if isinstance(left, int) and isinstance(right, int) and not isinstance(left, bool):
            try:
                return _OPERATORS[type(node.op)](left, right)
            except ZeroDivisionError:
                return UNKNOWN
        return UNKNOWN
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        operand = value(node.operand)
        return -operand if isinstance(operand, int) else UNKNOWN
    if isinstance(node, ast.Subscript):
        base, index = value(node.value), value(node.slice)
        if isinstance(base, tuple) and isinstance(index, int) and -len(base) <= index < len(base):
            return base[index]
        if isinstance(base, dict) and _hashable(index) and index in base:
            return base[index]
        return UNKNOWN
    if (
        isinstance(node, ast.Call)
        and _name(node.func) in _BUILTINS
        and isinstance(node.func, ast.Name)
    ):
        args = [value(a) for a in node.args]
        if any(a is UNKNOWN for a in args) or node.keywords:
            return UNKNOWN
        try:
            return _BUILTINS[node.func.id](*args)
        except (TypeError, ValueError):
            return UNKNOWN
    if isinstance(node, ast.Call) and call is not None:
        return call(node, env)
    return UNKNOWN


_BUILTINS: dict[str, Callable[..., Any]] = {
    "max": max,
    "min": min,
    "int": int,
    "len": len,
    "str": str,
}


def _hashable(value: Any) -> bool:
    return isinstance(value, str | int | float | bool | tuple) or value is None


def _device_count_call(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and _name(node.func) == "get_device_count"


def _demands(test: ast.expr) -> Iterator[tuple[ast.expr, int]]:
    """(expression, addend) for each `get_device_count()` comparison in an if-test that says
    the devices are too few: `count < X`, `count <= X` (X + 1), `X > count`, `X >= count`."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        for value in test.values:
            yield from _demands(value)
        return
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if _device_count_call(left) and isinstance(op, ast.Lt | ast.LtE):
        yield right, int(isinstance(op, ast.LtE))
    elif _device_count_call(right) and isinstance(op, ast.Gt | ast.GtE):
        yield left, int(isinstance(op, ast.GtE))


def _stops(body: list[ast.stmt]) -> bool:
    """Whether a branch skips or fails the test (or returns before it runs)."""
    for statement in body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Raise | ast.Return):
                return True
            if isinstance(node, ast.Call) and _name(node.func) in ("skip", "fail", "xfail"):
                return True
    return False


class _Reader:
    def __init__(self, functions: dict[str, Function]) -> None:
        self.functions = functions
        self.found: list[tuple[int, str]] = []
        self.unevaluated: list[str] = []
        self.shared: list[str] = []

    def value(self, node: ast.expr, env: dict[str, Any], depth: int) -> Any:
        return evaluate(node, env, lambda call, at: self.returned(call, at, depth))

    def read(self, function: Function, env: dict[str, Any], depth: int, where: str) -> None:
        self.statements(function.body, dict(env), depth, where)

    def statements(self, body: list[ast.stmt], env: dict[str, Any], depth: int, where: str) -> None:
        for statement in body:
            if isinstance(statement, ast.Assign):
                value = self.value(statement.value, env, depth)
                for target in statement.targets:
                    _assign(target, value, env)
            elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
                _assign(statement.target, self.value(statement.value, env, depth), env)
            if isinstance(statement, ast.If):
                self.condition(statement, env, depth, where)
            for part in _own_parts(statement):
                for node in ast.walk(part):
                    self.commands(node, env, depth, where)
                    if isinstance(node, ast.Call) and depth < MAX_DEPTH:
                        self.call(node, env, depth, where)
            for field in ("body", "orelse", "finalbody", "handlers"):
                inner = getattr(statement, field, None)
                if isinstance(inner, list) and not isinstance(statement, Function | ast.ClassDef):
                    self.statements(inner, env, depth, where)

    def commands(self, node: ast.AST, env: dict[str, Any], depth: int, where: str) -> None:
        """A literal `mpirun -n N`: in a string, or in a list of words (whose words may be
        `str(n)` of a known n)."""
        text: str | None = None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        elif isinstance(node, ast.List | ast.Tuple) and any(
            isinstance(e, ast.Constant) and e.value == "mpirun" for e in node.elts
        ):
            words = [self.value(e, env, depth) for e in node.elts]
            text = " ".join("?" if w is UNKNOWN else str(w) for w in words)
            if (_MPIRUN.search(text) is None and re.search(r"\s-(?:n|np)\s+\?", text)
                    and not _oversubscribed(text, 0)):  # fmt: skip
                self.unevaluated.append(f"{ast.unparse(node)} in {where}")
        if text is None:
            return
        for match in _MPIRUN.finditer(text):
            if _oversubscribed(text, match.start()):
                # more ranks than slots, on the GPUs the test has: upstream's test-db runs its
                # 2-rank disaggregated tests so on a 1-GPU stage (l0_a10)
                said = f"`mpirun --oversubscribe -n {match.group(1)}` in {where}"
                if said not in self.shared:
                    self.shared.append(said)
                continue
            self.found.append((int(match.group(1)), f"`mpirun -n {match.group(1)}` in {where}"))

    def condition(self, statement: ast.If, env: dict[str, Any], depth: int, where: str) -> None:
        demands = list(_demands(statement.test))
        if not demands or not _stops(statement.body):
            return
        for expression, addend in demands:
            value = self.value(expression, env, depth)
            text = f"get_device_count() against {ast.unparse(expression)} in {where}"
            if isinstance(value, int) and not isinstance(value, bool):
                self.found.append((value + addend, text))
            else:
                self.unevaluated.append(text)

    def bound(
        self, function: Function, node: ast.Call, env: dict[str, Any], depth: int
    ) -> dict[str, Any]:
        """The values a call gives the function's parameters (defaults for the rest)."""
        parameters = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
        defaults = function.args.defaults
        bound: dict[str, Any] = {}
        with_defaults = parameters[len(parameters) - len(defaults) :]
        for parameter, default in zip(with_defaults, defaults, strict=True):
            bound[parameter] = evaluate(default, {})
        for parameter, argument in zip(parameters, node.args, strict=False):
            if isinstance(argument, ast.Starred):
                break
            bound[parameter] = self.value(argument, env, depth)
        for keyword in node.keywords:
            if keyword.arg is not None:
                bound[keyword.arg] = self.value(keyword.value, env, depth)
        return bound

    def call(self, node: ast.Call, env: dict[str, Any], depth: int, where: str) -> None:
        function = self.functions.get(node.func.id if isinstance(node.func, ast.Name) else "")
        if function is None:
            return
        bound = self.bound(function, node, env, depth)
        self.read(function, bound, depth + 1, f"{function.name} (called from {where})")

    def returned(self, node: ast.Call, env: dict[str, Any], depth: int) -> Any:
        """What a call to one of the module's functions returns, when its body assigns and
        then returns a value that can be evaluated (a table looked up by an argument)."""
        function = self.functions.get(node.func.id if isinstance(node.func, ast.Name) else "")
        if function is None or depth >= MAX_DEPTH:
            return UNKNOWN
        local = self.bound(function, node, env, depth)
        for statement in function.body:
            if isinstance(statement, ast.Assign):
                value = self.value(statement.value, local, depth + 1)
                for target in statement.targets:
                    _assign(target, value, local)
            elif isinstance(statement, ast.Return) and statement.value is not None:
                return self.value(statement.value, local, depth + 1)
        return UNKNOWN


def _own_parts(statement: ast.stmt) -> list[ast.AST]:
    """The parts of a statement outside the statement lists it holds."""
    if isinstance(statement, ast.If | ast.While):
        return [statement.test]
    if isinstance(statement, ast.For | ast.AsyncFor):
        return [statement.iter]
    if isinstance(statement, ast.With | ast.AsyncWith):
        return [item.context_expr for item in statement.items]
    if isinstance(statement, ast.Try | Function | ast.ClassDef):
        return []
    return [statement]


def _assign(target: ast.expr, value: Any, env: dict[str, Any]) -> None:
    if isinstance(target, ast.Name):
        env[target.id] = value
    elif isinstance(target, ast.Tuple | ast.List):
        values = value if isinstance(value, tuple) else (UNKNOWN,) * len(target.elts)
        if len(values) != len(target.elts):
            values = (UNKNOWN,) * len(target.elts)
        for element, item in zip(target.elts, values, strict=True):
            _assign(element, item, env)


def body_need(
    function: Function,
    cases: list[dict[str, Any]],
    functions: dict[str, Function],
    where: str,
) -> BodyNeed:
    """The largest device count the body of `function` demands over `cases` (argument
    values), following calls into `functions` (the module's own)."""
    best: tuple[int, str] | None = None
    unevaluated: list[str] = []
    shared: list[str] = []
    for env in cases:
        reader = _Reader(functions)
        reader.read(function, env, 0, where)
        for count, text in reader.found:
            if best is None or count > best[0]:
                best = (count, text)
        unevaluated += [u for u in reader.unevaluated if u not in unevaluated]
        shared += [s for s in reader.shared if s not in shared]
    if best is None:
        return BodyNeed(None, "", tuple(unevaluated), tuple(shared))
    return BodyNeed(best[0], best[1], tuple(unevaluated), tuple(shared))


def module_functions(tree: ast.Module) -> dict[str, Function]:
    """The module's top-level functions by name (the helpers its tests call)."""
    return {
        node.name: node
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
