"""What a job measures, as types both sides of the contract use: what emit says the job will
measure and where run finds it (`Measures`, in job_spec.json), and what run read from the job
(figures, each with its source and its check against a reference, and a pytest run's tests, in
run.json)."""

from __future__ import annotations

from typing import Literal

import msgspec

Kind = Literal["bench", "eval", "pytest", "perf_sanity"]


class Measures(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """What the job measures. `kind` chooses the reader of its log; `model` is the model as its
    command names it (an HF id or a path) and the quantization its accuracy references are
    looked up by (`quantization_known` False: nothing said it, the unquantized entry is
    used); `tasks` the eval tasks and `num_samples` the samples each evaluates (None: the
    task's whole set); `junit` and `report_json` files the job writes, as paths where it
    runs, and `result_glob` the files it writes a figure report each into (perf_sanity's
    clients' logs), `accuracy_glob` the logs its accuracy runs write lm_eval's table into;
    `references` a references file on this machine; `baseline` `history` when the figures
    without a reference are held against the results store's earlier runs (the request's
    `baseline`); `gpu_type` the GPU type its references are keyed by besides the partition.
    `dtype` and `spec_dec_algo` are the LLM API options of `--extra_llm_api_options` (its
    `dtype`, its `speculative_config.decoding_type`) the references are looked up by as well;
    `llm_api_unread` says why that file could not be read (then the entry without them is
    used); `concurrency` and `max_batch_size` what the command runs with, where it says (they
    key the results store's comparisons)."""

    kind: Kind
    model: str | None = None
    quant_algo: str | None = None
    kv_cache_quant_algo: str | None = None
    quantization_known: bool = False
    dtype: str | None = None
    spec_dec_algo: str | None = None
    llm_api_unread: str | None = None
    tasks: tuple[str, ...] = ()
    num_samples: int | None = None
    junit: str | None = None
    report_json: str | None = None
    result_glob: str | None = None
    accuracy_glob: str | None = None
    references: str | None = None
    baseline: Literal["history"] | None = None
    gpu_type: str | None = None
    concurrency: int | None = None
    max_batch_size: int | None = None
    test_prefix: str | None = None
    """pytest's `--test-prefix` (a CI stage's name in front of each JUnit classname)."""


class Source(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Where a figure was read: a log or a result file, and its line (None: a whole file)."""

    file: str
    line: int | None = None


class Check(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A figure held against a reference: the reference value, the lowest and the highest value
    that pass (None: no bound on that side), where the reference came from, the margin to the
    bound that matters (positive: inside by that much) and whether the figure passed."""

    reference: float
    lower: float | None = None
    upper: float | None = None
    origin: str
    margin: float
    ok: bool


class Printed(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One value a figure was printed with, and where."""

    value: float
    source: Source


MOST_PRINTED = 20
"""Values of one figure kept in `printed` (the one judged always among them)."""


class Figure(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One number the job measured: its name, value, unit and source; `higher_is_better` says
    which way it regresses (None: neither); `samples` how many samples an accuracy was measured
    on, when the tool says; `check` its reference check, or `unchecked` why no reference
    applied; `headline` marks the figure a table of jobs shows; `printed` its values when it
    was printed more than once."""

    name: str
    value: float
    unit: str
    source: Source
    higher_is_better: bool | None = None
    samples: int | None = None
    check: Check | None = None
    unchecked: str | None = None
    headline: bool = False
    printed: tuple[Printed, ...] = ()
    """Every value the figure was printed with, in order, when it was printed more than once
    (the first MOST_PRINTED, and the one judged): `value` is then the worse of them, or for a
    bench report printed again the last."""


class FailedTest(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A test that did not pass: its pytest node id (what a person pastes to run it again),
    `failed` or `error`, its message's first line and its duration in seconds."""

    id: str
    outcome: Literal["failed", "error"]
    message: str = ""
    seconds: float | None = None
    junit: str | None = None
    """The JUnit report's `classname::name` when it is not the id (`(ambiguous)` when the id
    was read from it without a file)."""


class PytestResults(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A pytest run's JUnit XML: the counts (of its test cases), the total duration, each failed
    or errored test (the first MOST_FAILED of them), and `notes` where the file's own counts
    disagreed with its test cases."""

    source: str
    tests: int
    failures: int
    errors: int
    skipped: int
    seconds: float = 0.0
    failed: tuple[FailedTest, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def passed(self) -> int:
        """Tests that ran and passed."""
        return self.tests - self.failures - self.errors - self.skipped


MOST_FAILED = 100
"""Failed tests kept in run.json (a verdict names the first 20)."""
