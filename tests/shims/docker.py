"""A stand-in for docker that behaves like `docker run` and `docker kill` on a host without a
daemon: `version` answers for the daemon (down or refusing with $SHIM_DOCKER_DAEMON), `run`
records its argv, refuses a name already in use and an image listed in
$SHIM_DOCKER_MISSING (exit 125, docker's words), runs the command on this host with the -e
variables set (no container) under its --name, and exits with the command's code (137 when it
was killed); `kill NAME` kills only that container's processes."""

import json
import os
import signal
import subprocess
import sys

TAKES_VALUE = {"--security-opt", "-e", "--mount", "--workdir", "--name"}


def _state() -> str:
    folder = os.environ.get("SHIM_DOCKER_STATE") or os.path.join(
        os.path.dirname(os.environ["SHIM_LOG"]), "docker-state"
    )
    os.makedirs(folder, exist_ok=True)
    return folder


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _running(name: str) -> int | None:
    path = os.path.join(_state(), name)
    try:
        with open(path, encoding="ascii") as stream:
            pid = int(stream.read())
    except (OSError, ValueError):
        return None
    return pid if _alive(pid) else None


def run(args: list[str]) -> int:
    index = 1
    env = dict(os.environ)
    name = None
    while args[index].startswith("-"):
        if args[index] in TAKES_VALUE:
            if args[index] == "-e":
                key, _, value = args[index + 1].partition("=")
                env[key] = value
            if args[index] == "--name":
                name = args[index + 1]
            index += 2
        else:
            index += 1
    image, command = args[index], args[index + 1 :]
    with open(os.environ["SHIM_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps({"prog": "docker", "argv": args, "image": image}) + "\n")
    if image in os.environ.get("SHIM_DOCKER_MISSING", "").split(","):
        print(f"Unable to find image '{image}' locally", file=sys.stderr)
        print(
            f"docker: Error response from daemon: pull access denied for {image}, repository "
            "does not exist or may require 'docker login'.",
            file=sys.stderr,
        )
        return 125
    if name and _running(name) is not None:
        print(
            f'docker: Error response from daemon: Conflict. The container name "/{name}" is '
            "already in use. You have to remove (or rename) that container to be able to reuse "
            "that name.",
            file=sys.stderr,
        )
        return 125
    child = subprocess.Popen(command, env=env, start_new_session=True)
    record = os.path.join(_state(), name) if name else None
    if record:
        with open(record, "w", encoding="ascii") as stream:
            stream.write(str(child.pid))
    try:
        code = child.wait()
    finally:
        if record:
            os.unlink(record)
    return 128 - code if code < 0 else code


def kill(args: list[str]) -> int:
    failed = 0
    for name in args[1:]:
        pid = _running(name)
        if pid is None:
            print(f"Error response from daemon: No such container: {name}", file=sys.stderr)
            failed = 1
            continue
        os.killpg(pid, signal.SIGKILL)
        print(name)
    return failed


DAEMON_DOWN = ("Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker "
               "daemon running?")  # fmt: skip
DAEMON_DENIED = (
    "permission denied while trying to connect to the Docker daemon socket at "
    'unix:///var/run/docker.sock: Get "http://%2Fvar%2Frun%2Fdocker.sock/v1.24/version": dial '
    "unix /var/run/docker.sock: connect: permission denied"
)


def version(args: list[str]) -> int:
    """`docker version --format {{.Server.Version}}`: the daemon's version, or docker's words
    when $SHIM_DOCKER_DAEMON is `down` or `denied`."""
    said = {"down": DAEMON_DOWN, "denied": DAEMON_DENIED}.get(
        os.environ.get("SHIM_DOCKER_DAEMON", "")
    )
    if said:
        print(said, file=sys.stderr)
        return 1
    print("27.3.1")
    return 0


def main() -> int:
    args = sys.argv[1:]
    if args[:1] == ["kill"]:
        return kill(args)
    if args[:1] == ["version"]:
        return version(args)
    assert args[0] == "run", args
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
