"""`scriptast probe-slurm`: read a cluster with sinfo/scontrol/srun/sacctmgr into slurm_env.json.

The parsers take the commands' text, so they are tested on recorded outputs; `probe` runs them.
`emit` never probes (the seed forbids detection inside the builder): this is the separate step.
"""

from __future__ import annotations

import getpass
import os
import re
import shlex
import shutil
import socket
import subprocess
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgspec

from scriptast.contract.slurm_env import NO_CLIENT_TOOLS
from scriptast.errors import InputError
from scriptast.model.slurm_options import gres_gpus

if TYPE_CHECKING:
    from scriptast.contract.transport import Transport

_FIELD = re.compile(r"(\w+)=(\S*)")

Runner = Callable[[list[str]], tuple[int, str, str]]


def parse_records(text: str) -> list[dict[str, str]]:
    """`scontrol show ... -o` output: one record a line, KEY=VALUE fields."""
    return [dict(_FIELD.findall(line)) for line in text.splitlines() if "=" in line]


def parse_config(text: str) -> dict[str, str]:
    """`scontrol show config`: one `Key = value` a line (headings and blank lines skipped)."""
    config = {}
    for line in text.splitlines():
        key, equals, value = line.partition("=")
        if equals and key.strip() and " " not in key.strip():
            config[key.strip()] = value.strip()
    return config


def parse_mpi_list(text: str) -> dict[str, Any]:
    """`srun --mpi=list`: the plugin names, and the preferred one (the newest pmix_vN)."""
    available: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("specific pmix plugin versions available:"):
            available += [v.strip() for v in stripped.split(":", 1)[1].split(",") if v.strip()]
        elif re.fullmatch(r"[a-z0-9_]+", stripped) and not stripped.startswith("srun"):
            available.append(stripped)
    versions = sorted(
        (p for p in available if re.fullmatch(r"pmix_v\d+", p)),
        key=lambda p: int(p[len("pmix_v") :]),
    )
    preferred = versions[-1] if versions else ("pmix" if "pmix" in available else None)
    return {"available": sorted(set(available)), "preferred": preferred}


PLUGIN_BLOCK = "Options provided by plugins:"
_PLUGIN_OPTION = re.compile(r"\s+--([A-Za-z0-9][\w-]*)(=?)")


def parse_plugin_options(help_text: str) -> list[dict[str, str]]:
    """The options the cluster's SPANK plugins add, from `srun --help`'s block "Options
    provided by plugins:" (each `--name[=ARG]` at the start of a line); none without it."""
    _, found, block = help_text.partition(PLUGIN_BLOCK)
    if not found:
        return []
    options = []
    for line in block.splitlines()[1:]:
        if line and not line[0].isspace():
            break  # the next block ("Help options:")
        match = _PLUGIN_OPTION.match(line)
        if match is not None:
            arg = "required" if match.group(2) else "no"
            options.append({"name": match.group(1), "arg": arg})
    return options


def build_partitions(
    partitions: list[dict[str, str]], nodes: list[dict[str, str]]
) -> list[dict[str, Any]]:
    """One entry per partition: arch (shared by its nodes, else null), gres and GPUs per node."""
    found = []
    for partition in partitions:
        name = partition.get("PartitionName", "")
        members = [n for n in nodes if name in n.get("Partitions", "").split(",")]
        arches = {n.get("Arch") for n in members if n.get("Arch") and n.get("Arch") != "(null)"}
        gres_values = [n.get("Gres", "(null)") for n in members] or ["(null)"]
        gpus = [g for g in (gres_gpus(v) for v in gres_values) if g is not None]
        gres = gres_values[0] if gres_values[0] else "(null)"
        found.append(
            {
                "name": name,
                "state": partition.get("State", "").lower() or None,
                "time_limit": partition.get("MaxTime"),
                "nodes": partition.get("TotalNodes"),
                "arch": arches.pop() if len(arches) == 1 else None,
                "gres": gres,
                "gpus_per_node": min(gpus) if gpus else None,
                "requires_gres": gres.startswith("gpu:"),
            }
        )
    return found


def _run(argv: list[str]) -> tuple[int, str, str]:
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        return 127, "", str(error)
    return result.returncode, result.stdout, result.stderr


class HostFacts(msgspec.Struct, frozen=True):
    """Who and where the probe runs: the user, the working directory, $HOME, the host name."""

    user: str
    cwd: str
    home: str
    hostname: str


def local_facts() -> HostFacts:
    return HostFacts(
        user=getpass.getuser(),
        cwd=_working_directory(),
        home=os.path.expanduser("~"),
        hostname=socket.gethostname(),
    )


