"""The verdict: a log read line by line as it streams (patterns, the script's exit line, the last
lines), and the rule that turns a final state, an exit code and those findings into a Verdict."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Sequence

from scriptast.contract.run_record import JobState, PatternHit, Verdict
from scriptast.executor.shown import shown as escaped
from scriptast.results.judging import LineReader, Measured

HANG_PATTERN = r"\bHang detected after \d+(?:\.\d+)? seconds"
"""The line TRT-LLM's hang detector (tensorrt_llm/_torch/pyexecutor/hang_detector.py) logs
when the executor loop stops checkpointing: `Hang detected after 300 seconds.` A line that
only mentions hangs (`no hang detected`) is not it. A request's `hang_pattern` replaces it."""
MOST_HITS = 20
LAST_LINES = 30
MOST_LINE = 400
MOST_KEPT_LINE = 1 << 20
"""Bytes of one log line that are kept; the rest of a longer line is searched for the patterns
as it passes, then dropped."""
CARRY = 4096
"""Bytes of an overlong line kept from one chunk to the next, so that a pattern (or a hang
line) up to this long is found even when a chunk boundary splits it."""
HANG_FOUND = "\0hang"
"""Marks the hang pattern among the patterns found past an overlong line's head."""
SLURM_END_LINE = re.compile(
    r"\*\*\* (JOB|STEP) (\d+)(?:\.\S+)? ON \S+ CANCELLED AT \S+(?: DUE TO [^*]+)? \*\*\*"
)
"""The line slurmstepd writes into a job's log when Slurm ends it: `*** JOB 42 ON n1 CANCELLED AT
2026-12-05T21:38:05 DUE TO TIME LIMIT ***` (NODE FAILURE, PREEMPTION; none: scancel). It makes
run ask Slurm at once; the state is Slurm's answer, never the line (a job can print it)."""
EXIT_LINE = re.compile(r"^[A-Za-z][\w ]* finished with exit code (\d+)\s*$")
"""The line every script emit writes prints last (`Bench finished with exit code 0`)."""


class LogScanner:
    """Reads one log's bytes as they come: success, failure and hang patterns with their lines,
    the script's last exit line, and the last lines. Never needs the file again."""

    def __init__(
        self,
        log: str,
        success: Sequence[str],
        failure: Sequence[str],
        hang: str | None = HANG_PATTERN,
        reader: LineReader | None = None,
    ) -> None:
        self.log = log
        self.reader = reader
        self.success = tuple(success)
        self.failure = tuple(failure)
        self.hang = re.compile(hang) if hang else None
        self.success_hits: list[PatternHit] = []
        self.failure_hits: list[PatternHit] = []
        self.hang_hit: PatternHit | None = None
        self.exit_code: int | None = None
        self.slurm_ended: set[str] = set()
        """`JOB id` and `STEP id` that Slurm's own end line in the log names."""
        self.last_lines: deque[str] = deque(maxlen=LAST_LINES)
        self.line_number = 0
        self._partial = b""
        self._overlong = False
        self._carry = b""
        self._cut_found: set[str] | None = None
        """The patterns found past the kept head of the line being read (None: not cut)."""
        self._encoded = [(p, p.encode()) for p in {*self.success, *self.failure}]
        self.cut_lines: list[int] = []
        """Lines longer than MOST_KEPT_LINE, of which only the head was kept."""

    def feed(self, data: bytes) -> None:
        """Take the next bytes of the log; complete lines are read now (the figure reader
        gets them as one block). Of a line longer than MOST_KEPT_LINE only its head is kept;
        the rest is searched for the patterns as it passes (across chunk boundaries) and
        dropped: a line that never ends costs no more memory than its head."""
        if self._overlong:
            cut = data.find(b"\n")
            self._scan_cut(data if cut < 0 else data[:cut])
            if cut < 0:
                return
            data, self._overlong = data[cut:], False  # its newline ends the kept head
        data = self._partial + data
        cut = data.rfind(b"\n")
        if cut < 0:
            if len(data) > MOST_KEPT_LINE:
                head = data[:MOST_KEPT_LINE]
                self._overlong, self._carry, self._cut_found = True, head[-CARRY:], set()
                self._scan_cut(data[MOST_KEPT_LINE:])
                data = head
            self._partial = data
            return
        block, self._partial = data[:cut], data[cut + 1 :]
        first = self.line_number + 1
        for line in block.split(b"\n"):
            self._line(line.decode("utf-8", "replace").rstrip("\r"))
        if self.reader is not None:
            self.reader.block(block, self.log, first)

    def _scan_cut(self, data: bytes) -> None:
        """Search the part of an overlong line past its kept head for the patterns, with the
        last bytes before it, so that a pattern split across two chunks is found."""
        if not data:
            return
        found = self._cut_found
        assert found is not None
        window = self._carry + data
        for pattern, encoded in self._encoded:
            if encoded in window:
                found.add(pattern)
        if self.hang is not None and self.hang.search(window.decode("utf-8", "replace")):
            found.add(HANG_FOUND)
        self._carry = window[-CARRY:]

    def close(self) -> None:
        """The log is complete: read its last line even without a newline."""
        if self._partial:
            self._line(self._partial.decode("utf-8", "replace"))
            if self.reader is not None:
                self.reader.block(self._partial, self.log, self.line_number)
            self._partial = b""

    def _line(self, line: str) -> None:
        self.line_number += 1
        cut, self._cut_found = self._cut_found, None
        shown = escaped(line[:MOST_LINE])
        if cut is not None:
            shown += " \u2026 (cut)"
            if len(self.cut_lines) < MOST_HITS:
                self.cut_lines.append(self.line_number)
        self.last_lines.append(shown)
        for pattern in self.success:
            if (pattern in line or pattern in (cut or ())) and len(self.success_hits) < MOST_HITS:
                self.success_hits.append(self._hit(pattern, shown))
        for pattern in self.failure:
            if (pattern in line or pattern in (cut or ())) and len(self.failure_hits) < MOST_HITS:
                self.failure_hits.append(self._hit(pattern, shown))
        hang = self.hang
        if self.hang_hit is None and hang and (hang.search(line) or HANG_FOUND in (cut or ())):
            self.hang_hit = self._hit(hang.pattern, shown)
        matched = EXIT_LINE.match(line)
        if matched and cut is None:
            self.exit_code = int(matched.group(1))
        if "***" in line:
            ended = SLURM_END_LINE.search(line)
            if ended:
                self.slurm_ended.add(f"{ended.group(1)} {ended.group(2)}")

    def _hit(self, pattern: str, line: str) -> PatternHit:
        return PatternHit(pattern=pattern, log=self.log, line_number=self.line_number, line=line)


