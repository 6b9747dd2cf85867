"""A cluster as a job's place, reached over one ssh master: built once a job (the transport, the
cluster work dir, where each file goes); staging checks the cluster (its user, sbatch, the
checkout), uploads the files under temporary names, renames them and checks their digests
there; processes start there detached; the logs are tailed there from offsets and copied into
the local work_dir at the end, with the result files the job wrote."""

from __future__ import annotations

import contextlib
import errno
import os
import posixpath
import shlex
from collections.abc import Callable, Mapping, Sequence

from scriptast.common.new_files import created_anew
from scriptast.contract.run_record import RunRecord
from scriptast.contract.transport import Transport
from scriptast.contract.work_dir_names import EXIT_FILE, JOB_SPEC, RUN_FILE
from scriptast.errors import RunError
from scriptast.executor.followed_job import Setup
from scriptast.executor.job_files import LoadedJob, destinations_outside, read_regular
from scriptast.executor.log_tail import LineSink, RemoteLogTail, Tail, streamed
from scriptast.executor.log_verdict import LogScanner
from scriptast.schedulers.launching import WRAPPER_ARGV
from scriptast.workdir.files import replace_file

FETCHABLE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-*?[]/")


class RemotePlace:
    """A remote job's cluster side, made once: the transport that reaches it (ssh), the cluster
    work dir, and the cluster path each file emit wrote belongs at."""

    def __init__(self, job: LoadedJob, transport: Transport) -> None:
        self.job = job
        self.transport = transport
        folder = job.spec.remote_work_dir
        if not folder or not folder.startswith("/"):
            raise RunError(f"{job.work_dir}/job_spec.json has no absolute remote_work_dir")
        self._folder = folder
        self.destinations = _destinations(job, folder)
        self.exit_file = posixpath.join(folder, EXIT_FILE)

    @property
    def where(self) -> str | None:
        return self.transport.where

    @property
    def folder(self) -> str:
        return self._folder

    def stage(self) -> None:
        self.check_cluster()
        self.upload()

    def make_folders(self, paths: Sequence[str]) -> None:
        folders = sorted({posixpath.dirname(p) for p in paths if p and posixpath.dirname(p)})
        if folders:
            self.transport.run(["mkdir", "-p", "--", *folders])

    def exists(self, path: str) -> bool:
        quoted = shlex.quote(path)
        return self.transport.run_shell(f"test -e {quoted} || test -L {quoted}").code == 0

    def start(self, argv: Sequence[str], env: Mapping[str, str], out: str, err: str) -> int:
        launch = self.step_command(argv, env, out, err)
        launched = self.transport.run_shell(f"rm -f {shlex.quote(self.exit_file)}; {launch}")
        if launched.code != 0 or not launched.out.strip().isdigit():
            raise RunError(
                f"cannot start {self.script} on {self.transport.where}: {launched.last_line()}"
            )
        return int(launched.out)

    def running(self, pid: int) -> bool:
        quoted = shlex.quote(self.exit_file)
        return self.transport.run_shell(f"test ! -e {quoted} && kill -0 {pid}").code == 0

    def stop(self, pid: int) -> None:
        self.transport.run_shell(f"kill -TERM -- -{pid} 2>/dev/null; true")

    def exit_code(self, pid: int) -> int | None:
        data = self.transport.fetch(self.exit_file)
        return int(data.strip()) if data is not None and data.strip().isdigit() else None

    def local(self, path: str) -> str:
        return self.local_copy(path)

    def setup(self, record: RunRecord, fetch: tuple[str, ...]) -> Setup:
        """How a job followed here reads: its logs tailed over the master and brought back at
        the end with the files `--fetch` names, its result files brought back."""

        def note(line: str) -> None:
            record.notes += (line,)

        logs = sorted({p for p in (record.remote_out_log, record.remote_err_log) if p})
        return Setup(
            open_tail=self.open_tail,
            after_logs=lambda: self.bring_back(logs, fetch, note),
            read_result=self.fetch_result,
            list_results=self.list_results,
        )

    def check_cluster(self) -> None:
        """The cluster answers as the user slurm_env was probed as, has sbatch, and holds the
        checkout; the cluster work dir is created there."""
        job, cluster = self.job, self.transport
        user = job.spec.slurm_env.user if job.spec.slurm_env else None
        who = cluster.run(["id", "-un"])
        if user and who.code == 0 and who.out.strip() != user:
            raise RunError(
                f"{cluster.where} logs in as {who.out.strip()!r}, but slurm_env.json was probed as "
                f"{user!r}: submit as that user (a User line in the ssh config) or probe again"
            )
        if cluster.run(["sbatch", "--version"]).code != 0:
            raise RunError(
                f"sbatch is not installed on {cluster.where} (is Slurm's client on its PATH?)"
            )
        repo = job.spec.remote_repo_path
        if repo and cluster.run(["test", "-d", repo]).code != 0:
            raise RunError(
                f"remote_repo_path {repo} does not exist on {cluster.where}: clone TensorRT-LLM "
                "there first (the job installs it from there)"
            )
        made = cluster.run(["mkdir", "-p", "--", self.folder])
        if made.code != 0:
            raise RunError(
                f"remote_work_dir {self.folder} cannot be created on {cluster.where}: "
                f"{made.last_line()}"
            )

    def upload(self) -> None:
        """Send every file to its cluster path (a temporary name, then a rename, so a half-sent
        file is never run), then check each one's sha256 there against job_spec's `files`."""
        for local, remote in self.destinations.items():
            expected = self.job.spec.files.get(posixpath.relpath(local, self.job.work_dir))
            sent = self.transport.put(
                remote,
                read_regular(local, "file", follow_links=False),
                executable=os.access(local, os.X_OK),
                sha256=expected,
            )
            if sent.code != 0:
                raise RunError(
                    f"cannot write {remote} on {self.transport.where}: {sent.last_line()}"
                )
        summed = self.transport.run(["sha256sum", "--", *self.destinations.values()])
        found = {}
        for line in summed.out.splitlines():
            digest, _, name = line.partition("  ")
            found[name] = digest
        for local, remote in self.destinations.items():
            expected = self.job.spec.files.get(posixpath.relpath(local, self.job.work_dir))
            if expected is None or found.get(remote) != expected:
                raise RunError(
                    f"{remote} on {self.transport.where} does not hold what emit wrote (sha256 "
                    f"{found.get(remote, 'missing')}, expected {expected}): not submitted"
                )

    @property
    def script(self) -> str:
        """The script's path on the cluster."""
        return self.destinations[self.job.script]

    def local_copy(self, remote: str) -> str:
        """Where a cluster file is brought back to: the local work_dir, by its name."""
        return posixpath.join(self.job.work_dir, posixpath.basename(remote))

    def open_tail(self, path: str, scanner: LogScanner, sink: LineSink) -> Tail:
        """The cluster log at `path`, tailed over the master."""
        return RemoteLogTail(path, scanner, sink, self.transport)

    def bring_back(self, remotes: list[str], patterns: tuple[str, ...],
                   note: Callable[[str], None]) -> None:  # fmt: skip
        """Copy the job's logs and the files `--fetch` patterns name on the cluster into the
        local work_dir."""
        wanted = list(remotes)
        for pattern in patterns:
            if not set(pattern) <= FETCHABLE or pattern.startswith("/") or ".." in pattern:
                note(f"--fetch {pattern!r} skipped: only a relative glob of plain characters")
                continue
            wanted += self._listed(self.folder, pattern, links=True)
        for remote in wanted:
            target = self.local_copy(remote)
            if self._emits(target):
                note(f"{remote} not brought back: it would replace {target} (emit's or run's)")
                continue
            if not self._copy_back(remote, target):
                note(f"{remote} was not on {self.transport.where} to bring back")

    def _copy_back(self, remote: str, target: str) -> bool:
        """A cluster file streamed into a temporary beside `target` (created anew, never
        through a link), renamed once whole; False when the cluster has no such regular
        file."""
        os.makedirs(posixpath.dirname(target), exist_ok=True)
        folder, name = posixpath.split(target)
        temporary = posixpath.join(folder, f".{name}.scriptast-{os.getpid()}.part")
        descriptor = created_anew(temporary)
        try:
            with os.fdopen(descriptor, "wb") as stream:
                quoted = shlex.quote(remote)
                whole = streamed(self.transport, f"test -f {quoted} && test ! -L {quoted} && "
                                 f"exec cat -- {quoted}", stream.write)  # fmt: skip
            if whole:
                os.replace(temporary, target)
                return True
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
        return False

    def _emits(self, target: str) -> bool:
        """`target` is a file of the work dir that a file brought back must never replace:
        job_spec.json, run.json, run.exit, or one emit wrote."""
        relative = posixpath.relpath(target, self.job.work_dir)
        return relative in (JOB_SPEC, RUN_FILE, EXIT_FILE) or relative in self.job.spec.files

    def fetch_result(self, remote: str) -> bytes:
        """A result file the job wrote on the cluster (JUnit XML, a bench report), brought back
        into the local work_dir; FileNotFoundError when the cluster has none there, OSError
        when it is older than the script uploaded for this run (both by the cluster's clock)."""
        times = self.transport.run(["stat", "-c", "%Y", "--", self.script, remote])
        stamps = times.out.split()
        dated = times.code == 0 and len(stamps) == 2 and all(t.isdigit() for t in stamps)
        if dated and int(stamps[1]) < int(stamps[0]):
            raise OSError(errno.ESTALE, "it was written before this run (an earlier run's)")
        data = self.transport.fetch(remote)
        if data is None:
            raise FileNotFoundError(errno.ENOENT, f"not on {self.transport.where}")
        relative = posixpath.relpath(remote, self.folder)
        # two clients' logs share a name in different test folders: keep the folders
        inside = relative != ".." and not relative.startswith("../")
        target = posixpath.join(self.job.work_dir, relative) if inside else self.local_copy(remote)
        if self._emits(target):
            raise OSError(errno.EPERM, f"it would replace {target}, which emit or run wrote")
        os.makedirs(posixpath.dirname(target), exist_ok=True)
        replace_file(target, data)
        return data

    def list_results(self, pattern: str) -> list[str]:
        """The regular files (not links) a result glob of job_spec matches on the cluster:
        its folders part quoted, its glob part plain characters only."""
        fixed = pattern.partition("*")[0]
        folder = posixpath.dirname(fixed)
        wild = pattern[len(folder) :].lstrip("/")
        if not folder.startswith("/") or not set(wild) <= FETCHABLE or ".." in wild:
            raise OSError(errno.EINVAL, "not a result glob scriptast reads on a cluster")
        return self._listed(folder, wild, links=False)

    def _listed(self, folder: str, pattern: str, *, links: bool) -> list[str]:
        """The regular files a glob of plain characters matches in a cluster folder (`links`
        False: symbolic links left out), as cluster paths, sorted."""
        skip_links = "" if links else '[ ! -L "$f" ] && '
        listed = self.transport.run_shell(
            f"cd {shlex.quote(folder)} && for f in {pattern}; do "
            f'[ -f "$f" ] && {skip_links}printf "%s\\n" "$f"; done; true'
        )
        return sorted(posixpath.join(folder, name) for name in listed.out.splitlines() if name)

    def step_command(self, argv: Sequence[str], env: Mapping[str, str], out: str,
                     err: str) -> str:  # fmt: skip
        """The cluster command that starts `argv` through the exit-code wrapper, detached from
        the ssh session (its own session, so that a cancel kills exactly it), and prints its
        pid."""
        assigns = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(env.items()))
        return (
            f"cd {shlex.quote(self.folder)} && "
            f"env {assigns} SCRIPTAST_EXIT_FILE={shlex.quote(self.exit_file)} "
            f"setsid nohup {shlex.join(WRAPPER_ARGV)} {shlex.join(argv)} "
            f">{shlex.quote(out)} 2>{shlex.quote(err)} </dev/null & echo $!"
        )


def _destinations(job: LoadedJob, folder: str) -> dict[str, str]:
    """Each file emit wrote (local path) and the cluster path it belongs at: the script and the
    extra files in the cluster work dir, unless extra_file_destinations names another place."""
    outside = destinations_outside(job)
    if outside:
        raise RunError(
            f"{job.work_dir}/job_spec.json sends files outside remote_work_dir and "
            f"remote_repo_path on the cluster ({', '.join(sorted(outside))}): emit the job again"
        )
    chosen = {job.script: posixpath.join(folder, posixpath.basename(job.script))}
    for extra in job.spec.extra_files:
        chosen[extra] = job.spec.extra_file_destinations.get(
            extra, posixpath.join(folder, posixpath.basename(extra))
        )
    clashes = {d for d in chosen.values() if list(chosen.values()).count(d) > 1}
    if clashes:
        raise RunError(f"two files of {job.work_dir} would go to {', '.join(sorted(clashes))}")
    return chosen
