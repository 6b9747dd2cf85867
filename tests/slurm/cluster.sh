#!/usr/bin/env bash
# A throw-away two-node Slurm 22.05 cluster on 127.0.0.1 for tests, with a pyxis stand-in.
#   cluster.sh up DIR     install nothing; write configs under DIR, start munged, slurmctld and
#                         two slurmd (n1, n2: 16 CPUs and 8 GPUs each), wait until idle
#   cluster.sh up DIR accounting   the same, with accounting on: MariaDB and slurmdbd in DIR
#   cluster.sh down DIR   stop exactly the daemons that `up` started (their PIDs are in DIR/pids)
# Needs: slurmctld slurmd slurm-client munge libpmix2 libslurm-dev gcc (see install-deps below).
#   cluster.sh install-deps   apt-get the packages when they are missing
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cmd=${1:?usage: cluster.sh up|down|install-deps DIR}

install_deps() {
    # fish is not Slurm's: the shell-quoting tests run it for real; openssh-server is the remote
    # cluster's front door in the tests of `scriptast run` on remote_slurm; slurmdbd and MariaDB
    # turn accounting on (sacct) for the cluster `up DIR accounting` starts; tmux shows what a
    # terminal shows of `scriptast run` (its status line); procps has pgrep, which the remote
    # tests use to see what is left running on the login node; postgresql is the team results
    # store's server (tests/postgres_server.py starts a throw-away one in a temporary folder).
    local wanted=(slurmctld slurmd slurm-client munge libpmix2 libslurm-dev gcc libc6-dev fish
        openssh-server openssh-client slurmdbd mariadb-server tmux procps postgresql)
    local missing=()
    for package in "${wanted[@]}"; do
        dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
    done
    if [ "${#missing[@]}" -gt 0 ]; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
    fi
}

if [ "$cmd" = install-deps ]; then
    install_deps
    exit 0
fi

