"""`scriptast judge`: the verdict `run` gives, for output a job already wrote (a CI job's console
log and results.xml, an interactive trtllm-bench run and its --report_json, a colleague's eval):
the same log scanner and figure readers, the same references, the same verdict and summary. What
a job_spec.json says is taken from it; else from the flags; else inferred from the logs (and
said so). Logs are read in chunks: a 1 GB log costs no more memory than a small one."""

from __future__ import annotations

import os
import re
import socket
import stat
from collections.abc import Sequence
from typing import NamedTuple

import msgspec

from scriptast.common.text_files import regular_file_bytes
from scriptast.contract.job_spec import JobSpec
from scriptast.contract.measured import Figure, Measures, PytestResults
from scriptast.contract.run_record import RECORD_VERSION, VERDICT_EXIT, RunRecord
from scriptast.contract.work_dir_names import JOB_SPEC
from scriptast.errors import InputError
from scriptast.executor.followed_job import utc_now
from scriptast.executor.job_files import read_regular
from scriptast.executor.log_verdict import HANG_PATTERN, LogScanner, judge
from scriptast.results.acceptance import AcceptanceLines
from scriptast.results.bench_report import BenchLines
from scriptast.results.eval_lines import EvalLines
from scriptast.results.judging import LineReader, Measured, line_reader, measure
from scriptast.results.junit import JunitError, read_junit
from scriptast.results.reference_file import Where, read_references

WORKFLOWS = ("bench", "eval", "pytest", "perf_sanity")
CHUNK = 1 << 20
FAILURE_PATTERNS = ("Traceback", "Error")
"""Evidence shown with the verdict when no job_spec.json names the job's own."""
_BENCH_MODEL = re.compile(r"^Model:\s+(\S+)\s*$")
_EVAL_MODEL = re.compile(r"\btrtllm-eval\b.*?--model[= ](\S+)")


class JudgeRequest(msgspec.Struct, frozen=True, kw_only=True):
    """What `scriptast judge` was given."""

    logs: tuple[str, ...]
    junit: tuple[str, ...] = ()
    report_json: str | None = None
    workflow: str | None = None
    model: str | None = None
    repo_root: str | None = None
    reference: str | None = None
    job_spec: str | None = None


class _Readers:
    """Every figure reader over one log, for a job whose kind is not known yet; once it is
    (`kind`), the figures are that kind's."""

    def __init__(self) -> None:
        self.bench = BenchLines()
        self.eval = EvalLines()
        self.tests = AcceptanceLines()
        self.kind = "bench"

    def block(self, data: bytes, source: str, first_line: int) -> None:
        self.bench.block(data, source, first_line)
        self.eval.block(data, source, first_line)
        self.tests.block(data, source, first_line)

    def chosen(self) -> LineReader:
        found: dict[str, LineReader] = {"eval": self.eval, "pytest": self.tests}
        return found.get(self.kind, self.bench)

    def figures(self) -> list[Figure]:
        return self.chosen().figures()

    def unreadable(self) -> list[str]:
        return self.chosen().unreadable()


class _Scanner(LogScanner):
    """run's scanner, noting the model a trtllm-bench report or a trtllm-eval command names."""

    models: dict[str, str]

    def _line(self, line: str) -> None:
        super()._line(line)
        if "Model:" in line and (found := _BENCH_MODEL.match(line.strip())):
            self.models.setdefault("bench", found.group(1))
        if "trtllm-eval" in line and (found := _EVAL_MODEL.search(line)):
            self.models.setdefault("eval", found.group(1).strip("'\""))


