"""The seed's Step 6 summary printed after a successful emit."""

from __future__ import annotations

from scriptast.builders.job import ResolvedJob


def emit_summary(job: ResolvedJob, job_spec_path: str, script: str) -> str:
    """`Generated:`, `Script:`, `Workflow:`, `Model:`, `Docker image:`, `Devices:` lines."""
    nodes = job.slurm.nodes if job.slurm else 1
    gpus = "GPU" if job.required_devices == 1 else "GPUs"
    node_word = "node" if nodes == 1 else "nodes"
    return (
        f"Generated: {job_spec_path}\n"
        f"Script: {script}\n"
        f"Workflow: {job.workflow}\n"
        f"Model: {job.model_name}\n"
        f"Docker image: {job.image}\n"
        f"Devices: {job.required_devices} {gpus} across {nodes} {node_word}\n"
    )
