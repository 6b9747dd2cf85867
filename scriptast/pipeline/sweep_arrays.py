"""`emit --requests FILE --array`: a sweep's Slurm jobs grouped by shape into job arrays, each
array split at the cluster's MaxArraySize, written as one batch script an array beside the
sweep file, and each task's job_spec.json told its array and index; its docker jobs told they
are the sweep's processes, run here at most `--array-limit` at once."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import posixpath
import re
from collections.abc import Callable, Iterator, Sequence

import msgspec

from scriptast.common.index_ranges import index_ranges
from scriptast.contract.axes import DOCKER, LOCAL
from scriptast.contract.job_spec import ArrayTask, JobSpec, ProcessSweep
from scriptast.contract.work_dir_names import ARRAYS_MANIFEST, JOB_SPEC
from scriptast.emitters.quote import pyxis_mounts
from scriptast.errors import ScriptastError
from scriptast.model.slurm import Mount
from scriptast.schedulers.slurm.array_script import (
    ArrayMember,
    ArrayShape,
    array_logs,
    array_script,
)

DEFAULT_MAX_ARRAY_SIZE = 1001
"""Slurm's MaxArraySize when slurm_env.json does not say (`scontrol show config`)."""
ARRAY_PLACE = ("slurm", "local")
"""The scheduler and transport of a job an array can hold (files here, queued by sbatch)."""
PROCESS_PLACE = (DOCKER, LOCAL)
"""The scheduler and transport of a job the sweep runs as a process here (docker)."""
DOCKER_LIMIT = 1
"""How many of a sweep's docker jobs run at once without --array-limit: docker has no
scheduler to share the GPUs among them, so one after another unless asked."""


class Emitted(msgspec.Struct, frozen=True, kw_only=True):
    """What grouping needs of a job a sweep line wrote (a worker sends it back); `shape` None:
    a docker job, one of the sweep's processes."""

    member: ArrayMember
    shape: ArrayShape | None
    max_array_size: int
    workflow: str


class PlannedArray(msgspec.Struct, frozen=True, kw_only=True):
    """One array to write: its name, shape, tasks in order, and the sweep lines they came from."""

    name: str
    shape: ArrayShape
    tasks: tuple[Emitted, ...]
    lines: tuple[int, ...]


def refusal(spec: JobSpec, persistent_asked: bool | None) -> str | None:
    """Why the job a sweep line resolved to cannot be a task of a job array; None when it can.
    `persistent_asked`: the request's own persistent_mode (None: not given, and local_slurm's
    default does not stand in an array's way)."""
    place = (spec.scheduler, spec.transport)
    if place == PROCESS_PLACE:
        return None
    if place != ARRAY_PLACE or spec.slurm_params is None:
        return (
            "--array writes Slurm job arrays of jobs queued by this machine's Slurm (and runs "
            f"docker jobs as processes here), and this request is {spec.execution_scenario}: "
            "emit it without --array, or in a sweep of its own"
        )
    if persistent_asked:
        return (
            "a persistent allocation runs one job at a time as its steps, and an array is "
            "submitted whole by sbatch: drop persistent_mode from the request, or emit it "
            "without --array"
        )
    if spec.script_path is None:
        return "the job has no batch script of its own to run as an array task"
    return None


def emitted_task(spec: JobSpec, work_dir: str, mounts: Sequence[Mount]) -> Emitted:
    """The shape and task of a job a sweep line wrote (`refusal(spec)` is None); `mounts`:
    the job's container mounts, as resolved (job_spec.json names them only in persistent
    mode). A docker job has no shape: it is one of the sweep's processes."""
    script = spec.script_path or posixpath.join(work_dir, spec.script_name)
    member = ArrayMember(work_dir=work_dir, script=script)
    slurm = spec.slurm_params
    if slurm is None:
        return Emitted(
            member=member, shape=None, max_array_size=0, workflow=str(spec.workflow_type)
        )
    env = spec.slurm_env
    limit = env.max_array_size if env is not None and env.max_array_size is not None else None
    return Emitted(
        member=member,
        shape=ArrayShape(
            partition=slurm.partition,
            account=slurm.account,
            nodes=slurm.nodes,
            ntasks=slurm.ntasks,
            ntasks_per_node=slurm.ntasks_per_node,
            gres=slurm.gres,
            time_limit=slurm.time_limit,
            image=spec.docker_image,
            mounts=_shared_mounts(mounts, work_dir),
        ),
        max_array_size=DEFAULT_MAX_ARRAY_SIZE if limit is None else limit,
        workflow=str(spec.workflow_type),
    )


