"""The executor's rules without a cluster: verdicts, the log scanner, log names, Slurm's answers
read (sacct, scontrol, squeue), one squeue per poll for many jobs, allocations, bad work_dirs."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from scriptast.builders.categories.perf_sanity.launch_readback import read_launch_script
from scriptast.common.clock_time import clock_seconds
from scriptast.contract.axes import ExecutionScenario, WorkflowType
from scriptast.contract.run_record import RECORD_VERSION, JobState, RunRecord, Verdict
from scriptast.contract.transport import Completed
from scriptast.errors import RunError
from scriptast.executor.follow_loop import Follower, poll_delays
from scriptast.executor.followed_job import Followed
from scriptast.executor.job_files import LoadedJob, load_job
from scriptast.executor.log_verdict import LogScanner, judge
from scriptast.executor.options import Writer, parse_seconds
from scriptast.executor.report import exit_code
from scriptast.schedulers.docker.launcher import container_name
from scriptast.schedulers.registry import scheduler
from scriptast.schedulers.slurm.allocation import Allocation, AllocationParams, choose
from scriptast.schedulers.slurm.client import QUEUE_FORMAT, SlurmClient, parse_code_signal
from scriptast.schedulers.slurm.launcher import log_path
from scriptast.schedulers.tracking import QueueTracker
from tests.run_site import SCRIPTAST

# What Slurm 22.05 prints for these commands (`sacct -n -P -X -o JobID,State,ExitCode` and
# squeue's --Format fields below), as recorded on a cluster.
SACCT = (
    "4101|COMPLETED|0:0\n4102|FAILED|3:0\n4103|CANCELLED by 1000|0:15\n4104|TIMEOUT|0:0\n"
    "4104.batch|CANCELLED|0:15\n4106|TIMEOUT|0:0\n4106.batch|FAILED|15:0\n"
    "4107|FAILED|2:0\n4107.batch|FAILED|2:0\n4108|TIMEOUT|0:0\n4108.batch|CANCELLED|0:0\n"
)
SQUEUE_ENDED = (
    # squeue --Format JobID:|,State:|,Reason:|,TimeUsed:|,TimeLeft:|,NodeList:|,RestartCnt:|,
    # exit_code:| (the raw wait status: 3 << 8 for exit 3, 9 for a kill by SIGKILL)
    "4102|FAILED|NonZeroExitCode|0:02|3:59:58|n1|0|768|\n"
    "4105|OUT_OF_MEMORY|OutOfMemory|1:02|2:58|n2|1|9|\n"
    "4106|TIMEOUT|TimeLimit|1:00|0:00|n1|0|36608|\n"
)


class FakeTransport:
    """Answers Slurm's commands from a table and counts the calls."""

    where = "a fake cluster"

    def __init__(self, answers: dict[str, Completed]) -> None:
        self.answers = answers
        self.calls: list[list[str]] = []

    def run(
        self, argv: Sequence[str], *, timeout: float = 60.0, cwd: str | None = None
    ) -> Completed:
        self.calls.append(list(argv))
        return self.answers.get(argv[0], Completed(code=1, out="", err="not here"))

    def run_shell(
        self, command: str, *, timeout: float = 60.0, data: bytes | None = None
    ) -> Completed:
        raise AssertionError(f"a Slurm client ran a shell command: {command}")

    def stream(self, command: str) -> subprocess.Popen[bytes]:
        raise AssertionError(f"a Slurm client streamed: {command}")

    def close(self) -> None:
        pass

    def fetch(self, path: str) -> bytes | None:
        raise AssertionError(f"a Slurm client fetched {path}")

    def put(
        self, path: str, data: bytes, *, executable: bool = False, sha256: str | None = None
    ) -> Completed:
        raise AssertionError(f"a Slurm client wrote {path}")


