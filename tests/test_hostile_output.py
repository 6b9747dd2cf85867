"""Nothing a job prints or writes, and no reference file, turns a failure into PASSED: JUnit
counted from its test cases, a DTD refused in any encoding, numbers read as the tools print them
and never a non-finite one, a bad accuracy reference an error and INCONCLUSIVE, a figure printed
twice judged on its worse value. The jobs run on the real loopback Slurm; the stand-ins print the
hostile output, the judging is scriptast's own."""

from __future__ import annotations

from pathlib import Path

import pytest

from scriptast.results.junit import JunitError, read_junit
from tests.run_site import RunSite, record

PYTEST = "pytest -v test_unmarked.py::test_plain"
NO_FAILURES_ATTRIBUTE = (
    '<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="2" '
    'errors="0" skipped="0"><testcase classname="a" name="t_ok"/><testcase classname="a" '
    'name="t_bad"><failure message="AssertionError">trace</failure></testcase></testsuite>'
    "</testsuites>"
)
BOMB = (
    '<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE t [<!ENTITY a "aaaaaaaaaa">'
    '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><testsuite tests="1">'
    '<testcase classname="a" name="t">&b;</testcase></testsuite>'
)


def test_junit_counts_come_from_the_test_cases_not_the_suites_attributes() -> None:
    tests = read_junit(NO_FAILURES_ATTRIBUTE.encode(), "results.xml")
    assert (tests.tests, tests.failures, tests.errors, tests.skipped) == (2, 1, 0, 0)
    assert tests.notes == (
        "results.xml: its <testsuite> attributes say tests 2, failures 0, errors 0, skipped 0; "
        "its <testcase> elements hold tests 2, failures 1, errors 0, skipped 0, which are "
        "counted",
    )
    claimed_more = NO_FAILURES_ATTRIBUTE.replace('tests="2"', 'tests="9" failures="0"')
    assert read_junit(claimed_more.encode(), "r.xml").tests == 2


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-16-le", "utf-32"])
def test_a_dtd_is_refused_in_any_encoding(encoding: str) -> None:
    data = BOMB.replace("UTF-16", encoding.upper()).encode(encoding)
    if encoding == "utf-16-le":
        data = b"\xff\xfe" + data
    # expat refuses what it cannot decode; what it decodes, defusedxml refuses for its DTD
    said = "DTD or entities" if encoding in ("utf-8", "utf-16") else "not XML"
    with pytest.raises(JunitError, match=said):
        read_junit(data, "results.xml")


@pytest.mark.slurm
def test_a_junit_without_a_failures_attribute_is_failed(runs: RunSite) -> None:
    """The command exits 0 and the suite has no `failures` attribute; one test case failed."""
    work = runs.emit("no_failures_attr", workflow_type="pytest", test_cmd=PYTEST,
                     persistent_mode=False)  # fmt: skip
    done = runs.run("run", str(work), SHIM_PYTEST_RESULTS="passed=2",
                    SHIM_PYTEST_BROKEN_JUNIT=NO_FAILURES_ATTRIBUTE)  # fmt: skip
    assert done.returncode == 10, done.stdout + done.stderr
    found = record(work)
    assert (found["verdict"], found["exit_code"]) == ("FAILED", 0)
    assert [t["id"] for t in found["tests"]["failed"]] == ["a::t_bad"]
    assert any("which are counted" in note for note in found["notes"])


@pytest.mark.slurm
def test_a_utf16_junit_with_entities_is_refused_and_never_passed(
    runs: RunSite, tmp_path: Path
) -> None:
    bomb = tmp_path / "bomb.xml"
    bomb.write_bytes(BOMB.encode("utf-16"))
    work = runs.emit("utf16_bomb", workflow_type="pytest", test_cmd=PYTEST, persistent_mode=False)
    done = runs.run("run", str(work), SHIM_PYTEST_RESULTS="passed=2",
                    SHIM_PYTEST_JUNIT_FILE=str(bomb))  # fmt: skip
    assert done.returncode == 11, done.stdout + done.stderr
    found = record(work)
    assert found["verdict"] == "INCONCLUSIVE"
    assert "DTD or entities" in found["unread"][0]
    assert (work / "run.json").stat().st_size < 64 << 10