def _shared_mounts(mounts: Sequence[Mount], work_dir: str) -> str:
    """The mounts as pyxis takes them, without the job's own work dir (each task's steps
    mount their own, which the tasks of one array cannot share)."""
    own = work_dir.rstrip("/") + "/"
    return pyxis_mounts(m for m in mounts if not (m.source.rstrip("/") + "/").startswith(own))


def plan_arrays(stem: str, emitted: Sequence[tuple[int, Emitted]]) -> list[PlannedArray]:
    """One array a shape, in the order each shape first appears; a shape with more tasks than
    the cluster's MaxArraySize allows is split into arrays of at most that many."""
    groups: dict[ArrayShape, list[tuple[int, Emitted]]] = {}
    for number, task in emitted:
        if task.shape is not None:
            groups.setdefault(task.shape, []).append((number, task))
    planned: list[PlannedArray] = []
    for shape, members in groups.items():
        size = min(task.max_array_size for _, task in members)
        if size < 1:
            raise ScriptastError(
                f"the cluster takes no job arrays (MaxArraySize {size} in slurm_env.json): "
                "emit the sweep without --array"
            )
        for start in range(0, len(members), size):
            part = members[start : start + size]
            planned.append(
                PlannedArray(
                    name=f"{stem}_array{len(planned)}",
                    shape=shape,
                    tasks=tuple(task for _, task in part),
                    lines=tuple(number for number, _ in part),
                )
            )
    return planned


def arrays_folder(sweep_path: str) -> tuple[str, str]:
    """The folder beside the sweep file that holds its arrays, and the arrays' name stem."""
    absolute = posixpath.abspath(sweep_path)
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", posixpath.splitext(posixpath.basename(absolute))[0])
    stem = stem.lstrip(".") or "sweep"
    return posixpath.join(posixpath.dirname(absolute), f"{stem}_arrays"), stem


def describe(planned: Sequence[PlannedArray], folder: str, limit: int | None) -> list[str]:
    """What was written, and why there is more than one array."""
    total = sum(len(array.tasks) for array in planned)
    said = [
        f"Wrote {_count(len(planned), 'job array')} for {_count(total, 'job')} into {folder}"
        + (f", at most {limit} tasks of each running at once" if limit else "")
    ]
    for index, array in enumerate(planned):
        shape = array.shape
        line = (
            f"  {array.name}.slurm: {_count(len(array.tasks), 'task')} (lines "
            f"{_ranges(array.lines)}): partition {shape.partition}, "
            f"{_count(shape.nodes, 'node')}, {_count(shape.ntasks, 'Slurm task')}, "
            f"gres {shape.gres or 'none'}, time {shape.time_limit}"
        )
        workflows = sorted({task.workflow for task in array.tasks})
        if len(workflows) > 1:
            line += f"; workflows {', '.join(workflows)} share this shape"
        earlier = next((a for a in planned[:index] if a.shape == shape), None)
        if earlier is not None:
            line += (
                f"; split from {earlier.name}: the cluster's MaxArraySize is "
                f"{min(t.max_array_size for t in array.tasks)}"
            )
        elif index:
            differs = [SAID.get(name, name) for name in planned[0].shape.differences(shape)]
            line += f"; apart from {planned[0].name}: its {', '.join(differs)} differ"
        said.append(line)
    return said


SAID = {"ntasks": "--ntasks", "ntasks_per_node": "--ntasks-per-node", "time_limit": "time"}
"""A shape field as the summary names it (sbatch's option where it has one)."""


RANGES_SHOWN = 6
"""The line ranges an array's summary names before it says `...`."""


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _ranges(numbers: Sequence[int]) -> str:
    parts = index_ranges(numbers).split(",")
    if len(parts) > RANGES_SHOWN:
        return ",".join(parts[:RANGES_SHOWN]) + ",..."
    return ",".join(parts)