@pytest.mark.parametrize(
    ("state", "code", "flags", "success", "verdict"),
    [
        ("COMPLETED", 0, {"hung": True}, True, Verdict.HANG),
        ("TIMEOUT", 0, {}, True, Verdict.TIMEOUT),
        ("RUNNING", None, {"timed_out": True}, False, Verdict.TIMEOUT),
        ("OUT_OF_MEMORY", 0, {}, True, Verdict.OUT_OF_MEMORY),
        ("NODE_FAIL", 1, {}, False, Verdict.NODE_FAIL),
        ("CANCELLED", 0, {}, True, Verdict.CANCELLED),
        ("COMPLETED", 0, {"cancelled": True}, True, Verdict.CANCELLED),
        ("FAILED", 3, {}, True, Verdict.FAILED),
        ("COMPLETED", 0, {}, False, Verdict.INCONCLUSIVE),
        (None, None, {}, False, Verdict.INCONCLUSIVE),
        ("COMPLETED", None, {}, True, Verdict.PASSED),
        ("COMPLETED", 0, {}, True, Verdict.PASSED),
    ],
)
def test_the_first_verdict_that_applies_wins(
    state: str | None, code: int | None, flags: dict[str, bool], success: bool, verdict: Verdict
) -> None:
    given = {"hung": False, "timed_out": False, "cancelled": False, **flags}
    assert (
        judge(
            state=None if state is None else scheduler("slurm").state(state),
            exit_code=code,
            success_patterns=("passed",),
            success_found=success,
            hung=given["hung"],
            timed_out=given["timed_out"],
            cancelled=given["cancelled"],
        )
        is verdict
    )


def test_no_success_pattern_to_look_for_passes_on_exit_0() -> None:
    assert judge(state=JobState.COMPLETED, exit_code=0, hung=False, timed_out=False, cancelled=False,
                 success_patterns=(), success_found=False) is Verdict.PASSED  # fmt: skip


def test_the_scanner_reads_lines_across_reads_and_keeps_evidence() -> None:
    scanner = LogScanner("/log", ["passed"], ["FAILED", "Error"])
    scanner.feed(b"0: collected 4 items\n0: test_a FAI")
    scanner.feed(b"LED\n0: 1 failed, 3 pas")
    assert scanner.success_hits == []  # the line is not complete yet
    scanner.feed(b"sed in 2s\r\nHang detected after 300 seconds.\nTest finished with exit code 1\n")
    scanner.close()
    assert [(h.pattern, h.line_number) for h in scanner.failure_hits] == [("FAILED", 2)]
    assert [(h.pattern, h.line) for h in scanner.success_hits] == [
        ("passed", "0: 1 failed, 3 passed in 2s")
    ]
    assert scanner.hang_hit is not None and scanner.hang_hit.line_number == 4
    assert scanner.exit_code == 1
    assert list(scanner.last_lines)[-1] == "Test finished with exit code 1"


def test_a_ranks_exit_line_is_not_the_scripts() -> None:
    scanner = LogScanner("/log", [], [])
    scanner.feed(b"0: Rank0 Custom command finished with exit code 0\n")
    assert scanner.exit_code is None
    scanner.feed(b"Custom job finished with exit code 2\n")
    assert scanner.exit_code == 2


def test_log_paths_fill_in_sbatchs_patterns() -> None:
    assert log_path("/w/%x_%j_100%%.out", "42", "job") == "/w/job_42_100%.out"


def test_a_launch_scripts_log_names_are_read_as_sbatch_reads_its_header() -> None:
    theirs = (
        "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks=1\n#SBATCH --ntasks-per-node=1\n"
        "#SBATCH -J perf\n#SBATCH -o /w/slurm-%j.out\n#SBATCH -e /w/slurm-%j.err\n"
        "export A=1\n#SBATCH -e late\n"
    )
    launch = read_launch_script(theirs)
    assert (launch.output, launch.error, launch.job_name) == (
        "/w/slurm-%j.out",
        "/w/slurm-%j.err",
        "perf",
    )


@pytest.mark.parametrize(
    ("text", "pair"),
    [("0:0", (0, None)), ("3:0", (3, None)), ("0:15", (0, 15)), ("1:9", (1, 9)), ("", (None, None)),
     ("x:1", (None, None))],
)  # fmt: skip
def test_slurm_exit_codes_read_as_code_and_signal(text: str, pair: tuple[int | None, int | None]
                                                   ) -> None:  # fmt: skip
    assert parse_code_signal(text) == pair


def test_durations_and_slurm_times() -> None:
    assert [parse_seconds(t) for t in ("90", "90s", "5m", "2h", "01:00:00", "1-00:00:00")] == [
        90.0, 90.0, 300.0, 7200.0, 3600.0, 86400.0,
    ]  # fmt: skip
    with pytest.raises(ValueError, match="not a duration"):
        parse_seconds("soon")
    assert clock_seconds("3:59:57") == 14397.0 and clock_seconds("UNLIMITED") is None
    assert list(zip(range(7), poll_delays(10.0), strict=False))[-1] == (6, 10.0)


