"""Inputs given and not used, each named in a warning: a required_devices the workflow's own rule
overrules, a node_count a single-node workflow or submit.py's sizing does not take."""

from __future__ import annotations

from scriptast.builders.category import Resolution
from scriptast.builders.request.fields import Request
from scriptast.builders.resolution.trail import Trail

SIZED_BY_SUBMIT = "perf_sanity"
"""The work category whose Slurm sizes submit.py derives from the config's hardware section."""


def warn_unused(request: Request, resolution: Resolution, trail: Trail) -> None:
    """A warning for each sizing input the resolved job does not use."""
    par = resolution.parallelism
    by_submit = resolution.work.category == SIZED_BY_SUBMIT
    why_submit = (
        "submit.py derives a perf-sanity job's nodes and GPUs from the config's hardware "
        "section alone"
    )
    devices = request.required_devices
    if devices is not None:
        if by_submit:
            trail.warn(f"required_devices {devices} is not used: {why_submit}")
        elif devices != par.required_devices.value:
            trail.warn(
                f"required_devices {devices} is not used: the job needs "
                f"{par.required_devices.value} ({par.required_devices.source})"
            )
    nodes = request.node_count
    if nodes is not None:
        if by_submit:
            trail.warn(f"node_count {nodes} is not used: {why_submit}")
        elif nodes != par.nodes:
            trail.warn(
                f"node_count {nodes} is not used: {request.workflow_type} runs on {par.nodes} "
                f"node{'s' if par.nodes != 1 else ''} here"
            )
