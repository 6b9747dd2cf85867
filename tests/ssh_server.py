"""A real ssh server on loopback for the remote tests: Debian's sshd run as `sshd -D -f <its own
config>` on a free port of 127.0.0.1, host and user keys made in a temporary folder, stopped by
its process id. Its sessions see the test Slurm cluster (SLURM_CONF) and, first on PATH, the
recording stand-ins; the client forwards SHIM_* variables so each test tells them what to do."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.shim_recorder import Shims
from tests.slurm_cluster import Cluster

SSHD = "/usr/sbin/sshd"
MV_SHIM = """import os, sys
if os.environ.get("SHIM_ALTER_UPLOAD") and sys.argv[-2].endswith(".tmp"):
    with open(sys.argv[-2], "a") as stream:
        stream.write("# altered on its way\\n")
os.execv("/bin/mv", ["mv", *sys.argv[1:]])
"""
SBATCH_SHIM = """import os, sys
if os.environ.get("SHIM_NO_SBATCH"):
    print("bash: sbatch: command not found", file=sys.stderr)
    sys.exit(127)
held = ["--hold"] if os.environ.get("SHIM_SBATCH_HOLD") else []
os.execv("/usr/bin/sbatch", ["sbatch", *held, *sys.argv[1:]])
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class SshServer:
    """A running sshd and what a client needs to reach it."""

    folder: Path
    port: int
    pid: int
    shims: Shims

    def config(self, path: Path, *, key: str = "userkey", alias: str = "cluster") -> Path:
        """An ssh config whose Host `alias` is this server, logged in with `key`."""
        path.write_text(
            f"Host {alias}\n"
            "  HostName 127.0.0.1\n"
            f"  Port {self.port}\n"
            "  User root\n"
            f"  IdentityFile {self.folder / key}\n"
            "  IdentitiesOnly yes\n"
            f"  UserKnownHostsFile {self.folder / 'known_hosts'}\n"
            "  StrictHostKeyChecking yes\n"
            "  SendEnv SHIM_*\n"
        )
        return path

    def accepted(self) -> int:
        """Connections the server accepted so far."""
        return (self.folder / "sshd.log").read_text().count("Accepted publickey")


def _keys(folder: Path) -> None:
    for name in ("hostkey", "userkey", "otherkey"):
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(folder / name)], check=True
        )
    shutil.copy(folder / "userkey.pub", folder / "authorized_keys")


def start_sshd(
    folder: Path, slurm_conf: Path, shims: Shims
) -> tuple[SshServer, subprocess.Popen[bytes]]:
    """sshd on a free loopback port with keys made in `folder`; its sessions see the cluster
    of `slurm_conf` and the stand-ins of `shims` first on PATH."""
    _keys(folder)
    for name, source in (("mv", MV_SHIM), ("sbatch", SBATCH_SHIM)):
        (shims.bin / name).write_text(f"#!{sys.executable}\n{source}")
        (shims.bin / name).chmod(0o755)
    port = free_port()
    path = f"{shims.bin}:{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin"
    (folder / "sshd_config").write_text(
        f"Port {port}\n"
        "ListenAddress 127.0.0.1\n"
        f"HostKey {folder / 'hostkey'}\n"
        f"PidFile {folder / 'sshd.pid'}\n"
        f"AuthorizedKeysFile {folder / 'authorized_keys'}\n"
        "StrictModes no\nUsePAM no\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n"
        "AcceptEnv SHIM_*\nLogLevel VERBOSE\n"
        f"SetEnv PATH={path} SLURM_CONF={slurm_conf}\n"
        # the login shell's rc files (a pyenv PATH, say) run first: the stand-ins win anyway
        # (bash reads ~/.bashrc when it sees SSH_CLIENT, so the command's bash is not told)
        f"ForceCommand exec env -u SSH_CLIENT -u SSH2_CLIENT PATH={path} "
        '/bin/bash -c "$SSH_ORIGINAL_COMMAND"\n'
    )
    host_key = (folder / "hostkey.pub").read_text().split()
    (folder / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_key[0]} {host_key[1]}\n")
    os.makedirs("/run/sshd", exist_ok=True)
    process = subprocess.Popen(
        [SSHD, "-D", "-f", str(folder / "sshd_config"), "-E", str(folder / "sshd.log")],
        stdin=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.1)
    else:
        process.kill()
        raise RuntimeError(
            f"sshd did not listen on port {port}: {(folder / 'sshd.log').read_text()}"
        )
    return SshServer(folder=folder, port=port, pid=process.pid, shims=shims), process


@pytest.fixture(scope="session")
def sshd(tmp_path_factory: pytest.TempPathFactory, cluster: Cluster) -> Iterator[SshServer]:
    if not os.path.exists(SSHD):
        pytest.fail("sshd is not installed: apt-get install openssh-server (.ci/run does)")
    folder = tmp_path_factory.mktemp("sshd")
    shims = Shims(folder / "shims")
    (shims.bin / "srun").unlink()
    (shims.bin / "docker").unlink()
    server, process = start_sshd(folder, cluster.conf, shims)
    try:
        yield server
    finally:
        process.terminate()
        process.wait(timeout=10)