def test_final_states_come_from_sacct_then_squeue_with_the_signal_apart() -> None:
    transport = FakeTransport({
        "sacct": Completed(code=0, out=SACCT, err=""),
        "squeue": Completed(code=0, out=SQUEUE_ENDED, err=""),
    })  # fmt: skip
    wanted = ["4101", "4102", "4103", "4104", "4105", "4106", "4107", "4108"]
    finals = SlurmClient(transport).finals(wanted)
    assert {k: (v.state, v.exit_code, v.signal, v.source) for k, v in finals.items()} == {
        "4101": ("COMPLETED", 0, None, "sacct"),
        "4102": ("FAILED", 3, None, "sacct"),
        "4103": ("CANCELLED", 0, 15, "sacct"),
        # ended at the time limit: the batch step's exit is the job's (scontrol's ExitCode),
        # whether the signal ended the script or the script exited on it
        "4104": ("TIMEOUT", 0, 15, "sacct"),
        "4105": ("OUT_OF_MEMORY", 0, 9, "squeue"),
        # sacct prints 143 as 15; the controller, while it holds the job, says 143
        "4106": ("TIMEOUT", 143, None, "sacct"),
        "4107": ("FAILED", 2, None, "sacct"),
        "4108": ("TIMEOUT", 0, None, "sacct"),
    }
    assert (finals["4105"].restarts, finals["4105"].elapsed_seconds) == (1, 62.0)
    assert [c[0] for c in transport.calls] == ["sacct", "squeue"]
    assert transport.calls[1][transport.calls[1].index("--jobs") + 1] == ",".join(wanted)
    off = FakeTransport({
        "sacct": Completed(code=1, out="", err="Slurm accounting storage is disabled"),
        "squeue": Completed(code=0, out=SQUEUE_ENDED, err=""),
    })  # fmt: skip
    found = SlurmClient(off).finals(["4102"])["4102"]
    assert (found.source, found.exit_code, found.elapsed_seconds) == ("squeue", 3, 2.0)


def test_a_name_or_comment_never_reaches_the_fields_read() -> None:
    """Values a user writes (a job's name, comment or folder) are not asked for in the fields
    the verdict is read from, and a line about a job not asked about is not read."""
    fake = "4102|COMPLETED|None|0:02|3:59:58|n1|0|0|\n"
    answer = Completed(code=0, out=fake + SQUEUE_ENDED, err="")
    off = FakeTransport({"squeue": answer})
    assert SlurmClient(off).finals(["4105"]).keys() == {"4105"}
    assert "Comment" not in QUEUE_FORMAT and "Name" not in QUEUE_FORMAT.replace("NodeList", "")


def test_squeue_answers_read() -> None:
    rows = "7|PENDING|Priority|0:00|1:00:00||0|0|\n8|COMPLETING|None|0:10|0:50|n1|2|0|\n"
    ok = SlurmClient(FakeTransport({"squeue": Completed(code=0, out=rows, err="")}))
    found = ok.queue(["8", "7"])
    assert found is not None and found["7"].reason == "Priority" and found["8"].nodes == "n1"
    assert found["8"].restarts == 2
    gone = Completed(code=1, out="", err="slurm_load_jobs error: Invalid job id specified")
    unknown = Completed(code=1, out="", err="slurm_load_jobs error: Invalid job id specified")
    client = SlurmClient(FakeTransport({"squeue": gone, "scontrol": unknown}))
    assert client.queue(["9"]) == {}
    down = Completed(code=1, out="", err="Unable to contact slurm controller")
    assert SlurmClient(FakeTransport({"squeue": down})).queue(["9"]) is None


def test_a_job_the_queue_leaves_out_is_asked_about_again() -> None:
    """One empty answer is not the end of a job: a second source (scontrol show job, for
    exactly that id) still shows it RUNNING, so it stays followed; a second source that
    cannot answer leaves the poll unknown, never ended."""
    empty = Completed(code=0, out="", err="")
    running = Completed(code=0, err="", out=(
        "JobId=9 JobName=x JobState=COMPLETED\n   UserId=root(0) GroupId=root(0)\n"
        "   JobState=RUNNING Reason=None Dependency=(null)\n"))  # fmt: skip
    transport = FakeTransport({"squeue": empty, "scontrol": running})
    found = SlurmClient(transport).queue(["9"])
    assert found is not None and found["9"].state == "RUNNING"
    assert transport.calls[-1] == ["scontrol", "show", "job", "9"]
    down = Completed(code=1, out="", err="Socket timed out on send/recv operation")
    assert SlurmClient(FakeTransport({"squeue": empty, "scontrol": down})).queue(["9"]) is None


