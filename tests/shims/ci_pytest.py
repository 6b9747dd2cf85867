"""pytest as a CI stage runs it, for the stand-in: the `--test-list` lines (their `TIMEOUT`
and `ISOLATION` markers read off), the `--waives-file` waives skipped with their reason,
`--splits N --group k` as pytest-split's least_duration algorithm splits the tests (durations
from `--durations-path`, the mean for a test without one, 1 s with none known), a test whose
id holds a word of SHIM_PYTEST_FAIL failing, and the JUnit XML `--junit-xml` names with each
test's id under the `--test-prefix`. Without a `--test-list`, the ids and files its arguments
name are the tests, as pytest takes them."""

import heapq
import json
import os
import time
from collections.abc import Callable
from xml.sax.saxutils import quoteattr


def _tests(path: str) -> list[str]:
    tests = []
    with open(path, encoding="utf-8") as stream:
        lines = stream.read().splitlines()
    for raw in lines:
        line = raw.split(" TIMEOUT ")[0].split(" ISOLATION")[0].strip()
        if line and not line.startswith("#"):
            tests.append(line)
    return tests


def _waived(path: str | None) -> dict[str, str]:
    found: dict[str, str] = {}
    if not path:
        return found
    with open(path, encoding="utf-8") as stream:
        lines = stream.read().splitlines()
    for raw in lines:
        line = raw.strip()
        if not line or line.startswith("#") or " SKIP" not in line:
            continue
        test, _, reason = line.partition(" SKIP")
        if test.startswith("full:"):
            test = test.split("/", 1)[1]
        found[test] = reason.strip(" ()") or "waived"
    return found


def least_duration(tests: list[str], splits: int, durations: dict[str, float]) -> list[list[str]]:
    """pytest-split's least_duration: longest first onto the lightest group (ties by index),
    each group then in the tests' own order."""
    known = [durations[t] for t in tests if t in durations]
    mean = sum(known) / len(known) if known else 1.0
    timed = [(t, durations.get(t, mean), i) for i, t in enumerate(tests)]
    timed.sort(key=lambda item: str(item[0]))
    timed.sort(key=lambda item: item[1], reverse=True)
    heap = [(0.0, group) for group in range(splits)]
    heapq.heapify(heap)
    chosen: list[list[tuple[str, int]]] = [[] for _ in range(splits)]
    for test, seconds, index in timed:
        total, group = heapq.heappop(heap)
        chosen[group].append((test, index))
        heapq.heappush(heap, (total + seconds, group))
    return [[t for t, _ in sorted(group, key=lambda item: item[1])] for group in chosen]


def _case(prefix: str | None, test: str, body: str, seconds: float) -> str:
    path, _, rest = test.split(" ")[0].partition("::")
    module = path.removesuffix(".py").replace("/", ".")
    parts = rest.split("::") if rest else [path.rsplit("/", 1)[-1]]
    classname = ".".join([*([prefix] if prefix else []), module, *parts[:-1]])
    return (
        f"<testcase classname={quoteattr(classname)} name={quoteattr(parts[-1])} "
        f'time="{seconds:.3f}">{body}</testcase>'
    )


def run_stage(argv: list[str], flag: Callable[[list[str], str], str | None]) -> int:
    """Run the split `--group` of the list; `flag` reads an option's value as the shim does."""
    _flag = flag
    listed = _flag(argv, "--test-list")
    tests = _tests(listed) if listed else [a for a in argv if ".py" in a and a[0] != "-"]
    waived = _waived(_flag(argv, "--waives-file"))
    durations_path = _flag(argv, "--durations-path")
    durations: dict[str, float] = {}
    if durations_path:
        with open(durations_path, encoding="utf-8") as stream:
            durations = json.load(stream)
    splits, group = int(_flag(argv, "--splits") or 1), int(_flag(argv, "--group") or 1)
    mine = least_duration(tests, splits, durations)[group - 1]
    failing = [w for w in os.environ.get("SHIM_PYTEST_FAIL", "").split(",") if w]
    prefix = _flag(argv, "--test-prefix")
    cases, counts = [], {"passed": 0, "failed": 0, "skipped": 0}
    for test in mine:
        seconds = durations.get(test, 0.5)
        if test.split(" ")[0] in waived:
            body = f'<skipped type="pytest.skip" message={quoteattr(waived[test.split(" ")[0]])}/>'
            counts["skipped"] += 1
        elif any(word in test for word in failing):
            body = (
                f"<failure message={quoteattr(f'AssertionError: {test} failed')}>"
                "assert False</failure>"
            )
            counts["failed"] += 1
        else:
            body = ""
            counts["passed"] += 1
        print(
            f"{prefix + '/' if prefix else ''}{test} "
            f"{'FAILED' if 'failure' in body else 'SKIPPED' if body else 'PASSED'}"
        )
        cases.append(_case(prefix, test, body, seconds))
    junit = _flag(argv, "--junit-xml") or _flag(argv, "--junitxml")
    if junit:
        with open(junit, "w", encoding="utf-8") as stream:
            stream.write(
                '<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite '
                f'name="pytest" errors="0" failures="{counts["failed"]}" '
                f'skipped="{counts["skipped"]}" tests="{len(cases)}" time="1.0" '
                f'timestamp="{time.strftime("%Y-%m-%dT%H:%M:%S")}">'
                + "".join(cases)
                + "</testsuite></testsuites>"
            )
    said = ", ".join(f"{n} {w}" for w, n in counts.items() if n) or "no tests ran"
    print(f"{'=' * 20} {said} in 1.00s {'=' * 20}")
    return 1 if counts["failed"] else 5 if not cases else 0
