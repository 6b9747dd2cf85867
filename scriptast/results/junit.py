"""A pytest run's JUnit XML (`--junitxml`) as counts and failed tests, counted from its
`<testcase>` elements (failure, error, skipped), never from the `<testsuite>` attributes, which
are only compared with them (a disagreement is noted); each failed or errored test with its
message's first line. A document with a DTD, in any encoding, is refused: no entity in it is
expanded (defusedxml's parser)."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree

import defusedxml.ElementTree as SafeTree
from defusedxml import DefusedXmlException

from scriptast.contract.measured import MOST_FAILED, FailedTest, PytestResults

COUNTS = ("tests", "failures", "errors", "skipped")


class JunitError(ValueError):
    """The file is not a JUnit XML report this reader can take."""


def read_junit(data: bytes, source: str, prefix: str | None = None) -> PytestResults:
    """The counts and failed tests of a JUnit XML report; JunitError saying why otherwise.
    `prefix` is the `--test-prefix` CI put in front of each classname, when known."""
    try:
        root = SafeTree.fromstring(data, forbid_dtd=True)
    except DefusedXmlException:
        raise JunitError(
            "it declares a DTD or entities, which a JUnit report has no use for"
        ) from None
    except ElementTree.ParseError as error:
        raise JunitError(f"not XML ({error})") from None
    except ValueError as error:  # expat's: an encoding it cannot read (UTF-32, say)
        raise JunitError(f"not XML this reader can take ({error})") from None
    if root.tag == "testsuite":
        suites = [root]
    elif root.tag == "testsuites":
        suites = list(root.iter("testsuite"))
    else:
        raise JunitError(f"its root is <{root.tag}>, not <testsuites> or <testsuite>")
    counted = dict.fromkeys(COUNTS, 0)
    claimed: dict[str, list[str]] = {key: [] for key in COUNTS}
    seconds = 0.0
    failed: list[FailedTest] = []
    for suite in suites:
        for key in COUNTS:
            claimed[key].append(suite.get(key, "0"))
        for case in suite.findall("testcase"):
            counted["tests"] += 1
            outcome = _outcome(case)
            if outcome is not None:
                counted[outcome] += 1
        seconds += _seconds(suite.get("time"))
        failed += _failed(suite, prefix)
    notes: tuple[str, ...] = ()
    unsure = [t for t in failed if t.junit and t.junit.endswith(" (ambiguous)")]
    if unsure:
        notes += (f"{source}: the test id of {len(unsure)} failed test(s) was read from its "
                  f"JUnit classname without a file, and may be wrong: {unsure[0].id}",)  # fmt: skip
    if any(_total(claimed[key]) != counted[key] for key in COUNTS):
        said = ", ".join(f"{key} {'+'.join(claimed[key]) or 0}" for key in COUNTS)
        found = ", ".join(f"{key} {counted[key]}" for key in COUNTS)
        notes = (f"{source}: its <testsuite> attributes say {said}; its <testcase> elements "
                 f"hold {found}, which are counted",)  # fmt: skip
    kept = tuple(failed[:MOST_FAILED])
    return PytestResults(
        source=source, seconds=round(seconds, 3), failed=kept, notes=notes, **counted
    )


def _outcome(case: ElementTree.Element) -> str | None:
    """Which count a test case adds to besides `tests`, as pytest writes them."""
    for tag, key in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
        if case.find(tag) is not None:
            return key
    return None


def _total(values: list[str]) -> int | None:
    """The `<testsuite>` attributes' counts added up (None when one is no count), compared
    only."""
    try:
        return sum(int(value) for value in values)
    except ValueError:
        return None


def _seconds(value: str | None) -> float:
    try:
        seconds = float(value) if value else 0.0
    except ValueError:
        return 0.0
    return seconds if 0 <= seconds < 1e9 else 0.0


def _failed(suite: ElementTree.Element, prefix: str | None) -> list[FailedTest]:
    found = []
    for case in suite.findall("testcase"):
        for outcome, tag in (("failed", "failure"), ("error", "error")):
            element = case.find(tag)
            if element is None:
                continue
            name = case.get("name", "?")
            classname = case.get("classname")
            message = element.get("message") or (element.text or "")
            node, sure = node_id(classname or "", name, case.get("file"), prefix)
            written = f"{classname}::{name}" if classname else name
            found.append(
                FailedTest(
                    id=node,
                    outcome=outcome,  # type: ignore[arg-type]
                    message=_first_line(message),
                    seconds=_seconds(case.get("time")) or None,
                    junit=None if node == written else written + ("" if sure else " (ambiguous)"),
                )
            )
            break
    return found


def node_id(classname: str, name: str, file: str | None, prefix: str | None) -> tuple[str, bool]:
    """The pytest node id a person can paste (`accuracy/test_x.py::TestY::test_z[a]`) of a
    JUnit test case, and whether it is sure. pytest writes the classname as the module's
    dotted path, then its classes (a `--test-prefix` in front); xunit1 reports also give the
    file. Without a file, the module is the last segment named like a test module.

    >>> node_id("accuracy.test_api.TestLlama", "test_fp8[x]", None, None)
    ('accuracy/test_api.py::TestLlama::test_fp8[x]', True)
    """
    parts = classname.split(".") if classname else []
    if prefix and classname.startswith(prefix + "."):
        parts = parts[len(prefix.split(".")) :]
    if file and file.endswith(".py"):
        module = file.removesuffix(".py").replace("/", ".").split(".")
        if parts[: len(module)] == module:
            return "::".join([file, *parts[len(module) :], name]), True
    modules = [i for i, p in enumerate(parts)
               if p.startswith("test_") or p.endswith("_test") or p == "test"]  # fmt: skip
    if not modules:
        return (f"{classname}::{name}" if classname else name), False
    index = modules[-1]
    folders = parts[:index]
    sure = len(modules) == 1
    while folders and not folders[0].isidentifier():
        folders = folders[1:]  # a CI stage's prefix (DGX_H100-PyTorch-3), not a folder
        sure = sure and prefix is not None
    path = "/".join([*folders, parts[index]]) + ".py"
    return "::".join([path, *parts[index + 1 :], name]), sure


def _first_line(message: str) -> str:
    return next((line.strip() for line in message.splitlines() if line.strip()), "")