def test_an_array_task_is_followed_by_its_array_id_and_index() -> None:
    """squeue's `--array` shows each task on its own line, named `ARRAY_INDEX` (its own job id
    apart, a pending task's being the array's); scontrol names a task by its array and index;
    a task cancelled while pending is dropped whole by the controller (`Job A_I not found`),
    which is its end, not an unknown."""
    rows = "9_0|RUNNING|None|0:08|4:52|n1|0|0|\n9_3|PENDING|JobArrayTaskLimit|0:00|5:00||0|0|\n"
    transport = FakeTransport({"squeue": Completed(code=0, out=rows, err="")})
    found = SlurmClient(transport).queue(["9_3", "9_0"])
    assert found is not None and (found["9_0"].state, found["9_3"].reason) == (
        "RUNNING", "JobArrayTaskLimit")  # fmt: skip
    asked = transport.calls[0]
    assert "--array" in asked and asked[asked.index("--jobs") + 1] == "9_0,9_3"
    assert asked[asked.index("--Format") + 1].startswith("JobArrayID:|,")
    shown = (
        "JobId=12 ArrayJobId=9 ArrayTaskId=2 JobName=s_array0\n"
        "   JobState=RUNNING Reason=None Dependency=(null)\n"
    )
    empty = Completed(code=0, out="", err="")
    client = SlurmClient(FakeTransport({"squeue": empty, "scontrol": Completed(0, shown, "")}))
    again = client.queue(["9_2"])
    assert again is not None and again["9_2"].state == "RUNNING"
    other = SlurmClient(FakeTransport({"squeue": empty, "scontrol": Completed(0, shown, "")}))
    assert other.queue(["9_20"]) is None  # another task's answer is not this one's
    named = "JobId=9 JobName=x_ArrayJobId=5_ArrayTaskId=3 ArrayJobId=5 ArrayTaskId=3 \n"
    spoofed = Completed(0, named + "   JobState=RUNNING Reason=None\n", "")
    fooled = SlurmClient(FakeTransport({"squeue": empty, "scontrol": spoofed}))
    assert fooled.queue(["5_3"]) is None  # a name that holds the words is not the task
    dropped = Completed(code=1, out="Job 9_5 not found\n", err="")
    assert SlurmClient(FakeTransport({"squeue": empty, "scontrol": dropped})).queue(["9_5"]) == {}
    unsure = Completed(code=1, out="Job 9_6 not found\n", err="")
    assert SlurmClient(FakeTransport({"squeue": empty, "scontrol": unsure})).queue(["9_5"]) is None


def test_a_submission_is_found_again_by_name_and_script_and_a_task_by_its_array_id() -> None:
    lines = "9_0|/w/s.slurm|\n9_1|/w/s.slurm|\n10|/w/s.slurm|\n9_2|/w/other.slurm|\n"
    transport = FakeTransport({"squeue": Completed(code=0, out=lines, err="")})
    client = SlurmClient(transport)
    assert client.find("s_array0", "/w/s.slurm", tasks=True) == ["9_0", "9_1"]
    asked = transport.calls[-1]
    assert "--array" in asked and asked[asked.index("--Format") + 1] == "JobArrayID:|,Command:|"
    assert client.find("s_array0", "/w/s.slurm") == ["10"]
    assert transport.calls[-1][transport.calls[-1].index("--Format") + 1] == "JobID:|,Command:|"


def _job(tmp_path: Path, name: str) -> LoadedJob:
    from scriptast.contract.job_spec import JobLogs, JobSpec

    spec = JobSpec(
        workflow_type=WorkflowType.bench, model_name="m",
        execution_scenario=ExecutionScenario.local_slurm,
        docker_image="i", script_name="m.slurm", log_file_pattern="m_%j.out",
        success_patterns=("token/s",), failure_patterns=("Error",), extra_files=(),
        scheduler="slurm", transport="local", logs=JobLogs(output=f"{tmp_path}/{name}/m_%j.out"),
        files={"m.slurm": "0"},
    )  # fmt: skip
    work = tmp_path / name
    work.mkdir()
    return LoadedJob(work_dir=str(work), spec=spec, script=str(work / "m.slurm"))


def _followed(job: LoadedJob, job_id: str, client: SlurmClient) -> Followed:
    record = RunRecord(
        version=RECORD_VERSION, work_dir=job.work_dir, execution_scenario=ExecutionScenario.local_slurm,
        script=job.script, submitted_at="now", submit_command=(), job_id=job_id,
        out_log=f"{job.work_dir}/m_{job_id}.out",
    )  # fmt: skip
    return Followed(
        job,
        record,
        Writer(write=lambda data: None, prefix=None),
        QueueTracker(scheduler("slurm"), client, record),
    )


