"""A cluster's commands over one ssh master connection: BatchMode, a ControlPath per host that
every command of a run (and `watch`, `cancel`, `alloc`) shares, re-established once if it drops.
A host that asks for a password or MFA gets the one `ssh -fNM` line to run by hand, once."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import tempfile
from collections.abc import Sequence

from scriptast.common.processes import alive
from scriptast.contract.transport import Completed
from scriptast.errors import RunError
from scriptast.readers.shellwords import tokenize

PERSIST = "8h"
"""How long the master outlives its last command (so `watch` and `cancel` reuse it)."""
_AUTH = ("Permission denied", "password", "keyboard-interactive", "Host key verification")
_MISSING_MASTER = ("Control socket connect", "No such file or directory", "Connection refused")


def control_dir() -> str:
    """A private folder for the master sockets (their paths must stay short)."""
    folder = os.path.join(tempfile.gettempdir(), f"scriptast-ssh-{os.getuid()}")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    return folder


class SshTransport:
    """Commands on `host` (an ssh destination, as `ssh` reads it with `config`)."""

    def __init__(self, host: str, config: str | None = None) -> None:
        if not host or host.startswith("-"):
            raise RunError(f"{host!r} is not an ssh host: give --ssh-host HOST")
        self.host = host
        self.config = config
        self.control_path = os.path.join(control_dir(), "%C")
        self.reconnects = 0
        self._connected = False
        self._master_pid: int | None = None
        self._opened = False

    @property
    def where(self) -> str:
        return self.host

    def _ssh(self, *options: str) -> list[str]:
        argv = ["ssh"]
        if self.config:
            argv += ["-F", self.config]
        return [*argv, "-o", "BatchMode=yes", "-o", f"ControlPath={self.control_path}", *options]

    def manual_command(self) -> str:
        """The line a user runs once when the host asks for a password or MFA."""
        config = f"-F {shlex.quote(self.config)} " if self.config else ""
        return (
            f"ssh {config}-fNM -o ControlPath={self.control_path} -o ControlPersist={PERSIST} "
            f"{shlex.quote(self.host)}"
        )

    def connect(self) -> None:
        """Use the master this host already has (one the user opened by hand too), else open
        one; a host that wants a password or MFA is a RunError with the command to run."""
        if self._master_running():
            return
        opened = subprocess.run(
            [*self._ssh("-o", "ControlMaster=yes", "-o", f"ControlPersist={PERSIST}", "-fN"),
             self.host],
            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        if opened.returncode == 0:
            self._master_running()
            self._connected = self._opened = True
            return
        said = Completed(code=opened.returncode, out="", err=opened.stderr).last_line()
        if any(word in opened.stderr for word in _AUTH):
            raise RunError(
                f"ssh to {self.host} needs a password or MFA ({said}): run once "
                f"'{self.manual_command()}', then run scriptast again"
            )
        raise RunError(f"cannot connect to {self.host} with ssh: {said}")

    def _master_running(self) -> bool:
        """The master answers `-O check`: remember its process, so that a drop is seen
        before the next command (which would otherwise log in on its own)."""
        check = subprocess.run(
            [*self._ssh("-O", "check"), self.host], capture_output=True, text=True, timeout=30
        )
        if check.returncode != 0:
            return False
        found = re.search(r"pid=(\d+)", check.stderr)
        self._master_pid = int(found.group(1)) if found else None
        self._connected = True
        return True

    def _session(self, command: str) -> list[str]:
        if self._connected and self._master_pid is not None and not alive(self._master_pid):
            self._reconnect()  # the master dropped: once more, then an error
        if not self._connected:
            self.connect()
        # through the master or not at all: without it ssh would log in on its own (a login a
        # command); ProxyCommand=false makes that fallback fail, and the drop is seen
        return [*self._ssh("-o", "ControlMaster=no", "-o", "ProxyCommand=false"), self.host,
                "--", command]  # fmt: skip

    def _dropped(self, done: Completed) -> bool:
        if done.code != 255:
            return False
        gone = self._master_pid is not None and not alive(self._master_pid)
        return gone or any(word in done.err for word in _MISSING_MASTER)

    def _reconnect(self) -> None:
        self.reconnects += 1
        if self.reconnects > 1:
            raise RunError(f"the ssh connection to {self.host} dropped again; check the host")
        self._connected = False
        self.connect()

    def run_shell(
        self, command: str, *, timeout: float = 60.0, data: bytes | None = None
    ) -> Completed:
        """A shell command line on the host (through the master; once more after a drop)."""
        for _ in range(2):
            try:
                done = subprocess.run(
                    self._session(command),
                    input=data if data is not None else b"",
                    capture_output=True,
                    timeout=timeout,
                )
            except subprocess.TimeoutExpired:
                return Completed(
                    code=124, out="", err=f"{self.host} did not answer in {timeout:g} s"
                )
            answer = Completed(
                code=done.returncode,
                out=done.stdout.decode("utf-8", "replace"),
                err=done.stderr.decode("utf-8", "replace"),
            )
            if not self._dropped(answer):
                return answer
            self._reconnect()
        return answer

    def run(
        self, argv: Sequence[str], *, timeout: float = 60.0, cwd: str | None = None
    ) -> Completed:
        """`argv` on the host, quoted for its shell; a program it lacks is a RunError."""
        command = shlex.join(argv)
        read = [token.value for token in tokenize(command, "a cluster command")]
        if read != list(argv):
            raise RunError(f"{argv!r} cannot be passed to the shell of {self.host} intact")
        if cwd:
            command = f"cd {shlex.quote(cwd)} && {command}"
        done = self.run_shell(command, timeout=timeout)
        if done.code == 127 and "not found" in done.err:
            raise RunError(
                f"{argv[0]} is not installed on {self.host} (is Slurm's client on its PATH?)"
            )
        return done

    def close(self) -> None:
        """Close the master this transport opened (one that was there before it, which a
        person may have opened by hand for a password or MFA, is left open)."""
        if self._opened:
            subprocess.run([*self._ssh("-O", "exit"), self.host], capture_output=True, timeout=30)
            self._opened = self._connected = False

    def fetch(self, path: str) -> bytes | None:
        """A file's bytes from the host (None: it does not exist there)."""
        done = subprocess.run(
            self._session(f"cat -- {shlex.quote(path)}"), capture_output=True, timeout=600
        )
        return done.stdout if done.returncode == 0 else None

    def put(
        self, path: str, data: bytes, *, executable: bool = False, sha256: str | None = None
    ) -> Completed:
        """Write `path` on the host whole: under a temporary name created anew (noclobber:
        never through a link planted there), its digest checked there, then renamed (a
        half-sent or altered file is never at `path`)."""
        temporary = shlex.quote(f"{path}.scriptast-{os.getpid()}.tmp")
        folder = shlex.quote(os.path.dirname(path) or "/")
        mode = "755" if executable else "644"
        check = ""
        if sha256 is not None:
            if not re.fullmatch(r"[0-9a-f]{64}", sha256):  # it comes from job_spec.json
                return Completed(code=2, out="", err=f"{sha256!r} is not a sha256 digest")
            check = (
                f'sum=$(sha256sum < {temporary}) && [ "${{sum%% *}}" = {shlex.quote(sha256)} ] '
                f'|| {{ echo "sha256 of the sent file is ${{sum%% *}}, expected {sha256}" >&2; '
                f"rm -f -- {temporary}; exit 3; }}; "
            )
        command = (
            f"set -C; mkdir -p -- {folder} && rm -f -- {temporary} && cat > {temporary} && "
            f"{check}chmod {mode} {temporary} && mv -f -- {temporary} {shlex.quote(path)}"
        )
        return self.run_shell(command, data=data, timeout=600)

    def stream(self, command: str) -> subprocess.Popen[bytes]:
        """A long-running command whose stdout is read as it comes (`tail -F`)."""
        return subprocess.Popen(
            self._session(command),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )
