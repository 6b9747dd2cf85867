"""Speculative decoding's acceptance length, as upstream's accuracy tests report and gate it:
accuracy_core.py's assert_acceptance_length_for_llm prints `[AL] <test key> acceptance_length =
X` in the test's log and requires X >= the key's `min_al` in
references/acceptance_length.yaml; read from the log of a pytest job and held against the same
file (a `min_al: null` stub, or a key the file lacks, is no check)."""

from __future__ import annotations

import re

import msgspec

from scriptast.common.bounded_yaml import BoundedYamlError, load_bounded
from scriptast.common.numbers import VALUE, is_finite
from scriptast.common.text_files import regular_file_bytes
from scriptast.contract.measured import Check, Figure, Source
from scriptast.results.accuracy import REFERENCES_DIR
from scriptast.results.figure_book import FigureBook
from scriptast.results.keyword_lines import KeywordLines

SUFFIX = " acceptance_length"
FILE = f"{REFERENCES_DIR}/acceptance_length.yaml"
_LINE = re.compile(r"\[AL\] (\S+) acceptance_length = " + VALUE)


class AcceptanceLines(KeywordLines):
    """Reads a test log's `[AL] <key> acceptance_length = X` lines as they come."""

    def __init__(self) -> None:
        super().__init__((b"[AL] ",))
        self.book = FigureBook("worst")

    def line(self, text: str, source: str, number: int) -> None:
        if matched := _LINE.search(text):
            self.book.add(matched.group(1) + SUFFIX, matched.group(2), "",
                          Source(file=source, line=number), higher=True)  # fmt: skip

    def figures(self) -> list[Figure]:
        return self.book.figures()

    def unreadable(self) -> list[str]:
        return self.book.unreadable


def acceptance_check(figure: Figure, repo_root: str | None) -> tuple[Figure, str | None]:
    """The figure held against its key's min_al; an error line for a bad entry."""
    if not repo_root:
        return msgspec.structs.replace(figure, unchecked="no repo_root to read "
                                       "acceptance_length.yaml from"), None  # fmt: skip
    path = f"{repo_root.rstrip('/')}/{FILE}"
    key = figure.name.removesuffix(SUFFIX)
    try:
        table, lines = load_bounded(regular_file_bytes(path)[0])
    except OSError as error:
        return msgspec.structs.replace(figure, unchecked=f"no {path} ({error.strerror})"), None
    except BoundedYamlError as problem:
        return msgspec.structs.replace(figure, unchecked=str(problem)), f"{path}: {problem}"
    entry = table.get(key) if isinstance(table, dict) else None
    if not isinstance(entry, dict):
        return msgspec.structs.replace(figure, unchecked=f"{path} has no entry for {key}"), None
    minimum, reference = entry.get("min_al"), entry.get("ref_al")
    if minimum is None:
        said = f"{path}: {key} has min_al null (not populated yet)"
        return msgspec.structs.replace(figure, unchecked=said), None
    if not is_finite(minimum):
        line = lines.of(entry, "min_al")
        bad = f"{path}:{line}: min_al is {minimum!r}, which is not a finite number"
        return msgspec.structs.replace(figure, unchecked=bad), bad
    base = float(reference) if is_finite(reference) else float(minimum)
    check = Check(reference=round(base, 6), lower=round(float(minimum), 6),
                  origin=f"{path}: {key} (min_al)",
                  margin=round(figure.value - float(minimum), 6),
                  ok=figure.value >= float(minimum))  # fmt: skip
    return msgspec.structs.replace(figure, check=check), None