def test_fifty_jobs_cost_one_squeue_a_poll(tmp_path: Path) -> None:
    ids = [str(5000 + n) for n in range(50)]

    class Queue(FakeTransport):
        def run(
            self, argv: Sequence[str], *, timeout: float = 60.0, cwd: str | None = None
        ) -> Completed:
            self.calls.append(list(argv))
            polls = sum(c[0] == "squeue" for c in self.calls)
            if argv[0] == "squeue":
                state = "RUNNING" if polls < 3 else "COMPLETED"
                return Completed(
                    code=0, out="".join(f"{i}|{state}|None|0:01|1:00|n1|0|0|\n" for i in ids),
                    err="",
                )  # fmt: skip
            return Completed(code=1, out="", err="Slurm accounting storage is disabled")

    transport = Queue({})
    client = SlurmClient(transport)
    jobs = [_followed(_job(tmp_path, f"w{n}"), job_id, client) for n, job_id in enumerate(ids)]
    follower = Follower(jobs, client, poll_max=0.01, timeouts={}, status=lambda line: None)
    records = follower.run()
    squeues = [c for c in transport.calls if c[0] == "squeue"]
    assert len(squeues) - 1 == follower.polls == 3
    assert all(c[c.index("--jobs") + 1].split(",") == ids for c in squeues)
    # the final state of all fifty: one sacct (refused: accounting off), one squeue
    assert [c[0] for c in transport.calls[3:]] == ["sacct", "squeue"]
    assert {r.verdict for r in records} == {Verdict.INCONCLUSIVE}


def test_an_early_poll_waits_until_every_job_left_is_ending() -> None:
    from scriptast.executor.follow_loop import FIRST_POLL, OVERDUE_POLL, poll_soon

    class Job:
        def __init__(self, ending: bool, due: float | None = None) -> None:
            self.ending, self.due = ending, due

    one_of_many = [Job(True), *(Job(False) for _ in range(49))]
    assert not poll_soon(one_of_many, now=5.0, since_last=10.0)  # the poll due will do
    assert poll_soon([Job(True), Job(True)], now=5.0, since_last=FIRST_POLL)
    assert not poll_soon([Job(True), Job(True)], now=5.0, since_last=FIRST_POLL / 2)
    assert poll_soon([Job(True)], now=5.0, since_last=FIRST_POLL)  # one job: as before
    overdue = [Job(False, due=4.0), Job(False)]
    assert poll_soon(overdue, now=5.0, since_last=OVERDUE_POLL)
    assert not poll_soon(overdue, now=3.0, since_last=OVERDUE_POLL)
    assert not poll_soon([], now=5.0, since_last=10.0)


def test_a_poll_that_finds_the_state_run_json_holds_saves_nothing(tmp_path: Path) -> None:
    class Queue(FakeTransport):
        def run(
            self, argv: Sequence[str], *, timeout: float = 60.0, cwd: str | None = None
        ) -> Completed:
            self.calls.append(list(argv))
            polls = sum(c[0] == "squeue" for c in self.calls)
            if argv[0] == "squeue":
                state = "PENDING" if polls < 3 else "RUNNING" if polls < 4 else "COMPLETED"
                return Completed(code=0, out=f"81|{state}|None|0:01|1:00|n1|0|0|\n", err="")
            return Completed(code=1, out="", err="Slurm accounting storage is disabled")

    client = SlurmClient(Queue({}))
    job = _followed(_job(tmp_path, "w"), "81", client)
    job.record.state = "PENDING"  # as submit records a job sbatch took
    saved: list[str] = []
    save = job.save

    def counted(durable: bool = True) -> None:
        saved.append(f"{job.record.state}" + ("" if durable else " (not durable)"))
        save(durable=durable)

    job.save = counted  # type: ignore[method-assign]
    lines: list[str] = []
    Follower([job], client, poll_max=0.01, timeouts={}, status=lines.append).run()
    assert lines[:3] == ["w: job 81 PENDING", "w: job 81 RUNNING", "w: job 81 COMPLETED"]
    # PENDING is what the record held from its submission: only the changes are saved
    assert saved[:2] == ["RUNNING (not durable)", "COMPLETED (not durable)"]


