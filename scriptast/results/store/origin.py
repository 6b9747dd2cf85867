"""What the store learns of a run besides job_spec and run.json: the TRT-LLM commit its
checkout was at (`git rev-parse HEAD`, read from the checkout's .git files without running
git in it), job_spec.json's digest, the user and the cluster."""

from __future__ import annotations

import hashlib
import os
import posixpath
import pwd
import re
import socket
from collections.abc import Callable

from scriptast.contract.job_spec import JobSpec
from scriptast.results.store.rows import Origin

Fetch = Callable[[str], bytes | None]
_SHA = re.compile(rb"[0-9a-f]{40}(?:[0-9a-f]{24})?")


def head_commit(repo: str, fetch: Fetch) -> str | None:
    """The commit HEAD names in the checkout `repo` (a worktree's `.git` file followed to its
    git dir), or None when it cannot be told."""
    git = posixpath.join(repo, ".git")
    pointer = fetch(git)
    if pointer is not None and pointer.startswith(b"gitdir: "):  # a worktree or submodule
        target = pointer[len(b"gitdir: ") :].strip().decode(errors="replace")
        git = posixpath.normpath(posixpath.join(repo, target))
    head = fetch(posixpath.join(git, "HEAD"))
    if head is None:
        return None
    head = head.strip()
    if _SHA.fullmatch(head):
        return head.decode()
    if not head.startswith(b"ref: "):
        return None
    ref = head[len(b"ref: ") :].decode(errors="replace")
    if ".." in ref.split("/") or not ref.startswith("refs/"):
        return None
    common = fetch(posixpath.join(git, "commondir"))
    roots = [git]
    if common is not None:
        roots.append(posixpath.normpath(posixpath.join(git, common.strip().decode())))
    for root in roots:
        loose = fetch(posixpath.join(root, ref))
        if loose is not None and _SHA.fullmatch(loose.strip()):
            return loose.strip().decode()
        packed = fetch(posixpath.join(root, "packed-refs")) or b""
        for line in packed.splitlines():
            sha, _, name = line.partition(b" ")
            if name.decode(errors="replace") == ref and _SHA.fullmatch(sha):
                return sha.decode()
    return None


def origin_of(spec: JobSpec, spec_text: bytes | None, fetch: Fetch, remote_fetch: Fetch | None,
              host: str | None, stored_at: str) -> Origin:  # fmt: skip
    """The run's origin: the commit of `repo_root` (on this machine) or of `remote_repo_path`
    (on the cluster, through `remote_fetch`)."""
    commit = None
    if spec.remote_repo_path and remote_fetch is not None:
        commit = head_commit(spec.remote_repo_path, remote_fetch)
    elif spec.repo_root:
        commit = head_commit(spec.repo_root, fetch)
    env = spec.slurm_env
    cluster = (env.cluster_name if env else None) or host or socket.gethostname()
    try:  # the account this runs as, not $USER or $LOGNAME (getpass reads those first)
        user: str | None = pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        user = None
    return Origin(
        spec_digest=hashlib.sha256(spec_text).hexdigest() if spec_text is not None else None,
        trtllm_commit=commit,
        user_name=user,
        cluster=cluster,
        stored_at=stored_at,
    )