def _scan(path: str, scanner: _Scanner) -> None:
    """Feed the whole file to the scanner, a chunk at a time (never a link, a FIFO or a
    device: a regular file only)."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        raise InputError(f"cannot read log {path}: {error.strerror}") from None
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise InputError(f"log {path} is not a regular file: give the log file itself")
        while chunk := os.read(descriptor, CHUNK):
            scanner.feed(chunk)
        scanner.close()
    finally:
        os.close(descriptor)


def _spec(path: str) -> JobSpec:
    try:
        return msgspec.json.decode(read_regular(path, JOB_SPEC), type=JobSpec)
    except (msgspec.DecodeError, msgspec.ValidationError) as error:
        raise InputError(f"{path} is not a job_spec.json scriptast can read: {error}") from None


class Judged(NamedTuple):
    """The files' verdict as run would have recorded it, and what they were judged to measure
    (None: judged by the log's patterns)."""

    record: RunRecord
    measures: Measures | None


def judge_files(request: JudgeRequest) -> Judged:
    """The record of the files' verdict, as `run` would have written it."""
    if not request.logs and not request.junit and not request.report_json:
        raise InputError("give the job's log (and --junit or --report-json if it wrote one)")
    if request.workflow is not None and request.workflow not in WORKFLOWS:
        raise InputError(f"--workflow {request.workflow}: give one of {', '.join(WORKFLOWS)}")
    spec = _spec(request.job_spec) if request.job_spec else None
    references = read_references(request.reference) if request.reference else None
    said: list[str] = ["judged from files by scriptast judge, not run"]
    known = spec.measures if spec is not None else None
    scanners: list[_Scanner] = []
    guessed: list[_Readers] = []
    for path in request.logs:
        reader: LineReader | None = line_reader(known) if spec is not None else None
        if spec is None:
            reader = _Readers()
            guessed.append(reader)
        scanner = _Scanner(path, spec.success_patterns if spec else (),
                           spec.failure_patterns if spec else FAILURE_PATTERNS,
                           hang=(spec.hang_pattern if spec else None) or HANG_PATTERN,
                           reader=reader)  # fmt: skip
        scanner.models = {}
        _scan(path, scanner)
        scanners.append(scanner)
    measures = known or _measures(request, scanners, guessed, said)
    for each in guessed:
        each.kind = measures.kind if measures is not None else "bench"
    figures = _logged(scanners)
    measured = None
    if measures is not None:
        unreadable = tuple(u for s in scanners if s.reader for u in s.reader.unreadable())
        repo_root = request.repo_root or (spec.repo_root if spec else None)
        place = spec.slurm_params.partition if spec and spec.slurm_params else None
        where = Where(model=measures.model, partition=place, gpu_type=measures.gpu_type)
        junits = request.junit or ((measures.junit,) if measures.junit and spec else ())
        plain = msgspec.structs.replace(measures, junit=None)
        measured = measure(plain, figures, _read_file, list_files=None, repo_root=repo_root,
                           where=where, references=references, unreadable=unreadable)  # fmt: skip
        if junits:
            measured.tests = _tests(junits, measured)
        if measures.kind == "pytest" and not junits:
            measured.missing.append("the JUnit report (give --junit FILE)")
    return Judged(_record(request, spec, scanners, measured, said), measures)


def _measures(request: JudgeRequest, scanners: Sequence[_Scanner], guessed: list[_Readers],
              said: list[str]) -> Measures | None:  # fmt: skip
    """What the files measure, from the flags, else from what the logs hold (said)."""
    kind = request.workflow
    bench_found = any(r.bench.figures() for r in guessed)
    eval_found = any(r.eval.figures() for r in guessed)
    if kind is None:
        if request.junit:
            kind = "pytest"
        elif request.report_json or bench_found:
            kind = "bench"
        elif eval_found:
            kind = "eval"
        if kind is not None:
            said.append(f"workflow {kind}: inferred from the files (give --workflow to say it)")
    if kind is None:
        said.append("no figure, report or JUnit file found: judged by the log's patterns")
        return None
    model = request.model
    if model is None:
        model = next((s.models[kind] for s in scanners if kind in s.models), None)
        if model is not None:
            said.append(f"model {model}: inferred from the log (give --model to say it)")
    tasks: tuple[str, ...] = ()
    if kind == "eval":
        names = [f.name for r in guessed for f in r.eval.figures()]
        tasks = tuple(dict.fromkeys(name.split()[0] for name in names))
    return Measures(kind=kind, model=model, tasks=tasks,  # type: ignore[arg-type]  # checked
                    report_json=request.report_json)  # fmt: skip


def _logged(scanners: Sequence[_Scanner]) -> list[Figure]:
    found: dict[str, Figure] = {}
    for scanner in scanners:
        for figure in scanner.reader.figures() if scanner.reader is not None else []:
            found.setdefault(figure.name, figure)
    return list(found.values())


def _read_file(path: str) -> bytes:
    return regular_file_bytes(path, follow_links=False)[0]


def _tests(paths: Sequence[str], measured: Measured) -> PytestResults | None:
    """Every JUnit report given, added up; one that cannot be read is named unread."""
    found: list[PytestResults] = []
    for path in paths:
        try:
            found.append(read_junit(_read_file(path), path))
        except (OSError, JunitError) as error:
            why = error.strerror if isinstance(error, OSError) else str(error)
            measured.unread.append(f"{path}: {why}")
    if not found:
        return None
    counts = {key: sum(getattr(r, key) for r in found)
              for key in ("tests", "failures", "errors", "skipped")}  # fmt: skip
    return PytestResults(
        source=", ".join(r.source for r in found),
        seconds=round(sum(r.seconds for r in found), 3),
        failed=tuple(t for r in found for t in r.failed)[:100],
        notes=tuple(n for r in found for n in r.notes),
        **counts,
    )


def _record(request: JudgeRequest, spec: JobSpec | None, scanners: Sequence[_Scanner],
            measured: Measured | None, said: list[str]) -> RunRecord:  # fmt: skip
    exit_line = next((s.exit_code for s in reversed(scanners) if s.exit_code is not None), None)
    code = exit_line
    if exit_line is None and measured is not None:
        code = 0  # what the job measured decides; nothing is taken as passed without it
        said.append("the files hold no exit code: judged by what they hold")
    hang = next((s.hang_hit for s in scanners if s.hang_hit is not None), None)
    success = tuple(h for s in scanners for h in s.success_hits)
    verdict = judge(state=None, exit_code=code,
                    hung=hang is not None, timed_out=False, cancelled=False,
                    success_patterns=spec.success_patterns if spec else (),
                    success_found=bool(success) or spec is None,
                    measured=measured)  # fmt: skip
    record = RunRecord(
        version=RECORD_VERSION,
        work_dir=os.path.dirname(os.path.abspath(request.job_spec))
        if request.job_spec
        else os.getcwd(),
        execution_scenario=spec.execution_scenario if spec else None,
        script=(spec.script_path or "") if spec else "",
        submitted_at=utc_now(),
        submit_command=("scriptast", "judge", *request.logs),
        out_log=request.logs[0] if request.logs else "",
        host=socket.gethostname(),
        state="JUDGED",
        exit_code=exit_line,
        final_state_source="files (scriptast judge)",
        verdict=verdict,
        verdict_exit_code=VERDICT_EXIT[verdict],
        finished_at=utc_now(),
        success_hits=success,
        failure_hits=tuple(h for s in scanners for h in s.failure_hits)[:20],
        hang_hit=hang,
        last_lines=tuple(line for s in scanners for line in s.last_lines)[-30:],
    )
    if measured is not None:
        record.figures = tuple(measured.figures)
        record.tests = measured.tests
        record.missing = tuple(measured.missing)
        record.unread = tuple(measured.unread)
        record.errors = tuple(measured.errors)
        tests_said = measured.tests.notes if measured.tests is not None else ()
        said += [*measured.notes, *tests_said]
    record.notes = tuple(dict.fromkeys(said))
    return record


def store_files_verdict(judged: Judged, request: JudgeRequest, results: str | None) -> str:
    """Add the verdict to the results store, marked as judged from files; what to say of it."""
    import pwd

    from scriptast.results.store.database import Store
    from scriptast.results.store.location import locate
    from scriptast.results.store.rows import Origin, judged_run, stored_run

    location = locate(results)
    user = pwd.getpwuid(os.getuid()).pw_name
    origin = Origin(spec_digest=None, trtllm_commit=None, user_name=user, cluster=None,
                    stored_at=utc_now())  # fmt: skip
    record, measures = judged
    if request.job_spec:
        row = stored_run(_spec(request.job_spec), record, origin)
    else:
        workflow = measures.kind if measures is not None else "custom"
        row = judged_run(record, workflow, measures.model if measures else None, origin)
    with Store.open(location, create=True, timeout=10.0) as store:
        run_id = store.append(row)
    said = f"as run {run_id}" if run_id is not None else "before (the same files)"
    return f"stored in the results store {location.shown} {said}, judged from files"