dir=${2:?usage: cluster.sh up|down DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
# jobs of other users (the tests submit some as nobody) read their script from the spool below
chmod 755 "$dir"
conf="$dir/etc/slurm.conf"

stop() {
    if [ -f "$dir/pids" ]; then
        while read -r pid; do
            kill "$pid" 2>/dev/null || true
        done <"$dir/pids"
        sleep 1
        while read -r pid; do
            kill -9 "$pid" 2>/dev/null || true
        done <"$dir/pids"
        rm -f "$dir/pids"
    fi
    rm -rf "/run/munge/scriptast-$(printf '%s' "$dir" | sha1sum | cut -c1-12)"
}

if [ "$cmd" = down ]; then
    stop
    exit 0
fi
[ "$cmd" = up ] || { echo "unknown command $cmd" >&2; exit 2; }
accounting=${3:-}

stop
rm -rf "$dir/etc" "$dir/state" "$dir/spool" "$dir/log" "$dir/run" "$dir/dev" "$dir/tmp" "$dir/lib" \
    "$dir/db"
mkdir -p "$dir"/{etc,state,spool,log,run,dev,tmp,lib}

# pmix: slurm's plugin dlopens the unversioned libpmix.so beside libpmix.so.2.
pmixso=$(find /usr/lib -name 'libpmix.so.2' -path '*pmix2*' | head -n 1)
[ -n "$pmixso" ] || { echo "error: libpmix.so.2 not found; run: $0 install-deps" >&2; exit 1; }
pmixlib=$(dirname "$pmixso")
[ -e "$pmixlib/libpmix.so" ] || ln -s libpmix.so.2 "$pmixlib/libpmix.so"

# GPUs: gres.conf File= entries must exist, or the node drains; character devices will do.
for gpu in 0 1 2 3 4 5 6 7; do
    mknod "$dir/dev/gpu$gpu" c 1 3
done

# Ports and the munge socket are chosen now, so that two clusters on one machine do not collide.
read -r ctld_port slurmd_port n1_port n2_port db_port dbd_port < <(python3 - <<'PY'
import socket
held = [socket.socket() for _ in range(6)]
for each in held:
    each.bind(("127.0.0.1", 0))
print(*(each.getsockname()[1] for each in held))
PY
)
munge_dir=/run/munge/scriptast-$(printf '%s' "$dir" | sha1sum | cut -c1-12)
munge_socket=$munge_dir/munge.socket
accounting_lines="AccountingStorageType=accounting_storage/none"
if [ "$accounting" = accounting ]; then
    accounting_lines="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$dbd_port
AccountingStoragePass=$munge_socket"
fi

# The pyxis stand-in: a SPANK plugin that accepts pyxis's options and records them per step.
gcc -shared -fPIC -O1 -Wall -o "$dir/lib/fakepyxis.so" "$here/fakepyxis.c"

cat >"$conf" <<CONF
ClusterName=scriptast
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$munge_socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
TmpFS=$dir/tmp
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
SlurmdParameters=config_overrides
EnforcePartLimits=ALL
$accounting_lines
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MinJobAge=600
ReturnToService=2
PlugStackConfig=$dir/etc/plugstack.conf
NodeName=n1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$n1_port CPUs=16 RealMemory=4000 Gres=gpu:8 State=UNKNOWN
NodeName=n2 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$n2_port CPUs=16 RealMemory=4000 Gres=gpu:8 State=UNKNOWN
PartitionName=batch Nodes=n1,n2 Default=YES MaxTime=04:00:00 State=UP
PartitionName=short Nodes=n1,n2 MaxTime=00:30:00 State=UP
CONF
cat >"$dir/etc/gres.conf" <<CONF
NodeName=n[1-2] Name=gpu File=$dir/dev/gpu[0-7]
CONF
echo "optional $dir/lib/fakepyxis.so log=$dir/pyxis.jsonl" >"$dir/etc/plugstack.conf"
: >"$dir/pyxis.jsonl"
chmod 666 "$dir/pyxis.jsonl"

# munge, as the munge user, on a socket of this cluster's own. Its files live under /run/munge
# (the munge user cannot enter a private temporary folder).
[ -s /etc/munge/munge.key ] || mungekey --create --keyfile=/etc/munge/munge.key
mkdir -p /run/munge && chown munge:munge /run/munge && chmod 755 /run/munge
mkdir -p "$munge_dir" && chown munge:munge "$munge_dir" && chmod 755 "$munge_dir"
rm -f "$munge_socket" "$munge_socket.lock"
setpriv --reuid=munge --regid=munge --init-groups \
    munged --foreground --socket="$munge_socket" --pid-file="$munge_dir/munged.pid" \
    --log-file="$munge_dir/munged.log" --seed-file="$munge_dir/munged.seed" \
    </dev/null >/dev/null 2>&1 &
echo $! >>"$dir/pids"
for _ in $(seq 50); do
    munge --socket="$munge_socket" -n </dev/null 2>/dev/null |
        unmunge --socket="$munge_socket" >/dev/null 2>&1 && break
    sleep 0.1
done

export SLURM_CONF="$conf"
if [ "$accounting" = accounting ]; then
    # MariaDB in DIR as root, then slurmdbd (it reads slurmdbd.conf beside SLURM_CONF), then
    # the cluster registered, all before slurmctld starts.
    mkdir -p "$dir/db"
    mariadb-install-db --no-defaults --datadir="$dir/db" --user=root \
        --auth-root-authentication-method=normal >"$dir/log/mariadb-install.log" 2>&1
    mariadbd --no-defaults --datadir="$dir/db" --user=root --socket="$dir/run/mysql.sock" \
        --port="$db_port" --bind-address=127.0.0.1 --pid-file="$dir/run/mysqld.pid" \
        --skip-log-bin </dev/null >"$dir/log/mariadb.log" 2>&1 &
    echo $! >>"$dir/pids"
    for _ in $(seq 100); do
        mariadb --no-defaults -S "$dir/run/mysql.sock" -uroot -e "select 1" >/dev/null 2>&1 && break
        sleep 0.2
    done
    mariadb --no-defaults -S "$dir/run/mysql.sock" -uroot -e \
        "CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'scriptast'; GRANT ALL ON *.* TO 'slurm'@'127.0.0.1';"
    cat >"$dir/etc/slurmdbd.conf" <<CONF
AuthType=auth/munge
AuthInfo=socket=$munge_socket
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$dbd_port
SlurmUser=root
PidFile=$dir/run/slurmdbd.pid
LogFile=$dir/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$db_port
StorageUser=slurm
StoragePass=scriptast
StorageLoc=slurm_acct_db
CONF
    chmod 600 "$dir/etc/slurmdbd.conf"
    slurmdbd -D </dev/null >"$dir/log/slurmdbd.stdout" 2>&1 &
    echo $! >>"$dir/pids"
    for _ in $(seq 50); do
        timeout 10 sacctmgr -i add cluster scriptast >>"$dir/log/sacctmgr.log" 2>&1 && break
        sleep 0.2
    done
fi
slurmctld -D -f "$conf" </dev/null >"$dir/log/slurmctld.stdout" 2>&1 &
echo $! >>"$dir/pids"
for node in n1 n2; do
    slurmd -D -N "$node" -f "$conf" </dev/null >"$dir/log/slurmd-$node.stdout" 2>&1 &
    echo $! >>"$dir/pids"
done

for _ in $(seq 100); do
    while read -r pid; do
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "a daemon (pid $pid) died while starting; logs in $dir/log and $munge_dir" >&2
            tail -n 5 "$dir"/log/*.log "$munge_dir/munged.log" >&2 2>/dev/null || true
            exit 1
        fi
    done <"$dir/pids"
    if [ "$(timeout 5 sinfo -h -N -o '%t' 2>/dev/null | grep -c idle)" -ge 4 ]; then
        echo "$conf"
        exit 0
    fi
    sleep 0.3
done
echo "the cluster did not come up; logs in $dir/log" >&2
sinfo -N >&2 || true
exit 1
