"""A stand-in for `docker run`: records its argv, skips the options and the image, and runs the
command on this host with the -e variables set (no container)."""

import json
import os
import subprocess
import sys

TAKES_VALUE = {"--security-opt", "-e", "--mount", "--workdir", "--name"}


def main() -> int:
    args = sys.argv[1:]
    assert args[0] == "run", args
    index = 1
    env = dict(os.environ)
    while args[index].startswith("-"):
        if args[index] in TAKES_VALUE:
            if args[index] == "-e":
                key, _, value = args[index + 1].partition("=")
                env[key] = value
            index += 2
        else:
            index += 1
    image, command = args[index], args[index + 1 :]
    with open(os.environ["SHIM_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps({"prog": "docker", "argv": args, "image": image}) + "\n")
    return subprocess.run(command, env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