def judge(
    *,
    state: JobState | None,
    exit_code: int | None,
    hung: bool,
    timed_out: bool,
    cancelled: bool,
    success_patterns: Sequence[str],
    success_found: bool,
    measured: Measured | None = None,
) -> Verdict:
    """The first verdict that applies, in order: HANG, TIMEOUT (ours or the scheduler's),
    OUT_OF_MEMORY, NODE_FAIL, CANCELLED, FAILED (exit code not 0, or a test failed),
    REGRESSED (a figure outside its reference), INCONCLUSIVE (no exit code; or exit 0 and
    nothing shows the job did its work: an expected figure or the JUnit report missing, every
    test skipped, no test run, or, for a job that measures nothing, no success pattern),
    PASSED. `state` is the job's state as its scheduler's table maps it. With `measured`
    (the job says what it measures), its figures and tests decide, not success patterns.
    Failure patterns never decide: they are evidence.

    >>> judge(state=JobState.COMPLETED, exit_code=0, hung=False, timed_out=False,
    ...       cancelled=False, success_patterns=("passed",), success_found=False)
    <Verdict.INCONCLUSIVE: 'INCONCLUSIVE'>
    """
    if hung:
        return Verdict.HANG
    if timed_out or state is JobState.TIMEOUT:
        return Verdict.TIMEOUT
    if state is JobState.OUT_OF_MEMORY:
        return Verdict.OUT_OF_MEMORY
    if state is JobState.NODE_FAIL:
        return Verdict.NODE_FAIL
    if cancelled or state is JobState.CANCELLED:
        return Verdict.CANCELLED
    code = 0 if exit_code is None and state is JobState.COMPLETED else exit_code
    if (code is not None and code != 0) or state is JobState.FAILED:
        return Verdict.FAILED
    tests = measured.tests if measured is not None else None
    if tests is not None and (tests.failures or tests.errors):
        return Verdict.FAILED
    if code is None:
        return Verdict.INCONCLUSIVE  # no state, no exit code: nothing says it passed
    if measured is not None:
        return _by_measures(measured)
    if success_patterns and not success_found:
        return Verdict.INCONCLUSIVE
    return Verdict.PASSED


def _by_measures(measured: Measured) -> Verdict:
    if measured.regressed:
        return Verdict.REGRESSED
    if measured.missing or measured.unread or measured.errors:
        return Verdict.INCONCLUSIVE
    if measured.tests is not None and measured.tests.passed <= 0:
        return Verdict.INCONCLUSIVE  # every test skipped, or none collected
    return Verdict.PASSED
