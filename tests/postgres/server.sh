#!/usr/bin/env bash
# A throw-away PostgreSQL server for the results store's tests and bench: Debian's initdb and
# pg_ctl, run as the unprivileged user the package makes (postgres) when this runs as root, in
# DIR, on a free loopback port, trust authentication for the user scriptast.
#   server.sh up DIR [durable]   start it; prints its port (durable: with fsync)
#   server.sh down DIR           stop it (by pg_ctl, which signals the server's own pid)
set -euo pipefail
cmd=${1:?usage: server.sh up|down DIR [durable]}
dir=${2:?usage: server.sh up|down DIR [durable]}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -x "$bin/pg_ctl" ] || { echo "error: no PostgreSQL server here: apt-get install postgresql" >&2; exit 1; }

as_user() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

if [ "$cmd" = down ]; then
    as_user "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    exit 0
fi

mkdir -p "$dir"
[ "$(id -u)" = 0 ] && chown postgres:postgres "$dir"
as_user "$bin/initdb" -D "$dir/data" --auth=trust --username=scriptast --encoding=UTF8 \
    --no-sync >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
options="-p $port -k $dir -c listen_addresses=127.0.0.1"
[ "${3:-}" = durable ] || options="$options -c fsync=off"
as_user "$bin/pg_ctl" -D "$dir/data" -o "$options" -l "$dir/server.log" -w start >/dev/null \
    || { cat "$dir/server.log" >&2; exit 1; }
echo "$port"
