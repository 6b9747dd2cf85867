"""The waives file pytest is run with (`--waives-file`): the repository's
`tests/integration/test_lists/waives.txt`, or another a request names; checked before it is
used, one line a waived test as upstream writes them: `[full:<GPU>/]<test id> SKIP (<why>)`,
blank lines and `#` comments between."""

from __future__ import annotations

import posixpath

from scriptast.common.text_files import regular_file_bytes
from scriptast.errors import InputError

WAIVES = "tests/integration/test_lists/waives.txt"
SKIP, SKIP_WHY = " SKIP", " SKIP ("


def is_waive(line: str) -> bool:
    """`[full:<GPU>/]<test id> SKIP` or `... SKIP (<why>)`, read in one pass (a line of many
    `SKIP` words costs no more than its length).

    >>> is_waive("a/b.py::t SKIP (https://nvbugs/1)"), is_waive("a/b.py::t"), is_waive("# x SKIP")
    (True, False, False)
    """
    if not line or line[0].isspace() or line[0] == "#":
        return False
    if len(line) > len(SKIP) and line.endswith(SKIP):
        return True
    found = line.find(SKIP_WHY, 1)
    return line.endswith(")") and found != -1 and found + len(SKIP_WHY) < len(line)


def check_waives(path: str) -> tuple[int, str]:
    """The number of waived tests in `path` and its text; InputError naming the file and the
    first line that is not a waive."""
    try:
        data, _ = regular_file_bytes(path, 16 << 20)
    except FileNotFoundError:
        raise InputError(f"{path}: no waives file there: give waives_file, or a repo_root whose "
                         f"{WAIVES} exists", field="waives_file") from None  # fmt: skip
    except OSError as error:
        raise InputError(f"{path}: cannot read it: {error.strerror}", field="waives_file") from None
    count = 0
    text = data.decode("utf-8", "replace")
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if not is_waive(line):
            shown = line if len(line) <= 80 else line[:77] + "..."
            raise InputError(f"{path}:{number}: not a waive: {shown!r} (a waive is '<test id> "
                             "SKIP (<reason>)')", field="waives_file")  # fmt: skip
        count += 1
    return count, text


def default_waives(project: str) -> str:
    return posixpath.join(project, WAIVES)
