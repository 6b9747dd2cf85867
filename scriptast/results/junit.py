"""A pytest run's JUnit XML (`--junitxml`) as counts and failed tests: the test suites' tests,
failures, errors, skipped and time, and each failed or errored test with its message's first
line. A document with a DTD is refused (no entity in it is expanded)."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree

from scriptast.contract.measured import MOST_FAILED, FailedTest, PytestResults


class JunitError(ValueError):
    """The file is not a JUnit XML report this reader can take."""


def read_junit(data: bytes, source: str) -> PytestResults:
    """The counts and failed tests of a JUnit XML report; JunitError saying why otherwise."""
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        raise JunitError("it declares a DTD or entities, which a JUnit report has no use for")
    try:
        root = ElementTree.fromstring(data)
    except ElementTree.ParseError as error:
        raise JunitError(f"not XML ({error})") from None
    if root.tag == "testsuite":
        suites = [root]
    elif root.tag == "testsuites":
        suites = list(root.iter("testsuite"))
    else:
        raise JunitError(f"its root is <{root.tag}>, not <testsuites> or <testsuite>")
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    seconds = 0.0
    failed: list[FailedTest] = []
    for suite in suites:
        for key in counts:
            counts[key] += _count(suite, key)
        seconds += _seconds(suite.get("time"))
        failed += _failed(suite)
    kept = tuple(failed[:MOST_FAILED])
    return PytestResults(source=source, seconds=round(seconds, 3), failed=kept, **counts)


def _count(suite: ElementTree.Element, key: str) -> int:
    value = suite.get(key, "0")
    try:
        return int(value)
    except ValueError:
        raise JunitError(f"<testsuite {key}={value!r}> is not a count") from None


def _seconds(value: str | None) -> float:
    try:
        return float(value) if value else 0.0
    except ValueError:
        return 0.0


def _failed(suite: ElementTree.Element) -> list[FailedTest]:
    found = []
    for case in suite.iter("testcase"):
        for outcome, tag in (("failed", "failure"), ("error", "error")):
            element = case.find(tag)
            if element is None:
                continue
            name = case.get("name", "?")
            classname = case.get("classname")
            message = element.get("message") or (element.text or "")
            found.append(
                FailedTest(
                    id=f"{classname}::{name}" if classname else name,
                    outcome=outcome,  # type: ignore[arg-type]
                    message=_first_line(message),
                    seconds=_seconds(case.get("time")) or None,
                )
            )
            break
    return found


def _first_line(message: str) -> str:
    return next((line.strip() for line in message.splitlines() if line.strip()), "")