def write_arrays(
    sweep_path: str, sweep_bytes: bytes, emitted: Sequence[tuple[int, Emitted]], limit: int | None
) -> list[str]:
    """Write each array's script and the folder's manifest, then tell each task's job_spec.json
    its array (a docker job: that it is one of the sweep's processes, and how many of them
    run at once); the lines that say what was written."""
    from scriptast.pipeline.verified_emit import emit
    from scriptast.workdir.write import OutputFile, write_all

    if not emitted:
        return ["Wrote no job array: no line of the sweep gave a job"]
    folder, stem = arrays_folder(sweep_path)
    planned = plan_arrays(stem, emitted)
    sweep_digest = hashlib.sha256(sweep_bytes).hexdigest()
    files: list[OutputFile] = []
    told: list[tuple[str, ArrayTask | ProcessSweep]] = []
    manifest: list[dict[str, object]] = []
    digests: dict[str, str] = {}
    for array in planned:
        members = [t.member for t in array.tasks]
        path = posixpath.join(folder, f"{array.name}.slurm")
        text = emit(array_script(array.name, folder, array.shape, members, limit))
        logs = array_logs(folder, array.name)
        files.append(OutputFile(path, text, executable=True))
        digest = hashlib.sha256(text.encode()).hexdigest()
        digests[posixpath.basename(path)] = digest
        told += [
            (
                task.member.work_dir,
                ArrayTask(
                    script=path,
                    script_sha256=digest,
                    name=array.name,
                    index=index,
                    limit=limit,
                    output=logs[0],
                    error=logs[1],
                    sweep=sweep_digest,
                ),
            )
            for index, task in enumerate(array.tasks)
        ]
        manifest.append(
            {
                "script": path,
                "shape": msgspec.to_builtins(array.shape),
                "limit": limit,
                "work_dirs": [t.member.work_dir for t in array.tasks],
            }
        )
    record: dict[str, object] = {
        "sweep": posixpath.abspath(sweep_path),
        "sweep_sha256": sweep_digest,
        "arrays": manifest,
    }
    processes = [(number, task) for number, task in emitted if task.shape is None]
    said = describe(planned, folder, limit) if planned else []
    if processes:
        group = ProcessSweep(name=f"{stem}_processes", index=0, limit=limit or DOCKER_LIMIT,
                             sweep=sweep_digest)  # fmt: skip
        told += [
            (task.member.work_dir, msgspec.structs.replace(group, index=index))
            for index, (_, task) in enumerate(processes)
        ]
        record["processes"] = {
            "name": group.name,
            "limit": group.limit,
            "work_dirs": [task.member.work_dir for _, task in processes],
        }
        said.append(_said_processes([number for number, _ in processes], group.limit))
    text = json.dumps({**record, "files": digests}, indent=2) + "\n"
    files.append(OutputFile(posixpath.join(folder, ARRAYS_MANIFEST), text))
    with _telling(told) as finished:  # the tasks are told while the arrays are written
        write_all(folder, files, spec=ARRAYS_MANIFEST)
        finished()
    return said


def _said_processes(lines: Sequence[int], limit: int) -> str:
    at_once = "one at a time" if limit == 1 else f"at most {limit} at once"
    hint = " (--array-limit N runs N at once)" if limit == 1 else ""
    return (
        f"{_count(len(lines), 'docker job')} (lines {_ranges(lines)}) run as processes here, "
        f"{at_once}{hint}: run of their work dirs starts the next as one ends"
    )


@contextlib.contextmanager
def _telling(told: list[tuple[str, ArrayTask | ProcessSweep]]) -> Iterator[Callable[[], None]]:
    """Each work dir's job_spec.json told its array, by a pool of workers for a large sweep
    (while the caller goes on), one after another for a small one; yields the wait for them,
    which raises the first error."""
    from scriptast.pipeline.worker_pool import SERIAL_BELOW, worker_pool

    workers = min(os.cpu_count() or 1, 8)
    if len(told) < SERIAL_BELOW or workers == 1:
        yield lambda: tell_tasks(told)
        return
    size = max(1, len(told) // (workers * 4))
    with worker_pool(workers) as pool:
        futures = [pool.submit(tell_tasks, told[i : i + size]) for i in range(0, len(told), size)]

        def wait() -> None:
            for future in futures:
                future.result()

        yield wait


def tell_tasks(told: list[tuple[str, ArrayTask | ProcessSweep]]) -> None:
    """A worker's share of `_telling`."""
    for work_dir, task in told:
        tell_task(work_dir, task)


def tell_task(work_dir: str, task: ArrayTask | ProcessSweep) -> None:
    """The task's job_spec.json with its `array` or `processes` (the last of emit's own fields
    it has, before the fields emit keeps for another writer), replaced whole."""
    from scriptast.workdir.files import regular_bytes
    from scriptast.workdir.write import OutputFile, replace_one

    path = posixpath.join(work_dir, JOB_SPEC)
    fields = json.loads(regular_bytes(path))
    owned = set(JobSpec.__struct_fields__)
    told = "array" if isinstance(task, ArrayTask) else "processes"
    updated = {k: v for k, v in fields.items() if k in owned and k != told}
    updated[told] = msgspec.to_builtins(task)
    updated.update({k: v for k, v in fields.items() if k not in owned})
    text = msgspec.json.format(msgspec.json.encode(updated), indent=2).decode() + "\n"
    replace_one(work_dir, OutputFile(path, text))