def test_a_log_unchanged_since_it_was_read_whole_is_not_opened_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from scriptast.executor import log_tail

    log = tmp_path / "job.out"
    log.write_bytes(b"one\n")
    seen: list[bytes] = []
    tail = log_tail.LogTail(str(log), LogScanner(str(log), (), ()), seen.append)
    opened: list[str] = []
    real_open = os.open

    def counted_open(path: str, flags: int) -> int:
        opened.append(path)
        return real_open(path, flags)

    monkeypatch.setattr(os, "open", counted_open)
    assert tail.read() == 4
    assert [tail.read() for _ in range(5)] == [0] * 5
    assert opened == [str(log)]  # the five reads of an unchanged log: one lstat each
    with log.open("ab") as stream:
        stream.write(b"two\n")
    assert tail.read() == 4 and seen == [b"one\n", b"two\n"]
    log.unlink()
    log.symlink_to(tmp_path / "elsewhere")  # a link planted where the log was: refused
    (tmp_path / "elsewhere").write_bytes(b"one\ntwo\nthree\n")
    assert tail.read() == 0 and tail.refused is not None


def test_without_sacct_or_scontrol_the_exit_line_decides(tmp_path: Path) -> None:
    client = SlurmClient(FakeTransport({}))
    job = _followed(_job(tmp_path, "w"), "77", client)
    Path(job.record.out_log).write_text("1: 512 token/s\nBench finished with exit code 0\n")
    job.stream()
    record = job.conclude(None)
    assert (record.verdict, record.exit_code, record.final_state_source) == (
        Verdict.PASSED, 0, "the script's exit line",
    )  # fmt: skip
    assert json.loads((Path(job.job.work_dir) / "run.json").read_text())["verdict"] == "PASSED"


def test_an_allocation_is_reused_only_when_it_matches_and_has_time() -> None:
    wanted = AllocationParams(partition="batch", account="a", nodes=1, ntasks_per_node=2,
                              gres="gpu:2")  # fmt: skip
    other = AllocationParams(partition="batch", account="a", nodes=1, ntasks_per_node=4,
                             gres="gpu:4")  # fmt: skip
    allocations = [
        Allocation(job_id="1", state="RUNNING", time_left="4:00:00", nodes="n1", params=other),
        Allocation(job_id="2", state="RUNNING", time_left="10:00", nodes="n1", params=wanted),
        Allocation(job_id="3", state="PENDING", time_left="4:00:00", nodes="", params=wanted),
    ]
    found, why = choose(allocations, wanted, needed_seconds=7200)
    assert found is None
    assert why == [
        "allocation 1: ntasks_per_node 4 != 2, gres gpu:4 != gpu:2",
        "allocation 2: 10:00 left, the job needs 120 min",
        "allocation 3: PENDING, not running",
    ]
    fresh = Allocation(job_id="4", state="RUNNING", time_left="3:00:00", nodes="n2", params=wanted)
    assert choose([*allocations, fresh], wanted, needed_seconds=7200)[0] == fresh


def test_several_jobs_exit_with_the_first_verdict_in_judging_order() -> None:
    def made(verdict: Verdict) -> RunRecord:
        return RunRecord(version=1, work_dir="/w", execution_scenario=ExecutionScenario.local_slurm, script="/s",
                         submitted_at="t", submit_command=(), out_log="/o", verdict=verdict)  # fmt: skip

    assert exit_code([made(Verdict.PASSED), made(Verdict.PASSED)]) == 0
    assert exit_code([made(Verdict.FAILED), made(Verdict.TIMEOUT), made(Verdict.PASSED)]) == 15


def test_the_container_named_in_the_docker_command() -> None:
    assert container_name("docker run --rm --name 'my job' img bash -c 'x'") == "my job"
    with pytest.raises(RunError, match="has no --name"):
        container_name("docker run img")


def test_work_dirs_run_cannot_read_are_one_error(tmp_path: Path) -> None:
    with pytest.raises(RunError, match=r"^no job_spec.json in .*: write the job first"):
        load_job(str(tmp_path))
    (tmp_path / "job_spec.json").write_text('{"workflow_type": "bench"}')
    with pytest.raises(RunError, match=r"was not written by this version of scriptast \(Object "):
        load_job(str(tmp_path))
    (tmp_path / "job_spec.json").unlink()
    os.mkfifo(tmp_path / "job_spec.json")  # a FIFO must not block the read
    with pytest.raises(RunError, match="is not a regular file"):
        load_job(str(tmp_path))
    with pytest.raises(RunError, match="is not a folder"):
        load_job(str(tmp_path / "nowhere"))


