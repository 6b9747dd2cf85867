"""A pytest test id as engineers write it (`path.py[::Class][::test[param]]`): read from a
word, or the first such word of a test command. pytest's selection reads it, and so does the
perf-sanity path, which is given a perf-sanity test id."""

from __future__ import annotations

import msgspec

from scriptast.errors import ResolveError
from scriptast.readers.shellwords import words


class TestTarget(msgspec.Struct, frozen=True):
    """A test id from test_cmd: file path as written, class/function names, the param id."""

    path: str
    names: tuple[str, ...]
    param_id: str | None


def parse_target(word: str) -> TestTarget | None:
    """`path.py[::Class][::test[param]]` as a target, else None."""
    path, _, rest = word.partition("::")
    if not path.endswith(".py"):
        return None
    names = tuple(n for n in rest.split("::") if n) if rest else ()
    param_id = None
    if names and "[" in names[-1] and names[-1].endswith("]"):
        last, _, bracket = names[-1].partition("[")
        names = (*names[:-1], last)
        param_id = bracket[:-1]
    return TestTarget(path, names, param_id)


def find_test_target(test_cmd: str) -> TestTarget:
    """The first word of test_cmd that names a .py file (with an optional ::test id)."""
    for word in words(test_cmd, "test_cmd"):
        target = parse_target(word)
        if target is not None:
            return target
    raise ResolveError(
        f"test_cmd {test_cmd!r} names no test file (a path ending in .py)", field="test_cmd"
    )
