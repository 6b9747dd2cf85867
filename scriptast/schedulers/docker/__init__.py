"""The docker backend: a category's steps as one `docker run` (docker_cmd.sh) on this host, run as
a process whose exit code is the job's."""
