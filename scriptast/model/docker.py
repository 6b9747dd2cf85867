"""A `docker run` as a typed node: flags, env, bind mounts, image, and what it runs."""

from __future__ import annotations

import posixpath

from scriptast.errors import ModelError
from scriptast.model.image_ref import image_problem
from scriptast.model.node import IDENTIFIER, Node
from scriptast.model.statements import Payload
from scriptast.model.words import Word


class BindMount(Node, frozen=True, kw_only=True, tag="bind_mount"):
    """`--mount type=bind,source=...,target=...[,readonly]`."""

    source: str
    target: str
    readonly: bool = False

    def __post_init__(self) -> None:
        for what, path in (("source", self.source), ("target", self.target)):
            if not posixpath.isabs(path):
                raise ModelError(
                    f"docker mount {what} {path!r} must be an absolute path", field=what
                )


class EnvVar(Node, frozen=True, kw_only=True, tag="env_var"):
    """`-e NAME=value`."""

    name: str
    value: Word

    def __post_init__(self) -> None:
        if not IDENTIFIER.match(self.name):
            raise ModelError(f"docker env name {self.name!r} is not a variable name", field="name")


class DockerRun(Node, frozen=True, kw_only=True, tag="docker_run"):
    """A `docker run` with TRT-LLM's flags; runs `payload` via `bash -c`, or `command`."""

    image: str
    name: str | None = None
    remove: bool = True
    network: str | None = "host"
    runtime: str | None = "nvidia"
    ipc: str | None = "host"
    cap_add: tuple[str, ...] = ("SYS_PTRACE", "SYS_ADMIN", "DAC_READ_SEARCH")
    security_opt: tuple[str, ...] = ("seccomp=unconfined",)
    env: tuple[EnvVar, ...] = ()
    mounts: tuple[BindMount, ...] = ()
    workdir: str | None = None
    payload: Payload | None = None
    command: tuple[Word, ...] = ()

    def __post_init__(self) -> None:
        problem = image_problem(self.image)
        if problem is not None:
            raise ModelError(
                f"docker image {self.image!r} is not an image reference: {problem}", field="image"
            )
        if (self.payload is None) == (not self.command):
            raise ModelError(
                "a docker run runs exactly one of a payload or a command", field="payload"
            )
        if self.workdir is not None and not posixpath.isabs(self.workdir):
            raise ModelError(
                f"docker workdir {self.workdir!r} must be an absolute path", field="workdir"
            )
