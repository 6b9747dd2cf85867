"""Lower srun steps and docker runs to argv lines: the typed options as the words each takes."""

from __future__ import annotations

from scriptast.emitters.quote import docker_mount, pyxis_mounts, pyxis_names
from scriptast.model.docker import DockerRun
from scriptast.model.slurm import PyxisContainer, SrunStep
from scriptast.model.words import Lit, Word, concat

ArgvLines = tuple[tuple[Word, ...], ...]
"""A command's argv grouped into lines: the head, then one option (one or two words) a line."""


def _lit(*values: str) -> tuple[Word, ...]:
    return tuple(Lit(value=v) for v in values)


def _switch(value: bool | None, name: str) -> tuple[tuple[Word, ...], ...]:
    if value is None:
        return ()
    return (_lit(f"--{name}" if value else f"--no-{name}"),)


def container_lines(container: PyxisContainer) -> ArgvLines:
    """The pyxis options of a step, in a fixed order."""
    lines: list[tuple[Word, ...]] = [_lit(f"--container-image={container.image}")]
    if container.name is not None:
        suffix = f":{container.name_flag}" if container.name_flag else ""
        lines.append(_lit(f"--container-name={container.name}{suffix}"))
    if container.mounts:
        listed = pyxis_mounts(container.mounts)
        lines.append(_lit(f"--container-mounts={listed}"))
    if container.workdir is not None:
        lines.append(_lit(f"--container-workdir={container.workdir}"))
    if container.env:
        lines.append(_lit(f"--container-env={pyxis_names(container.env)}"))
    lines.extend(_switch(container.mount_home, "container-mount-home"))
    lines.extend(_switch(container.remap_root, "container-remap-root"))
    lines.extend(_switch(container.entrypoint, "container-entrypoint"))
    if container.writable is not None:
        lines.append(_lit("--container-writable" if container.writable else "--container-readonly"))
    if container.save is not None:
        lines.append(_lit(f"--container-save={container.save}"))
    return tuple(lines)


def srun_option_lines(step: SrunStep) -> ArgvLines:
    """`srun [-l]` and every option before the command, one option a line."""
    head = _lit("srun", "-l") if step.label else _lit("srun")
    lines: list[tuple[Word, ...]] = [head]
    for name, value in (
        ("nodes", step.nodes),
        ("ntasks", step.ntasks),
        ("ntasks-per-node", step.ntasks_per_node),
        ("gres", step.gres),
        ("mpi", step.mpi),
    ):
        if value is not None:
            lines.append(_lit(f"--{name}={value}"))
    if step.kill_on_bad_exit is not None:
        lines.append(_lit(f"--kill-on-bad-exit={int(step.kill_on_bad_exit)}"))
    for option in step.extra:
        text = f"--{option.name}" if option.value is None else f"--{option.name}={option.value}"
        lines.append(_lit(text))
    if step.container is not None:
        lines.extend(container_lines(step.container))
    return tuple(lines)


def docker_option_lines(run: DockerRun) -> ArgvLines:
    """`docker run` and every option before the image, one option a line."""
    lines: list[tuple[Word, ...]] = [_lit("docker", "run")]
    if run.remove:
        lines.append(_lit("--rm"))
    for name, value in (("net", run.network), ("runtime", run.runtime), ("ipc", run.ipc)):
        if value is not None:
            lines.append(_lit(f"--{name}={value}"))
    lines.extend(_lit(f"--cap-add={cap}") for cap in run.cap_add)
    lines.extend(_lit("--security-opt", option) for option in run.security_opt)
    for variable in run.env:
        lines.append((Lit(value="-e"), concat(f"{variable.name}=", variable.value)))
    lines.extend(_lit("--mount", docker_mount(m.source, m.target, m.readonly)) for m in run.mounts)
    if run.workdir is not None:
        lines.append(_lit("--workdir", run.workdir))
    if run.name is not None:
        lines.append(_lit("--name", run.name))
    lines.append(_lit(run.image))
    return tuple(lines)


def run_lines(command: tuple[Word, ...], payload_text: str | None) -> ArgvLines:
    """The last line of an srun or docker run: `bash -c '<payload>'` or the command."""
    if payload_text is not None:
        return (_lit("bash", "-c", payload_text),)
    return (command,)
