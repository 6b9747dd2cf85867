"""The seed's Step 6 summary printed after a successful emit."""

from __future__ import annotations

from scriptast.contract.job_spec import JobSpec


def emit_summary(spec: JobSpec, job_spec_path: str, script: str, *, devices: int,
                 more: tuple[str, ...] = ()) -> str:  # fmt: skip
    """`Generated:`, `Script:`, `Workflow:`, `Model:`, `Docker image:`, `Devices:` lines, then
    `more` (what the job's category adds: a CI stage's tests)."""
    nodes = spec.slurm_params.nodes if spec.slurm_params else 1
    gpus = "GPU" if devices == 1 else "GPUs"
    node_word = "node" if nodes == 1 else "nodes"
    return (
        f"Generated: {job_spec_path}\n"
        f"Script: {script}\n"
        f"Workflow: {spec.workflow_type}\n"
        f"Model: {spec.model_name}\n"
        f"Docker image: {spec.docker_image}\n"
        f"Devices: {devices} {gpus} across {nodes} {node_word}\n"
    ) + "".join(f"{line}\n" for line in more)
