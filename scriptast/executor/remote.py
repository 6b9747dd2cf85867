"""A remote_slurm job: checked on the cluster (its user, sbatch, the checkout), uploaded under
temporary names and renamed, digests checked there, submitted over ssh, its logs streamed back
from offsets (`tail -c +N -F`) and copied into the local work_dir at the end."""

from __future__ import annotations

import os
import posixpath
import shlex
import subprocess
import threading
from collections.abc import Callable

from scriptast.errors import RunError
from scriptast.executor.job_files import LoadedJob, read_regular
from scriptast.executor.judge import LogScanner
from scriptast.executor.log_tail import LineSink
from scriptast.executor.ssh import SshTransport

FETCHABLE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-*?[]/")


def remote_work_dir(job: LoadedJob) -> str:
    """The job's cluster work dir (job_spec's, required for remote_slurm)."""
    folder = job.spec.remote_work_dir
    if not folder or not folder.startswith("/"):
        raise RunError(f"{job.work_dir}/job_spec.json has no absolute remote_work_dir")
    return folder


def destinations(job: LoadedJob) -> dict[str, str]:
    """Each file emit wrote (local path) and the cluster path it belongs at: the script and the
    extra files in remote_work_dir, unless extra_file_destinations names another place."""
    folder = remote_work_dir(job)
    chosen = {job.script: posixpath.join(folder, posixpath.basename(job.script))}
    for extra in job.spec.extra_files:
        chosen[extra] = job.spec.extra_file_destinations.get(
            extra, posixpath.join(folder, posixpath.basename(extra))
        )
    clashes = {d for d in chosen.values() if list(chosen.values()).count(d) > 1}
    if clashes:
        raise RunError(f"two files of {job.work_dir} would go to {', '.join(sorted(clashes))}")
    return chosen


def check_cluster(job: LoadedJob, ssh: SshTransport) -> None:
    """The cluster answers as the user slurm_env was probed as, has sbatch, and holds the
    checkout; remote_work_dir is created there."""
    user = job.spec.slurm_env.user if job.spec.slurm_env else None
    who = ssh.run(["id", "-un"])
    if user and who.code == 0 and who.out.strip() != user:
        raise RunError(
            f"{ssh.host} logs in as {who.out.strip()!r}, but slurm_env.json was probed as "
            f"{user!r}: submit as that user (a User line in the ssh config) or probe again"
        )
    found = ssh.run(["sbatch", "--version"])
    if found.code != 0:
        raise RunError(f"sbatch is not installed on {ssh.host} (is Slurm's client on its PATH?)")
    repo = job.spec.remote_repo_path
    if repo and ssh.run(["test", "-d", repo]).code != 0:
        raise RunError(
            f"remote_repo_path {repo} does not exist on {ssh.host}: clone TensorRT-LLM there "
            "first (the job installs it from there)"
        )
    made = ssh.run(["mkdir", "-p", "--", remote_work_dir(job)])
    if made.code != 0:
        raise RunError(
            f"remote_work_dir {remote_work_dir(job)} cannot be created on {ssh.host}: "
            f"{made.last_line()}"
        )


def upload(job: LoadedJob, ssh: SshTransport) -> dict[str, str]:
    """Send every file to its cluster path (a temporary name, then a rename, so a half-sent
    file is never run), then check each one's sha256 there against job_spec's `files`."""
    chosen = destinations(job)
    for local, remote in chosen.items():
        data = read_regular(local, "file")
        temporary = f"{remote}.scriptast-{os.getpid()}.tmp"
        mode = "755" if os.access(local, os.X_OK) else "644"
        quoted = shlex.quote(temporary)
        command = (
            f"mkdir -p -- {shlex.quote(posixpath.dirname(remote))} && cat > {quoted} && "
            f"chmod {mode} {quoted} && mv -f -- {quoted} {shlex.quote(remote)}"
        )
        sent = ssh.run_shell(command, data=data, timeout=600)
        if sent.code != 0:
            raise RunError(f"cannot write {remote} on {ssh.host}: {sent.last_line()}")
    summed = ssh.run(["sha256sum", "--", *chosen.values()])
    found = {}
    for line in summed.out.splitlines():
        digest, _, name = line.partition("  ")
        found[name] = digest
    for local, remote in chosen.items():
        expected = job.spec.files.get(posixpath.relpath(local, job.work_dir))
        if expected is None or found.get(remote) != expected:
            raise RunError(
                f"{remote} on {ssh.host} does not hold what emit wrote (sha256 "
                f"{found.get(remote, 'missing')}, expected {expected}): not submitted"
            )
    return chosen