def probe(
    run: Runner = _run,
    which: Callable[[str], str | None] = shutil.which,
    facts: Callable[[], HostFacts] = local_facts,
) -> dict[str, Any]:
    """The seed's slurm_env schema for the cluster these client tools talk to."""
    host = facts()
    env: dict[str, Any] = {
        "user": host.user,
        "default_account": None,
        "accounts": [],
        "default_partition": None,
        "partitions": [],
        "pmix": {"available": [], "preferred": None},
        "errors": [],
        "remote_cwd": host.cwd,
        "home": host.home,
    }
    if not which("sinfo") or not which("scontrol"):
        env["errors"].append(NO_CLIENT_TOOLS)
        return env
    code, partitions_text, error = run(["scontrol", "show", "partition", "-o"])
    if code != 0:
        env["errors"].append(f"scontrol show partition failed: {_first_line(error)}")
        return env
    code, nodes_text, error = run(["scontrol", "show", "node", "-o"])
    if code != 0:
        env["errors"].append(f"scontrol show node failed: {_first_line(error)}")
    code, config_text, _ = run(["scontrol", "show", "config"])
    if code == 0:
        config = parse_config(config_text)
        if config.get("ClusterName"):
            env["cluster_name"] = config["ClusterName"]
        if config.get("SLURM_VERSION"):
            env["probe"] = {"host": host.hostname, "slurm_version": config["SLURM_VERSION"]}
        if config.get("MaxArraySize", "").isdecimal():
            env["max_array_size"] = int(config["MaxArraySize"])
    partitions = parse_records(partitions_text)
    env["partitions"] = build_partitions(partitions, parse_records(nodes_text))
    env["default_partition"] = next(
        (p["PartitionName"] for p in partitions if p.get("Default") == "YES"), None
    )
    code, mpi_text, error = run(["srun", "--mpi=list"])
    if code == 0:
        env["pmix"] = parse_mpi_list(mpi_text + "\n" + error)
    else:
        env["errors"].append(f"srun --mpi=list failed: {_first_line(error)}")
    code, help_text, error = run(["srun", "--help"])
    if code == 0:
        env["plugin_options"] = parse_plugin_options(help_text)
    else:
        env["errors"].append(f"srun --help failed: {_first_line(error)}")
    code, accounts_text, error = run(
        ["sacctmgr", "-nP", "show", "assoc", f"user={env['user']}", "format=account"]
    )
    accounts = sorted({line.strip() for line in accounts_text.splitlines() if line.strip()})
    if code == 0 and accounts and "not running a supported" not in accounts_text:
        env["accounts"] = accounts
        env["default_account"] = accounts[0]
    else:
        env["errors"].append("accounts unknown: sacctmgr has no accounting database to ask")
    return env


def summary(env: dict[str, Any]) -> str:
    """One line of what a probe learned: partitions, accounts, MPI plugin, release, errors."""
    names = [str(p["name"]) for p in env["partitions"]]
    shown = ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")
    release = (env.get("probe") or {}).get("slurm_version")
    parts = [
        f"{len(names)} partition{'s' if len(names) != 1 else ''} ({shown})",
        f"{len(env['accounts'])} account{'s' if len(env['accounts']) != 1 else ''}",
        f"MPI {env['pmix'].get('preferred') or 'unknown'}",
    ]
    if release:
        parts.append(f"Slurm {release}")
    if env["errors"]:
        parts.append(f"{len(env['errors'])} error(s) in errors[]")
    return ", ".join(parts)


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else "it printed nothing"


def over_ssh(transport: Transport) -> dict[str, Any]:
    """probe() on the cluster behind `transport` (the ssh master `run` shares): each command,
    the client tools looked up, and who and where the login shell is, asked there."""
    from scriptast.errors import RunError

    def run(argv: list[str]) -> tuple[int, str, str]:
        try:
            done = transport.run(argv, timeout=60)
        except RunError as error:
            return 127, "", str(error)
        return done.code, done.out, done.err

    def which(name: str) -> str | None:
        done = transport.run_shell(f"command -v {shlex.quote(name)}")
        found = done.out.strip()
        return found if done.code == 0 and found else None

    def facts() -> HostFacts:
        done = transport.run_shell('id -un; pwd; printf "%s\\n" "$HOME"; hostname')
        lines = done.out.splitlines()
        if done.code != 0 or len(lines) < 4:
            raise InputError(f"cannot probe {transport.where} over ssh: {_first_line(done.err)}")
        return HostFacts(user=lines[0], cwd=lines[1], home=lines[2], hostname=lines[3])

    return probe(run=run, which=which, facts=facts)


def _working_directory() -> str:
    """This process's working directory (slurm_env's remote_cwd), or InputError if deleted."""
    try:
        return os.getcwd()
    except OSError:
        raise InputError(
            "the working directory no longer exists (it was deleted); cd to one that does: "
            "probe-slurm records it as remote_cwd"
        ) from None
