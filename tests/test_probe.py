"""probe-slurm's parsing, on recorded outputs of scontrol and srun."""

from __future__ import annotations

from scriptast.cluster.probe import (
    build_partitions,
    parse_mpi_list,
    parse_plugin_options,
    parse_records,
    probe,
)

PARTITIONS = """\
PartitionName=batch AllowGroups=ALL Default=YES QoS=N/A MaxTime=04:00:00 Nodes=n[1-2] State=UP TotalCPUs=32 TotalNodes=2
PartitionName=arm AllowGroups=ALL Default=NO MaxTime=8:00:00 Nodes=g1 State=DOWN TotalNodes=1
PartitionName=cpu Default=NO MaxTime=UNLIMITED Nodes=c1 State=UP TotalNodes=1
PartitionName=mixed Default=NO MaxTime=1-00:00:00 Nodes=n1,g1 State=UP TotalNodes=2
"""
NODES = """\
NodeName=n1 Arch=x86_64 CoresPerSocket=1 Gres=gpu:8 NodeAddr=127.0.0.1 OS=Linux 6.1 #1 SMP Partitions=batch,mixed State=IDLE
NodeName=n2 Arch=x86_64 Gres=gpu:h100:8(S:0-1) Partitions=batch State=IDLE
NodeName=g1 Arch=aarch64 Gres=gpu:4 Partitions=arm,mixed State=DOWN Reason=maintenance window
NodeName=c1 Arch=x86_64 Gres=(null) Partitions=cpu State=IDLE
"""
MPI_LIST = """\
MPI plugin types are...
	none
	pmi2
	cray_shasta
	pmix
specific pmix plugin versions available: pmix_v3,pmix_v5,pmix_v4
"""


def test_partitions_from_recorded_scontrol() -> None:
    found = {
        p["name"]: p for p in build_partitions(parse_records(PARTITIONS), parse_records(NODES))
    }
    assert found["batch"] == {
        "name": "batch",
        "state": "up",
        "time_limit": "04:00:00",
        "nodes": "2",
        "arch": "x86_64",
        "gres": "gpu:8",
        "gpus_per_node": 8,
        "requires_gres": True,
    }
    assert (found["arm"]["state"], found["arm"]["arch"], found["arm"]["gpus_per_node"]) == (
        "down",
        "aarch64",
        4,
    )
    assert (found["cpu"]["gres"], found["cpu"]["gpus_per_node"], found["cpu"]["requires_gres"]) == (
        "(null)",
        None,
        False,
    )
    assert found["mixed"]["arch"] is None and found["mixed"]["gpus_per_node"] == 4


def test_mpi_list() -> None:
    mpi = parse_mpi_list(MPI_LIST)
    assert mpi["preferred"] == "pmix_v5"
    assert mpi["available"] == [
        "cray_shasta",
        "none",
        "pmi2",
        "pmix",
        "pmix_v3",
        "pmix_v4",
        "pmix_v5",
    ]
    assert parse_mpi_list("MPI plugin types are...\n\tnone\n\tpmi2\n")["preferred"] is None
    assert parse_mpi_list("MPI plugin types are...\n\tpmix\n")["preferred"] == "pmix"


def test_probe_without_client_tools() -> None:
    env = probe(run=lambda argv: (0, "", ""), which=lambda name: None)
    assert env["errors"] == ["SLURM client tools not found"] and env["partitions"] == []


def test_probe_with_recorded_commands() -> None:
    outputs = {
        ("scontrol", "show", "partition", "-o"): (0, PARTITIONS, ""),
        ("scontrol", "show", "node", "-o"): (0, NODES, ""),
        ("srun", "--mpi=list"): (0, MPI_LIST, ""),
        ("scontrol", "show", "config"): (0, CONFIG, ""),
        ("srun", "--help"): (0, SRUN_HELP, ""),
    }

    def run(argv: list[str]) -> tuple[int, str, str]:
        if argv[0] == "sacctmgr":
            return 0, "coreai_trtllm\nperf_qa\n", ""
        return outputs[tuple(argv)]

    env = probe(run=run, which=lambda name: f"/usr/bin/{name}")
    assert env["default_partition"] == "batch" and env["pmix"]["preferred"] == "pmix_v5"
    assert (
        env["accounts"] == ["coreai_trtllm", "perf_qa"]
        and env["default_account"] == "coreai_trtllm"
    )
    assert env["errors"] == []
    assert (env["cluster_name"], env["probe"]["slurm_version"]) == ("aws-cmh-cs-001", "22.05.8")
    assert env["max_array_size"] == 1001
    assert env["plugin_options"][:2] == [
        {"name": "container-image", "arg": "required"},
        {"name": "container-mounts", "arg": "required"},
    ]


SRUN_HELP = """Usage: srun [OPTIONS(0)... [executable(0) [args(0)...]]] [ : [OPTIONS(N)...]] executable(N) [args(N)...]

Parallel run options:
  -A, --account=name          charge job to specified account
      --whole                 use entire nodes (do not share resources)
  -Z, --no-allocate           don't allocate nodes (must supply -w)

Options provided by plugins:
      --container-image=[USER@][REGISTRY#]IMAGE[:TAG]|PATH
                              [pyxis] the image to use for the container
                              filesystem. Can be either a docker image given as
                              an enroot URI, or a path to a squashfs file on the
                              remote host filesystem.
      --container-mounts=SRC:DST[:FLAGS][,SRC:DST...]
                              [pyxis] bind mount[s] inside the container. Mount
                              flags are separated with "+", e.g. "ro+rprivate"
      --container-workdir=PATH
                              [pyxis] working directory inside the container
      --container-mount-home  [pyxis] bind mount the user's home directory.
                              System-level enroot settings might cause this
                              directory to be already-mounted.
      --image=IMAGE           [shifter] the image to run in

Help options:
  -h, --help                  show this help message
      --usage                 display brief usage message
"""


def test_plugin_options_are_read_from_srun_help() -> None:
    options = parse_plugin_options(SRUN_HELP)
    assert options == [
        {"name": "container-image", "arg": "required"},
        {"name": "container-mounts", "arg": "required"},
        {"name": "container-workdir", "arg": "required"},
        {"name": "container-mount-home", "arg": "no"},
        {"name": "image", "arg": "required"},
    ]
    assert parse_plugin_options(SRUN_HELP.split("Options provided by plugins:")[0]) == []


CONFIG = """Configuration data as of 2026-12-03T22:58:17
AccountingStorageBackupHost = (null)
AuthType                = auth/munge
ClusterName             = aws-cmh-cs-001
MaxArraySize            = 1001
MpiDefault              = none
SLURM_VERSION           = 22.05.8

Cgroup Support Configuration:
AllowedDevicesFile      = /etc/slurm/cgroup_allowed_devices_file.conf
"""


def test_probe_reports_failing_commands() -> None:
    def run(argv: list[str]) -> tuple[int, str, str]:
        if argv[:3] == ["scontrol", "show", "partition"]:
            return 1, "", "slurm_load_partitions: Unable to contact slurm controller"
        return 0, "", ""

    env = probe(run=run, which=lambda name: name)
    assert env["errors"] == [
        "scontrol show partition failed: slurm_load_partitions: Unable to contact slurm controller"
    ]
