"""Container mounts: the models host path by the seed's four rules, then home, project, and the
custom script's folder; every path checked for what pyxis cannot express."""

from __future__ import annotations

import os
import posixpath

import msgspec

from scriptast.errors import ModelError, ResolveError
from scriptast.model.slurm import Mount, pyxis_path_problem, split_mount


class MountPlan(msgspec.Struct, frozen=True):
    """The mounts, the host path mounted at llm_models_root (None when slurm_env gave the
    mounts verbatim without one), and where the models path came from."""

    mounts: tuple[Mount, ...]
    models_host_path: str | None
    models_source: str


def check_pyxis_path(path: str, what: str) -> None:
    """A path with a space, comma or colon is an error, not a broken mount."""
    problem = pyxis_path_problem(path)
    if problem is not None:
        name = problem[1]
        raise ResolveError(
            f"{what} {path!r} contains {name}, which pyxis --container-mounts cannot express; "
            "use a path (or a symlink) without spaces, commas or colons",
            field=what,
        )


def parse_mount_entry(entry: str) -> Mount:
    """One `src:dst[:flags]` string from slurm_env.mounts."""
    parts = split_mount(entry)
    if parts is None:
        raise ResolveError(
            f"slurm_env.mounts entry {entry!r} is not SRC:DST[:FLAGS]", field="slurm_env.mounts"
        )
    source, target, flags = parts
    try:
        return Mount(source=source, target=target, flags=flags)
    except ModelError as error:
        raise ResolveError(
            f"slurm_env.mounts entry {entry!r}: {error}", field="slurm_env.mounts"
        ) from None


def models_host_path(
    checkpoint_path: str | None,
    models_path: str | None,
    slurm_env_mounts: tuple[str, ...] | None,
    default_models_repo: str | None,
) -> tuple[str | None, str]:
    """(host path, source) by the first rule that matches; None when slurm_env.mounts applies."""
    if checkpoint_path:
        return posixpath.dirname(
            checkpoint_path.rstrip("/")
        ) or "/", "parent of input checkpoint_path"
    if models_path:
        return models_path, "input models_path"
    if slurm_env_mounts:
        return None, "slurm_env.mounts (verbatim)"
    if default_models_repo:
        return default_models_repo, "env_check.default_models_repo"
    raise ResolveError(
        "no models host path: pass --models-path (or --checkpoint-path), or give "
        "env_check.default_models_repo or slurm_env.mounts",
        field="models_path",
    )


def plan_mounts(
    *,
    llm_models_root: str,
    home: str,
    project: str,
    checkpoint_path: str | None,
    models_path: str | None,
    slurm_env_mounts: tuple[str, ...] | None,
    default_models_repo: str | None,
    extra_folders: tuple[tuple[str, str], ...] = (),
) -> MountPlan:
    """All mounts of the job, in the seed's order: home, project, the models (or slurm_env's
    mounts), then each (folder, what) of `extra_folders` that no mount shows at its own path yet
    (the custom script's). pyxis binds them in that order, so a models target under the home
    is bound over the home, never hidden by it."""
    host, source = models_host_path(
        checkpoint_path, models_path, slurm_env_mounts, default_models_repo
    )
    mounts = [_mount(home, home, "home directory"), _mount(project, project, "project path")]
    if host is None:
        given = [parse_mount_entry(entry) for entry in slurm_env_mounts or ()]
        mounts.extend(given)
        models_host = next((m.source for m in given if m.target == llm_models_root), None)
    else:
        mounts.append(_mount(host, llm_models_root, "models host path"))
        models_host = host
    for folder, what in extra_folders:
        # covered only where the container sees the folder at its own path: under the
        # models mount (/data/models -> /models) the script would be at another path
        if not any(m.covers(folder) and m.source == m.target for m in mounts):
            mounts.append(_mount(folder, folder, what))
    unique: list[Mount] = []
    for mount in mounts:
        if mount not in unique:
            unique.append(mount)
    return MountPlan(tuple(unique), models_host, source)


def _mount(source: str, target: str, what: str) -> Mount:
    check_pyxis_path(source, what)
    check_pyxis_path(target, what)
    if not posixpath.isabs(source):
        raise ResolveError(f"{what} {source!r} must be an absolute path", field=what)
    if not posixpath.isabs(target):
        raise ResolveError(
            f"llm_models_root {target!r} must be an absolute path in the container",
            field="llm_models_root",
        )
    return Mount(source=source.rstrip("/") or "/", target=target.rstrip("/") or "/")


def local_home() -> str:
    """$HOME of this machine."""
    return os.environ.get("HOME") or os.path.expanduser("~")


def remote_home(
    remote_cwd: str | None, given: str | None, recorded: str | None = None
) -> tuple[str, str]:
    """The cluster home and where it came from: the home probe-slurm recorded (slurm_env.home,
    the cluster's `echo $HOME`, any folder but /), else the parent of slurm_env.remote_cwd (the
    seed's rule) unless that is a top folder such as /home, which would mount every user's home,
    else the
    remote_home input, else remote_cwd itself when it is one level below such a folder (the
    probe ran in the home)."""
    if recorded and recorded.startswith("/") and _depth(recorded) >= 1:
        # the account's own $HOME, so never a folder of every user's homes (/root has depth 1)
        return recorded.rstrip("/"), "slurm_env.home (recorded by probe-slurm)"
    cwd = (remote_cwd.rstrip("/") or "/") if remote_cwd and remote_cwd.startswith("/") else None
    parent = (posixpath.dirname(cwd) or "/") if cwd else None
    if parent is not None and _depth(parent) >= 2:
        return parent, "parent of slurm_env.remote_cwd"
    if given:
        return given.rstrip("/") or "/", "input remote_home"
    if cwd is not None and _depth(cwd) == 2:
        return cwd, f"slurm_env.remote_cwd (its parent {parent} holds every user's home)"
    raise ResolveError(
        "remote_slurm needs the home directory on the cluster to mount: give slurm_env.home "
        "(probe-slurm records it), a slurm_env.remote_cwd under the home, or --remote-home",
        field="remote_home",
    )


def _depth(path: str) -> int:
    """`/home/alice` -> 2, `/home` -> 1, `/` -> 0."""
    return len([part for part in path.split("/") if part])
