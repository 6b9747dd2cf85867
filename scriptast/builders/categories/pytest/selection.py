"""What a pytest `test_cmd` selects, as engineers write it: test ids and files relative to
`tests/integration/defs`, to the repository or absolute, and what cannot be read from the
command (`-k`, `-m`, `--test-list`, a directory); plus the folder the command must run in."""

from __future__ import annotations

from pathlib import Path

import msgspec

from scriptast.builders.resolution.pytest_ids import TestTarget, parse_target
from scriptast.errors import ResolveError
from scriptast.readers.shellwords import words

DEFS = "tests/integration/defs"
NARROWING = ("-k", "-m", "--test-list", "--deselect")
"""Options that choose tests by something other than a path: their selection is not read."""
WITH_VALUE = frozenset(
    [
        *NARROWING,
        "-o", "-p", "-c", "-n", "-W", "--timeout", "--timeout-method", "--rootdir",
        "--junitxml", "--junit-xml", "--output-dir", "--test-prefix", "--waives-file",
        "--splits", "--group", "--csv", "--cov", "--cov-report", "--cov-config", "--ignore",
        "--maxfail", "--durations", "--basetemp", "--confcutdir", "--log-level",
        "--perf-log-formats", "--tb", "-r", "--import-mode",
    ]
)  # fmt: skip


class Located(msgspec.Struct, frozen=True):
    """A selected test file: where it is, and how test_cmd names it (`defs`: relative to
    tests/integration/defs; `repo`: relative to repo_root; `absolute`)."""

    target: TestTarget
    path: Path
    form: str


class Selection(msgspec.Struct, frozen=True):
    """The test files test_cmd names, and what it selects that cannot be read; `cd` is the
    folder the command changes into itself first (`cd tests/integration/defs && pytest ...`),
    relative to the project, or None."""

    files: tuple[Located, ...]
    uninspected: tuple[str, ...]
    folders: tuple[str, ...]
    cd: str | None = None


def leading_cd(test_cmd: str) -> str | None:
    """The folder of a `cd DIR &&` (or `cd DIR;`) that test_cmd starts with."""
    from scriptast.readers.shellwords import tokenize

    tokens = tokenize(test_cmd, "test_cmd")
    if (
        len(tokens) >= 3
        and tokens[0].kind == "word"
        and tokens[0].value == "cd"
        and tokens[1].kind == "word"
        and not tokens[1].expands
        and tokens[2].kind == "op"
        and tokens[2].value in ("&&", ";")
    ):
        return tokens[1].value
    return None


def read_selection(test_cmd: str, repo_root: str) -> Selection:
    """Every test path in test_cmd's pytest arguments, located; what is not read, named.
    After a leading `cd DIR &&`, paths are read from DIR (relative to the project)."""
    argv = words(test_cmd, "test_cmd")
    cd = leading_cd(test_cmd)
    start = next((i + 1 for i, w in enumerate(argv) if Path(w).name == "pytest"), 0)
    files: list[Located] = []
    uninspected: list[str] = []
    folders: list[str] = []
    index = start
    while index < len(argv):
        word = argv[index]
        option, equals, _ = word.partition("=")
        if word.startswith("-"):
            taken = not equals and option in WITH_VALUE and index + 1 < len(argv)
            if option in NARROWING:
                shown = word if equals else f"{word} {argv[index + 1]}" if taken else word
                uninspected.append(shown)
            index += 2 if taken else 1
            continue
        target = parse_target(word)
        if target is not None:
            files.append(_locate(repo_root, target, cd))
        elif _folder(repo_root, word, cd) is not None:
            uninspected.append(f"the directory {word}")
            folders.append(word)
        index += 1
    return Selection(tuple(files), tuple(uninspected), tuple(folders), cd)


def _candidates(repo_root: str, written: str, cd: str | None = None) -> list[tuple[Path, str]]:
    root = Path(repo_root)
    raw = Path(written)
    if raw.is_absolute():
        return [(raw, "absolute")]
    if cd is not None:
        return [(root / cd / raw, "cd")]
    return [(root / DEFS / raw, "defs"), (root / raw, "repo")]


def _folder(repo_root: str, word: str, cd: str | None = None) -> str | None:
    for candidate, form in _candidates(repo_root, word.rstrip("/") or "/", cd):
        if candidate.is_dir():
            return form
    return None


def _locate(repo_root: str, target: TestTarget, cd: str | None = None) -> Located:
    """The test path relative to <repo_root>/tests/integration/defs, to repo_root, or absolute
    (relative to the command's own `cd` folder when it has one)."""
    candidates = _candidates(repo_root, target.path, cd)
    for candidate, form in candidates:
        if candidate.is_file():
            return Located(target, candidate.resolve(), form)
    looked = ", ".join(str(c) for c, _ in candidates)
    raise ResolveError(
        f"test file {target.path!r} not found (looked at {looked})", field="test_cmd"
    )


def run_folder(selection: Selection, repo_root: str) -> str | None:
    """Where test_cmd must run for its paths to mean what they say, relative to the project:
    `tests/integration/defs` for defs-relative paths (and for a selection with no path, as
    TRT-LLM's CI runs pytest), `""` (the project itself) for repo-relative ones, None when only
    absolute paths outside defs are named."""
    if selection.cd is not None:
        return ""  # the command's own `cd` is made from the project
    forms = {f.form for f in selection.files}
    forms |= {form for w in selection.folders if (form := _folder(repo_root, w)) is not None}
    if {"defs", "repo"} <= forms:
        raise ResolveError(
            "test_cmd names tests relative to tests/integration/defs and relative to repo_root; "
            "one folder cannot run both: write them all one way",
            field="test_cmd",
        )
    if "repo" in forms:
        return ""
    if "defs" in forms or not forms:
        return DEFS
    defs = (Path(repo_root) / DEFS).resolve()
    if any(f.path.is_relative_to(defs) for f in selection.files):
        return DEFS
    return None
