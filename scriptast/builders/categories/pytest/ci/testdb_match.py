"""The test-db (`tests/integration/test_lists/test-db/<context>.yml`) read and matched as
trt-test-db does, from the YAML's own semantics and the test-db README (the package is not
public): a block's tests are selected when every key its condition names matches the query.

- `terms`: equal (true and false as YAML writes them);
- `wildcards`: one pattern or a list, any matching, case-insensitively (`*h100*` matches the
  stage's `DGX_H100`);
- `ranges`: `gte`, `lte`, `gt`, `lt` on the number;
- a key the query lacks is not checked (upstream's sbatch path queries only what the stage's
  name says, and its blocks still name `linux_distribution_name` and `cpu`).

Each test line is kept as written, with its `TIMEOUT (N)`, `ISOLATION` and `-k`/`-m`
selectors, in the file's order; a line two blocks select is kept once."""

from __future__ import annotations

import fnmatch
import posixpath

import msgspec
import yaml

from scriptast.common.bounded_yaml import compose_bounded
from scriptast.common.numbers import read_number
from scriptast.common.text_files import regular_file_bytes
from scriptast.errors import InputError

TEST_DB = "tests/integration/test_lists/test-db"
CONDITION_KINDS = ("ranges", "wildcards", "terms")
RANGE_BOUNDS = ("gte", "lte", "gt", "lt")
MOST_BOUND = 1_000_000
"""A range bound past any count a test-db condition holds (GPUs, nodes, memory in GB)."""


class Block(msgspec.Struct, frozen=True, kw_only=True):
    """One `- condition: ... tests: ...` entry: where it starts, its conditions and tests."""

    line: int
    ranges: dict[str, dict[str, float]]
    wildcards: dict[str, tuple[str, ...]]
    terms: dict[str, str]
    tests: tuple[str, ...]


class Selected(msgspec.Struct, frozen=True, kw_only=True):
    """The test lines a query selects, and the blocks (their first lines) that gave them."""

    path: str
    lines: tuple[str, ...]
    blocks: tuple[int, ...]


def _scalar(node: yaml.Node) -> str:
    value = node.value if isinstance(node, yaml.ScalarNode) else None
    if value is None:
        raise ValueError("a value is expected here")
    return str(value).lower() if str(value).lower() in ("true", "false") else str(value)


def _mapping(node: yaml.Node, what: str) -> list[tuple[str, yaml.Node]]:
    if not isinstance(node, yaml.MappingNode):
        raise ValueError(f"{what} must be a mapping")
    return [(str(k.value), v) for k, v in node.value]


def _bound(node: yaml.Node, where: str) -> float:
    """A range's bound: a finite number a count can be held against, or InputError."""
    text = _scalar(node)
    number = read_number(text)
    if number is None or abs(number) > MOST_BOUND:
        raise InputError(f"{where} is {text!r}: not a number from -{MOST_BOUND:,} to "
                         f"{MOST_BOUND:,}; fix the test-db block")  # fmt: skip
    return number


def _block(node: yaml.Node, where: str) -> Block:
    entries = dict(_mapping(node, "a block"))
    condition = entries.get("condition")
    ranges: dict[str, dict[str, float]] = {}
    wildcards: dict[str, tuple[str, ...]] = {}
    terms: dict[str, str] = {}
    if condition is not None and not isinstance(condition, yaml.MappingNode):
        raise ValueError("condition must be a mapping")
    for key_node, body in condition.value if condition is not None else []:
        kind, line = str(key_node.value), key_node.start_mark.line + 1
        if kind not in CONDITION_KINDS:
            raise InputError(f"{where}:{line}: unknown condition key {kind!r}: the test-db's "
                             f"conditions are {', '.join(CONDITION_KINDS)}")  # fmt: skip
        for key, value in _mapping(body, kind):
            if kind == "terms":
                terms[key] = _scalar(value)
            elif kind == "wildcards":
                items = value.value if isinstance(value, yaml.SequenceNode) else [value]
                wildcards[key] = tuple(_scalar(item).lower() for item in items)
            else:
                bounds = dict(_mapping(value, f"range {key}"))
                unknown = set(bounds) - set(RANGE_BOUNDS)
                if unknown:
                    raise InputError(f"{where}:{value.start_mark.line + 1}: unknown range bound "
                                     f"{sorted(unknown)[0]!r} of {key}: use "
                                     f"{', '.join(RANGE_BOUNDS)}")  # fmt: skip
                ranges[key] = {b: _bound(n, f"{where}:{n.start_mark.line + 1}: range {key} {b}")
                               for b, n in bounds.items()}  # fmt: skip
    tests = entries.get("tests")
    items = tests.value if isinstance(tests, yaml.SequenceNode) else []
    return Block(line=node.start_mark.line + 1, ranges=ranges, wildcards=wildcards,
                 terms=terms, tests=tuple(_scalar(t).strip() for t in items))  # fmt: skip


def read_test_db(repo_root: str, context: str) -> tuple[list[Block], str]:
    """The blocks of `<context>.yml` under `context:`; InputError naming the file (and the
    line) when it is missing, is not YAML, or has a block it cannot read."""
    path = posixpath.join(repo_root, TEST_DB, f"{context}.yml")
    try:
        data, _ = regular_file_bytes(path, 16 << 20)
    except FileNotFoundError:
        raise InputError(f"{path}: the stage's test-db file is missing (testDB {context!r} in "
                         "the stage list)", field="ci_stage") from None  # fmt: skip
    except OSError as error:
        raise InputError(f"{path}: cannot read it: {error.strerror}", field="ci_stage") from None
    try:
        root = compose_bounded(data.decode("utf-8", "replace"))
        top = dict(_mapping(root, "the file")) if root is not None else {}
    except (yaml.YAMLError, ValueError) as error:
        raise InputError(f"{path}: not a test-db file: {str(error).splitlines()[0]}") from None
    if context not in top:
        raise InputError(f"{path}: no {context}: block list in it", field="ci_stage")
    body = top[context]
    if not isinstance(body, yaml.SequenceNode):
        raise InputError(f"{path}:{body.start_mark.line + 1}: {context} must be a list of blocks")
    try:
        return [_block(node, path) for node in body.value], path
    except (ValueError, TypeError) as error:
        raise InputError(f"{path}: a block it cannot read: {error}") from None


def matches(block: Block, query: dict[str, str]) -> bool:
    """Every key the block's condition names, and the query has, matches."""
    for key, value in block.terms.items():
        if key in query and query[key] != value:
            return False
    for key, patterns in block.wildcards.items():
        if key in query and not any(fnmatch.fnmatchcase(query[key].lower(), p) for p in patterns):
            return False
    for key, bounds in block.ranges.items():
        if key not in query:
            continue
        try:
            number = float(query[key])
        except ValueError:
            return False
        checks = (
            number >= bounds.get("gte", number),
            number <= bounds.get("lte", number),
            "gt" not in bounds or number > bounds["gt"],
            "lt" not in bounds or number < bounds["lt"],
        )
        if not all(checks):
            return False
    return True


def select(repo_root: str, context: str, query: dict[str, str]) -> Selected:
    """The test lines of the blocks the query matches, in the file's order, each once."""
    blocks, path = read_test_db(repo_root, context)
    lines: dict[str, None] = {}
    chosen = []
    for block in blocks:
        if matches(block, query):
            chosen.append(block.line)
            lines.update(dict.fromkeys(block.tests))
    return Selected(path=path, lines=tuple(lines), blocks=tuple(chosen))
