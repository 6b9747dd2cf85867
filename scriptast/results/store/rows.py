"""A judged run as the store keeps it: the keys it is found and compared by (workflow, model,
partition and GPU type, GPU count, nodes, image, TRT-LLM commit, the job_spec's digest, user,
cluster, times), its headline figure, every figure with its check, and run.json whole."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import msgspec

from scriptast.contract.job_spec import JobSpec
from scriptast.contract.measured import Measures
from scriptast.contract.run_record import RunRecord, encode_record


class StoredFigure(msgspec.Struct, frozen=True, kw_only=True):
    """One figure of a run, with the reference it was held against (if any)."""

    name: str
    value: float
    unit: str
    higher_is_better: bool | None = None
    reference: float | None = None
    lower_bound: float | None = None
    upper_bound: float | None = None
    ok: bool | None = None


class RunKeys(msgspec.Struct, frozen=True, kw_only=True):
    """What a run is found, compared and listed by (the store's columns, in table order):
    `spec_digest` is job_spec.json's sha256 (the request as emit resolved it)."""

    workflow: str
    model: str | None
    partition: str | None
    gpu_type: str | None
    gpu_count: int | None
    nodes: int | None
    image: str | None
    trtllm_commit: str | None
    spec_digest: str | None
    user_name: str | None
    cluster: str | None
    work_dir: str
    job_id: str | None
    verdict: str
    submitted_at: str
    finished_at: str
    headline_name: str | None
    headline_value: float | None
    headline_unit: str | None
    stored_at: str
    model_name: str | None = None
    gpus_per_node: int | None = None
    tp: int | None = None
    pp: int | None = None
    ep: int | None = None
    concurrency: int | None = None
    max_batch_size: int | None = None
    quantization: str | None = None
    sweep: str | None = None
    """The sha256 of the sweep file the job came from (`emit --requests FILE --array`)."""
    array_id: str | None = None
    """The job array it ran as a task of."""


class StoredRun(RunKeys, frozen=True, kw_only=True):
    """A run as it is appended: its keys, `run_uid` that tells one submission from every other
    (importing it twice keeps one), its record (run.json) and its figures."""

    run_uid: str
    record: str
    figures: tuple[StoredFigure, ...] = ()


class Origin(msgspec.Struct, frozen=True, kw_only=True):
    """What the store learns besides job_spec and run.json: the job_spec's digest, the
    TRT-LLM commit the job ran, who ran it, on which cluster, and when it was stored."""

    spec_digest: str | None
    trtllm_commit: str | None
    user_name: str | None
    cluster: str | None
    stored_at: str


def run_uid(record: RunRecord) -> str:
    """The same for one submission however often it is stored."""
    ident = "\0".join(str(part) for part in (record.work_dir, record.submitted_at,
                      record.job_id, record.pid, record.host))  # fmt: skip
    return hashlib.sha256(ident.encode()).hexdigest()[:32]


SETUP = (
    "workflow",
    "model",
    "partition",
    "gpu_type",
    "gpu_count",
    "nodes",
    "tp",
    "pp",
    "ep",
    "concurrency",
    "max_batch_size",
    "quantization",
)
"""The keys two runs must agree on to be compared: the same setup (`gpu_count` the GPUs the job
asked for in all, never its partition's node size)."""


def setup_key(values: Sequence[Any]) -> str:
    """A setup (the SETUP values, in order) as one text: the store keeps each setup once."""
    return json.dumps(list(values), separators=(",", ":"))


class Comparable(msgspec.Struct, frozen=True, kw_only=True):
    """What makes two runs comparable: every SETUP key agrees (None matches None only); the
    model is the one the job ran (the HF id where known), `model_name` the short name emit
    derived from it."""

    workflow: str
    model: str | None
    partition: str | None = None
    gpu_type: str | None = None
    gpu_count: int | None = None
    nodes: int | None = None
    tp: int | None = None
    pp: int | None = None
    ep: int | None = None
    concurrency: int | None = None
    max_batch_size: int | None = None
    quantization: str | None = None
    model_name: str | None = None
    gpus_per_node: int | None = None

    def words(self) -> str:
        """The setup in a few words: `GPU x2, tp2, FP8` (what differs between runs)."""
        gpus = f"{self.gpu_type or 'GPU'} x{self.gpu_count}" if self.gpu_count else (
            self.gpu_type or "GPU")  # fmt: skip
        parts = [gpus] + [f"{name}{getattr(self, name)}" for name in ("tp", "pp", "ep")
                          if getattr(self, name) not in (None, 0, 1)]  # fmt: skip
        if self.concurrency:
            parts.append(f"concurrency {self.concurrency}")
        if self.max_batch_size:
            parts.append(f"max batch {self.max_batch_size}")
        if self.quantization:
            parts.append(self.quantization)
        return ", ".join(parts)


def job_gpus(spec: JobSpec) -> int | None:
    """The GPUs the job asked for in all: job_spec's setup, else `--gres` per node times the
    nodes (an older job_spec.json), else its tasks; never the partition's node size."""
    if spec.setup is not None and spec.setup.gpus is not None:
        return spec.setup.gpus
    params = spec.slurm_params
    if params is None:
        return None
    count = (params.gres or "").rsplit(":", 1)[-1]
    return int(count) * params.nodes if count.isdigit() else params.ntasks


def quantization(measures: Measures | None) -> str | None:
    """The quantization a run's references and comparisons are keyed by: `FP8`, `NVFP4/FP8`
    (weights, then the KV cache), None when nothing says it is quantized."""
    if measures is None:
        return None
    parts = [measures.quant_algo, measures.kv_cache_quant_algo]
    if not any(parts):
        return None
    return "/".join(part or "none" for part in parts) if parts[1] else parts[0]


def comparable(spec: JobSpec) -> Comparable:
    """A job's comparison key, as the store keeps it."""
    params = spec.slurm_params
    measures = spec.measures
    setup = spec.setup
    return Comparable(
        workflow=str(spec.workflow_type),
        model=(measures.model if measures and measures.model else None) or spec.model_name,
        model_name=spec.model_name,
        partition=params.partition if params else None,
        gpu_type=measures.gpu_type if measures else spec.device_type,
        gpu_count=job_gpus(spec),
        gpus_per_node=params.gpus_per_node if params else None,
        nodes=params.nodes if params else spec.node_count,
        tp=setup.tp if setup else None,
        pp=setup.pp if setup else None,
        ep=setup.ep if setup else None,
        concurrency=measures.concurrency if measures else None,
        max_batch_size=measures.max_batch_size if measures else None,
        quantization=quantization(measures),
    )


def stored_run(spec: JobSpec, record: RunRecord, origin: Origin) -> StoredRun:
    """The row of a judged run (record.verdict is set)."""
    assert record.verdict is not None
    key = comparable(spec)
    name, value, unit = _headline(record)
    return StoredRun(
        run_uid=run_uid(record),
        workflow=key.workflow,
        model=key.model,
        model_name=key.model_name,
        partition=key.partition,
        gpu_type=key.gpu_type,
        gpu_count=key.gpu_count,
        gpus_per_node=key.gpus_per_node,
        nodes=key.nodes,
        tp=key.tp,
        pp=key.pp,
        ep=key.ep,
        concurrency=key.concurrency,
        max_batch_size=key.max_batch_size,
        quantization=key.quantization,
        image=spec.container_image or spec.docker_image or None,
        trtllm_commit=origin.trtllm_commit,
        spec_digest=origin.spec_digest,
        user_name=origin.user_name,
        cluster=origin.cluster,
        work_dir=record.work_dir,
        job_id=record.job_id,
        verdict=str(record.verdict),
        submitted_at=record.submitted_at,
        finished_at=record.finished_at or record.submitted_at,
        headline_name=name,
        headline_value=value,
        headline_unit=unit,
        stored_at=origin.stored_at,
        record=encode_record(record),
        figures=_stored_figures(record),
        sweep=spec.array.sweep if spec.array is not None else None,
        array_id=(record.job_id or "").split("_")[0] or None if record.launch == "array" else None,
    )


def judged_run(record: RunRecord, workflow: str, model: str | None, origin: Origin) -> StoredRun:
    """The row of a run judged from files (`scriptast judge` without a job_spec.json): only
    its workflow and model are known of its setup; its record says it was not run."""
    assert record.verdict is not None
    name, value, unit = _headline(record)
    return StoredRun(
        run_uid=run_uid(record), workflow=workflow, model=model, partition=None,
        gpu_type=None, gpu_count=None, nodes=None, image=None,
        trtllm_commit=origin.trtllm_commit, spec_digest=None, user_name=origin.user_name,
        cluster=origin.cluster, work_dir=record.work_dir, job_id=None,
        verdict=str(record.verdict), submitted_at=record.submitted_at,
        finished_at=record.finished_at or record.submitted_at, headline_name=name,
        headline_value=value, headline_unit=unit, stored_at=origin.stored_at,
        record=encode_record(record), figures=_stored_figures(record),
    )  # fmt: skip


def _stored_figures(record: RunRecord) -> tuple[StoredFigure, ...]:
    return tuple(
        StoredFigure(
            name=f.name,
            value=f.value,
            unit=f.unit,
            higher_is_better=f.higher_is_better,
            reference=f.check.reference if f.check else None,
            lower_bound=f.check.lower if f.check else None,
            upper_bound=f.check.upper if f.check else None,
            ok=f.check.ok if f.check else None,
        )
        for f in record.figures
    )


def _headline(record: RunRecord) -> tuple[str | None, float | None, str | None]:
    """The figure a table of runs shows: the job's headline figure, else a pytest run's
    passed tests."""
    for figure in record.figures:
        if figure.headline:
            return figure.name, figure.value, figure.unit
    if record.tests is not None:
        return "tests passed", float(record.tests.passed), f"of {record.tests.tests}"
    return None, None, None
