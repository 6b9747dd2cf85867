"""A job of just some tests (a stored run's failed ones): test_cmd's own selection replaced by
their ids, written the way test_cmd names its tests; or a CI stage's list narrowed to them."""

from __future__ import annotations

import posixpath
import re
import shlex

from scriptast.builders.categories.pytest.selection import (
    DEFS,
    NARROWING,
    WITH_VALUE,
    read_selection,
)
from scriptast.builders.resolution.pytest_ids import parse_target
from scriptast.builders.resolution.trail import Trail
from scriptast.errors import ResolveError
from scriptast.readers.shellwords import Token, tokenize

MOST_TESTS = 10_000
_TEST_ID = re.compile(r"[A-Za-z0-9_][\w.+/-]*\.py(::[^\s:][^\s]*)*")
"""A node id relative to tests/integration/defs: a module path, then `::`-separated names
(a parametrize id may hold any character but white space)."""


def check_test_ids(test_ids: tuple[str, ...]) -> None:
    """Each of only_tests is a test id pytest takes as one (never an option, an absolute path
    or a path out of tests/integration/defs), and there are not too many."""
    if not test_ids:
        raise ResolveError("only_tests is empty: name a test, or drop it", field="only_tests")
    if len(test_ids) > MOST_TESTS:
        raise ResolveError(f"only_tests names {len(test_ids):,} tests; at most {MOST_TESTS:,}",
                           field="only_tests")  # fmt: skip
    for test_id in test_ids:
        path = test_id.split("::", 1)[0]
        if not _TEST_ID.fullmatch(test_id) or ".." in path.split("/") or len(test_id) > 2048:
            raise ResolveError(f"only_tests {test_id[:200]!r} is not a test id relative to "
                               f"{DEFS} (path.py::Class::test[param])",
                               field="only_tests")  # fmt: skip


def _pytest_arguments(tokens: list[Token]) -> tuple[int, int]:
    """The token range of the pytest command's arguments: after `pytest` (or `python -m
    pytest`), up to the next operator."""
    for index, token in enumerate(tokens):
        if token.kind != "word":
            continue
        name = posixpath.basename(token.value)
        after = None
        if name in ("pytest", "py.test"):
            after = index + 1
        elif name.startswith("python") and [t.value for t in tokens[index + 1 : index + 3]] == [
            "-m",
            "pytest",
        ]:
            after = index + 3
        if after is not None:
            end = next((i for i in range(after, len(tokens)) if tokens[i].kind != "word"),
                       len(tokens))  # fmt: skip
            return after, end
    raise ResolveError("test_cmd runs no pytest: only_tests narrows a pytest command",
                       field="only_tests")  # fmt: skip


def _selecting(tokens: list[Token], start: int, end: int, folders: set[str]) -> list[int]:
    """The indexes of the tokens that choose tests: paths and ids, folders, and -k/-m/
    --test-list/--deselect with their values."""
    chosen: list[int] = []
    index = start
    while index < end:
        word = tokens[index].value
        option, equals, _ = word.partition("=")
        if word.startswith("-"):
            taken = not equals and option in WITH_VALUE and index + 1 < end
            if option in NARROWING:
                chosen += [index, index + 1] if taken else [index]
            index += 2 if taken else 1
            continue
        if parse_target(word) is not None or word in folders:
            chosen.append(index)
        index += 1
    return chosen


def _as_written(test_id: str, form: str, cd: str | None, repo_root: str) -> str:
    """A defs-relative id the way test_cmd names its tests."""
    if form == "repo":
        return posixpath.join(DEFS, test_id)
    if form == "absolute":
        return posixpath.join(repo_root, DEFS, test_id)
    if form == "cd" and cd is not None:
        return posixpath.relpath(posixpath.join(DEFS, test_id), cd)
    return test_id


def narrowed_command(test_cmd: str, test_ids: tuple[str, ...], repo_root: str,
                     trail: Trail) -> str:  # fmt: skip
    """test_cmd with its selection replaced by `test_ids`; every other word kept as written."""
    selection = read_selection(test_cmd, repo_root)
    form = selection.files[0].form if selection.files else ("cd" if selection.cd else "defs")
    tokens = tokenize(test_cmd, "test_cmd")
    start, end = _pytest_arguments(tokens)
    dropped = _selecting(tokens, start, end, set(selection.folders))
    kept = [i for i in range(start, end) if i not in dropped]
    written = [_as_written(t, form, selection.cd, repo_root) for t in test_ids]
    insert_at = tokens[kept[-1]].end if kept else tokens[start - 1].end
    inserted = "".join(f" {shlex.quote(w)}" for w in written)
    edits = sorted([(tokens[i].start, tokens[i].end, "") for i in dropped]
                   + [(insert_at, insert_at, inserted)])  # fmt: skip
    pieces: list[str] = []
    cursor = 0
    for begin, finish, new in edits:
        before = test_cmd[cursor:begin]
        pieces += [before.rstrip(" ") if finish > begin else before, new]
        cursor = finish
    text = "".join(pieces) + test_cmd[cursor:]
    shown = " ".join(tokens[i].raw or tokens[i].value for i in dropped) or "none"
    trail.add("only_tests", f"{len(test_ids)} test(s)",
              f"test_cmd's selection ({shown}) replaced by them")  # fmt: skip
    return text


def narrowed_list(lines: tuple[str, ...], test_ids: tuple[str, ...], stage: str,
                  trail: Trail) -> tuple[str, ...]:  # fmt: skip
    """The stage's test-list lines of `test_ids` (each line as listed, its TIMEOUT kept), in
    the list's order; an id the list no longer holds is a warning and is left out."""
    wanted = set(test_ids)
    kept = tuple(line for line in lines if line.split(" ", 1)[0] in wanted)
    listed = {line.split(" ", 1)[0] for line in kept}
    gone = [t for t in test_ids if t not in listed]
    if gone:
        trail.warn(f"{len(gone)} of only_tests are not in ci_stage {stage}'s list now and are "
                   f"not run: {', '.join(gone[:3])}{' ...' if len(gone) > 3 else ''}")  # fmt: skip
    if not kept:
        raise ResolveError(f"none of only_tests is in ci_stage {stage}'s list: nothing to run",
                           field="only_tests")  # fmt: skip
    trail.add("only_tests", f"{len(kept)} test line(s)",
              f"ci_stage {stage}'s list narrowed to them; the split flags dropped (the list "
              "holds just them)")  # fmt: skip
    return kept