def local_copy(job: LoadedJob, remote: str) -> str:
    """Where a cluster file is brought back to: the local work_dir, by its name."""
    return posixpath.join(job.work_dir, posixpath.basename(remote))


class RemoteLogTail:
    """A cluster log followed through one `tail -c +N -F` over the master: a thread collects
    what arrives, each read hands it on; the end is read once more from the last offset."""

    def __init__(self, path: str, scanner: LogScanner, sink: LineSink, ssh: SshTransport) -> None:
        self.path = path
        self.scanner = scanner
        self.sink = sink
        self.ssh = ssh
        self.offset = 0
        self._chunks: list[bytes] = []
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._reader: threading.Thread | None = None

    def _start(self) -> None:
        # tail follows a file that exists by inotify at once, one that does not yet only by
        # polling, seconds late: wait for the job to create it, then follow it
        quoted = shlex.quote(self.path)
        self._process = self.ssh.stream(
            f"while [ ! -e {quoted} ]; do sleep 0.2; done; "
            f"exec tail -c +{self.offset + 1} -F -s 0.2 -- {quoted} 2>/dev/null"
        )
        self._reader = threading.Thread(target=self._collect, daemon=True)
        self._reader.start()

    def _collect(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        descriptor = self._process.stdout.fileno()
        while chunk := os.read(descriptor, 65536):
            with self._lock:
                self._chunks.append(chunk)

    def _hand_on(self, data: bytes) -> None:
        self.offset += len(data)
        self.scanner.feed(data)
        self.sink(data)

    def read(self) -> int:
        """Hand on what arrived since the last read; bytes handed on. A follower that ended
        (the master dropped) is started again from the last offset."""
        if self._process is None:
            self._start()
        elif self._process.poll() is not None and self._reader is not None:
            self._reader.join(timeout=5)
            self._drain()
            self._start()
        return self._drain()

    def _drain(self) -> int:
        with self._lock:
            data = b"".join(self._chunks)
            self._chunks.clear()
        if data:
            self._hand_on(data)
        return len(data)

    def close(self) -> None:
        """Stop following, and read what the file holds past the last offset."""
        if self._process is not None:
            self._process.terminate()
            self._process.wait()
            if self._reader is not None:
                self._reader.join(timeout=5)
            self._drain()
        rest = self.ssh.run_shell(f"tail -c +{self.offset + 1} -- {shlex.quote(self.path)}")
        if rest.code == 0 and rest.out:
            self._hand_on(rest.out.encode())


def bring_back(job: LoadedJob, ssh: SshTransport, remotes: list[str], patterns: tuple[str, ...],
               note: Callable[[str], None]) -> None:  # fmt: skip
    """Copy the job's logs and the files `--fetch` patterns name on the cluster into the local
    work_dir."""
    wanted = list(remotes)
    for pattern in patterns:
        if not set(pattern) <= FETCHABLE or pattern.startswith("/") or ".." in pattern:
            note(f"--fetch {pattern!r} skipped: only a relative glob of plain characters")
            continue
        listed = ssh.run_shell(
            f"cd {shlex.quote(remote_work_dir(job))} && for f in {pattern}; do "
            '[ -f "$f" ] && printf "%s\\n" "$f"; done; true'
        )
        wanted += [posixpath.join(remote_work_dir(job), n) for n in listed.out.splitlines() if n]
    for remote in wanted:
        data = ssh.fetch(remote)
        if data is None:
            note(f"{remote} was not on {ssh.host} to bring back")
            continue
        target = local_copy(job, remote)
        os.makedirs(posixpath.dirname(target), exist_ok=True)
        with open(target, "wb") as stream:
            stream.write(data)


def allocation_launch(job: LoadedJob, remote_script: str, env: dict[str, str], out: str,
                      err: str, exit_file: str) -> str:  # fmt: skip
    """The cluster command that starts the script inside an allocation, detached from the ssh
    session (its own session, so that a cancel kills exactly it), and prints its pid."""
    from scriptast.executor.submit import WRAPPER

    assigns = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(env.items()))
    return (
        f"cd {shlex.quote(remote_work_dir(job))} && "
        f"env {assigns} SCRIPTAST_EXIT_FILE={shlex.quote(exit_file)} "
        f"setsid nohup /bin/sh -c {shlex.quote(WRAPPER)} scriptast-job bash "
        f"{shlex.quote(remote_script)} >{shlex.quote(out)} 2>{shlex.quote(err)} </dev/null & "
        "echo $!"
    )