def test_run_without_a_job_spec_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = subprocess.run([SCRIPTAST, "run", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr == (
        f"error: no job_spec.json in {tmp_path}: write the job first (scriptast emit ... "
        f"--work-dir {tmp_path})\n"
    )


def test_the_run_record_schema_is_printed() -> None:
    done = subprocess.run([SCRIPTAST, "schema", "run"], capture_output=True, text=True)
    schema = json.loads(done.stdout)
    record = schema["$defs"]["RunRecord"]
    assert {"verdict", "job_id", "out_log", "exit_code"} <= set(record["properties"])
    assert set(schema["$defs"]["Verdict"]["enum"]) == {v.value for v in Verdict}


def test_run_reads_exactly_the_job_spec_fields_the_docs_say() -> None:
    import re
    import sys

    from scriptast.contract.job_spec import JobSpec

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "docs"))
    import build

    package = Path(__file__).resolve().parent.parent / "scriptast"
    run_side = [
        *(package / "executor").rglob("*.py"),
        *(package / "schedulers").rglob("launch*.py"),
        package / "schedulers/process_launcher.py",
    ]  # the executor and the launchers
    source = "".join(p.read_text() for p in run_side)
    read = set(re.findall(r"\bspec\.(\w+)", source)) & set(JobSpec.__struct_fields__)
    assert read == set(build.RUN_READS)


def test_our_queue_timeout_cancels_a_job_that_never_starts(tmp_path: Path) -> None:
    class Pending(FakeTransport):
        """A job that stays PENDING until scancel, then is CANCELLED."""

        def run(
            self, argv: Sequence[str], *, timeout: float = 60.0, cwd: str | None = None
        ) -> Completed:
            self.calls.append(list(argv))
            if argv[0] == "squeue":
                state = "CANCELLED" if ["scancel", "61"] in self.calls else "PENDING"
                return Completed(code=0, out=f"61|{state}|Resources|0:00|10:00||0|0|\n", err="")
            return Completed(code=0 if argv[0] == "scancel" else 1, out="", err="")

    transport = Pending({})
    client = SlurmClient(transport)
    job = _followed(_job(tmp_path, "w"), "61", client)
    lines: list[str] = []
    follower = Follower([job], client, poll_max=0.2, timeouts={"w": (0.3, None)},
                        status=lines.append)  # fmt: skip
    [record] = follower.run()
    assert record.verdict is Verdict.TIMEOUT
    assert ["scancel", "61"] in transport.calls
    assert "w: still queued after 0.3 s: cancelling" in lines
    assert "w: job 61 PENDING (Resources)" in lines


def test_perf_sanity_jobs_are_never_run_in_an_allocation(tmp_path: Path) -> None:
    import msgspec

    from scriptast.contract.job_spec import SlurmParams
    from scriptast.executor.launch.submit import choice_of
    from scriptast.executor.options import RunOptions
    from scriptast.schedulers.slurm.launcher import uses_allocation

    params = SlurmParams(partition="p", account="a", time_limit="01:00:00", nodes=1, ntasks=1,
                         ntasks_per_node=1, gpus_per_node=8, gres=None, mpi_plugin=None)  # fmt: skip
    job = _job(tmp_path, "w")
    bench = msgspec.structs.replace(
        job, spec=msgspec.structs.replace(job.spec, slurm_params=params, persistent_mode=True)
    )
    perf = msgspec.structs.replace(
        bench, spec=msgspec.structs.replace(bench.spec, workflow_type="perf_sanity")
    )
    assert uses_allocation(bench, choice_of(bench, RunOptions())) is True
    assert uses_allocation(bench, choice_of(bench, RunOptions(persistent=False))) is False
    assert uses_allocation(perf, choice_of(perf, RunOptions(persistent=True))) is False


def test_a_progress_line_only_on_a_terminal() -> None:
    import io

    from scriptast.executor.follow_loop import terminal_progress

    assert terminal_progress(io.StringIO()) is None


def test_a_job_spec_of_another_version_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "job_spec.json").write_text('{"workflow_type": 3}')
    done = subprocess.run([SCRIPTAST, "run", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: {tmp_path}/job_spec.json was not written by this ")
    assert done.stderr.endswith("emit the job again with this version\n")
    assert len(done.stderr.splitlines()) == 1


def test_python_dash_m_scriptast_is_the_console_script() -> None:
    import sys

    done = subprocess.run([sys.executable, "-m", "scriptast", "--version"], capture_output=True,
                          text=True)  # fmt: skip
    assert done.stdout == "scriptast 0.1.0\n"


def test_a_cluster_command_is_read_back_before_ssh_runs_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from scriptast.transports import ssh

    transport = ssh.SshTransport("cluster")
    monkeypatch.setattr("scriptast.transports.ssh.shlex.join", " ".join)  # loses the words
    with pytest.raises(RunError, match="cannot be passed to the shell of cluster intact"):
        transport.run(["sha256sum", "--", "/work dir/job.slurm"])


def test_a_record_names_its_launch_and_each_is_followed_again_by_a_lookup(tmp_path: Path) -> None:
    """run.json records how its job was launched; reattaching is the backend launcher's lookup
    of that kind (a batch job in the queue, a step of an allocation); a record of an older
    scriptast (no kind, or "remote" for either kind on a cluster) is followed by what it
    names; a kind this scriptast does not know is refused as a record it cannot read."""
    from scriptast.contract.run_record import RunRecord
    from scriptast.executor.launch.here import LocalPlace
    from scriptast.executor.run import read_record
    from scriptast.schedulers.slurm.launcher import StepTracker

    job = _job(tmp_path, "kinds")
    client = SlurmClient(FakeTransport({}))
    launcher = scheduler("slurm").launcher()

    def tracker(**fields: object) -> type:
        record = RunRecord(version=RECORD_VERSION, work_dir=job.work_dir, script=job.script,
                           submitted_at="now", submit_command=(), out_log="o.log",
                           **fields)  # type: ignore[arg-type]  # fmt: skip
        return type(launcher.follow(job, record, LocalPlace(job), client))

    assert tracker(launch="batch", job_id="7") is QueueTracker
    assert tracker(launch="step", job_id="7", pid=99) is StepTracker
    assert tracker(launch="remote", job_id="7") is QueueTracker
    assert tracker(launch="remote", job_id="7", pid=99) is StepTracker
    assert tracker(job_id="7", pid=99) is StepTracker
    assert tracker(launch="batch", job_id="7", pid=99) is QueueTracker  # the kind decides
    base = {"version": RECORD_VERSION, "work_dir": str(tmp_path), "script": "s.slurm",
            "submitted_at": "now", "submit_command": ["sbatch"], "out_log": "o.log"}  # fmt: skip
    (tmp_path / "run.json").write_text(json.dumps(base))
    older = read_record(str(tmp_path))
    assert older is not None and older.launch is None
    (tmp_path / "run.json").write_text(json.dumps({**base, "launch": "teleport"}))
    with pytest.raises(RunError, match="is not a run record this scriptast reads"):
        read_record(str(tmp_path))


class _RecordingPlace:
    """A place that starts nothing: it records what it was asked to start, and where it is."""

    def __init__(self, job: LoadedJob, where: str | None) -> None:
        self.job, self._where = job, where
        self.started: list[tuple[list[str], dict[str, str]]] = []

    @property
    def where(self) -> str | None:
        return self._where

    @property
    def folder(self) -> str:
        return self.job.work_dir

    @property
    def script(self) -> str:
        return self.job.script

    def stage(self) -> None:
        pass

    def make_folders(self, paths: Sequence[str]) -> None:
        pass

    def exists(self, path: str) -> bool:
        return False

    def start(self, argv: Sequence[str], env: Mapping[str, str], out: str, err: str) -> int:
        self.started.append((list(argv), dict(env)))
        return 4242

    def running(self, pid: int) -> bool:
        return False

    def stop(self, pid: int) -> None:
        pass

    def exit_code(self, pid: int) -> int | None:
        return 0

    def local(self, path: str) -> str:
        return path


def test_a_process_backends_job_takes_this_machines_environment_only_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default launcher starts the script with this machine's environment here, and with
    none of it on a cluster (where the cluster's own applies): no local variable is carried."""
    from scriptast.contract.run_record import RunRecord
    from scriptast.schedulers.launching import LaunchChoice
    from scriptast.schedulers.process_launcher import ProcessLauncher

    monkeypatch.setenv("SCRIPTAST_TEST_SECRET", "local only")
    job = _job(tmp_path, "proc")
    for where, carried in ((None, True), ("cluster", False)):
        place = _RecordingPlace(job, where)
        record = RunRecord(version=RECORD_VERSION, work_dir=job.work_dir, script=job.script,
                           submitted_at="now", submit_command=(), out_log="")  # fmt: skip
        ProcessLauncher().launch(job, place, None, LaunchChoice(), record)
        [(argv, env)] = place.started
        assert argv == ["bash", job.script] and record.pid == 4242
        assert ("SCRIPTAST_TEST_SECRET" in env) is carried
