#!/usr/bin/env bash
# Project-local PostgreSQL/PostGIS and Redis on loopback: install what is missing, start, stop, status, clean;
# install-bench installs the load generator the benchmarks use (wrk); install-test what the tests need beyond the
# services: the Chromium the page tests drive, and promtool (Debian's prometheus package) that checks /metrics.
# With DATABASE_URL / REDIS_URL set, the matching service is not started (those servers are used instead).
#
# PostgreSQL runs as the `postgres` user, which cannot enter a clone in a private folder (root's home is 0700 on
# Debian, so is every `mktemp -d`). Its cluster therefore lives in a folder named after this clone's path under
# PG_DIR (by default in the postgres user's home), so two clones never share a cluster. Redis runs as root and keeps
# its files in the clone's .local/redis. Every failure says its cause and its fix in one line.
#
# `start` records the settings it started the services with in .local/env (scripts/local-env.sh), which this script,
# every make target and every CLI of the clone read for what the environment leaves unset: a later `make status`,
# `make stop` or `npm run admin` without PGPORT still finds this clone's services, not another clone's.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd -P)
# shellcheck source=scripts/local-env.sh
. "$ROOT/scripts/local-env.sh"
LOCAL="$ROOT/.local"
PGBIN=/usr/lib/postgresql/15/bin
PGPORT="${PGPORT:-55432}"
REDIS_PORT="${REDIS_PORT:-56379}"
CLONE_ID="$(basename "$ROOT" | tr -c 'A-Za-z0-9_.\n-' '_')-$(printf '%s' "$ROOT" | sha256sum | cut -c1-10)"
PG_DIR="${PG_DIR:-/var/lib/postgresql/florida}"
CLUSTER="$PG_DIR/$CLONE_ID"
PGDATA="$CLUSTER/data"
PGSOCK="$CLUSTER/sock"
PGLOG="$CLUSTER/postgres.log"
REDIS_DIR="$LOCAL/redis"
REDIS_PID="$REDIS_DIR/redis.pid"
DEB_PACKAGES=(postgresql-15 postgresql-15-postgis-3 postgis redis-server redis-sentinel gdal-bin)
BENCH_PACKAGES=(wrk)
TEST_PACKAGES=(chromium fonts-dejavu-core prometheus)
MIN_FREE_MB=500

die() { echo "services: $*" >&2; exit 1; }
say() { echo "services: $*"; }

install_packages() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" -eq 0 ] || die "Debian packages missing (${missing[*]}): run as root, or first run: apt-get install ${missing[*]}"
  say "installing ${missing[*]} (about 20 s)"
  apt-get update -qq >/dev/null || die "apt-get update failed: check that the Debian mirror in /etc/apt/sources.list is reachable"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || die "apt-get install ${missing[*]} failed (see apt's output above): fix apt, then run make again"
}

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Exits when the file system holding $1 has less than MIN_FREE_MB free.
need_space() {
  local dir=$1 free_mb
  free_mb=$(df -Pm "$dir" | awk 'NR == 2 { print $4 }')
  [ "${free_mb:-0}" -ge "$MIN_FREE_MB" ] \
    || die "disk full: ${free_mb:-0} MB free at $dir (needs $MIN_FREE_MB): free space, or set PG_DIR to a folder on another disk"
}

# One line saying why a PostgreSQL program failed, from its output or log, with the fix.
explain_pg_failure() {
  local what=$1 text=$2
  case "$text" in
    *"No space left"*) die "$what failed, disk full at $CLUSTER: free space, or set PG_DIR to a folder on another disk" ;;
    *"Permission denied"*) die "$what failed, permission denied in $CLUSTER: the postgres user must be able to enter every folder above it; set PG_DIR to such a folder" ;;
    *"could not bind"* | *"Address already in use"*) die "$what failed, port $PGPORT is taken: stop that program, or set PGPORT=<free port>" ;;
    *"shared memory"*) die "$what failed, not enough shared memory: set PG_SHARED_BUFFERS lower (for example 512MB)" ;;
    *)
      local line
      line=$(printf '%s\n' "$text" | grep -E -m1 'FATAL|ERROR|error:' || printf '%s\n' "$text" | grep -v '^\s*$' | tail -1)
      die "$what failed: ${line} (full log: $PGLOG)" ;;
  esac
}

# Settings sized for a 2-core, 24 GB machine; read from the environment for other sizes. wal_level=replica and the
# WAL senders let streaming replicas (scripts/replica.sh, `make replica`) copy and follow this cluster.
pg_settings() {
  echo "-p $PGPORT -k $PGSOCK -c listen_addresses=127.0.0.1 \
-c shared_buffers=${PG_SHARED_BUFFERS:-4GB} -c effective_cache_size=${PG_EFFECTIVE_CACHE_SIZE:-16GB} \
-c work_mem=${PG_WORK_MEM:-32MB} -c maintenance_work_mem=${PG_MAINTENANCE_WORK_MEM:-1GB} \
-c max_connections=200 -c random_page_cost=1.1 -c effective_io_concurrency=200 \
-c max_worker_processes=4 -c max_parallel_workers=2 -c max_parallel_workers_per_gather=1 \
-c max_parallel_maintenance_workers=2 -c wal_level=replica -c max_wal_senders=10 \
-c max_wal_size=4GB -c checkpoint_timeout=15min -c synchronous_commit=on \
-c jit=off -c log_min_duration_statement=${PG_LOG_MIN_DURATION:-1000}"
}

as_postgres() { (cd / && runuser -u postgres -- "$@"); }
postgres_running() { [ -f "$PGDATA/postmaster.pid" ] && as_postgres "$PGBIN/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1; }
# The port the running cluster listens on (line 4 of postmaster.pid), whatever PGPORT says now.
postgres_port() { sed -n 4p "$PGDATA/postmaster.pid" 2>/dev/null; }

start_postgres() {
  if [ -n "${DATABASE_URL:-}" ]; then say "DATABASE_URL is set: using that server"; return 0; fi
  [ -x "$PGBIN/initdb" ] || die "PostgreSQL 15 is not installed ($PGBIN/initdb is missing): apt-get install postgresql-15"
  getent passwd postgres >/dev/null || die "the postgres user is missing: apt-get install --reinstall postgresql-15"
  if postgres_running; then
    [ "$(postgres_port)" = "$PGPORT" ] \
      || die "this clone's postgres already runs on port $(postgres_port), not PGPORT=$PGPORT: unset PGPORT (or set it to $(postgres_port)), or make stop first"
    say "postgres already running on 127.0.0.1:$PGPORT"
    return 0
  fi
  port_busy "$PGPORT" && die "port $PGPORT is taken by another program (another clone's PostgreSQL?): stop it, or set PGPORT=<free port>"
  mkdir -p "$PG_DIR" || die "cannot create $PG_DIR: set PG_DIR to a folder root can write and postgres can enter"
  need_space "$PG_DIR"
  # only this clone's own folder is made the postgres user's; PG_DIR itself is left as it is
  install -d -o postgres -g postgres -m 700 "$CLUSTER" "$PGDATA" \
    || die "cannot create $CLUSTER: set PG_DIR to a folder root can write and postgres can enter"
  install -d -o postgres -g postgres -m 755 "$PGSOCK"
  as_postgres test -x "$CLUSTER" \
    || die "the postgres user cannot enter $CLUSTER (a folder above it is private): set PG_DIR to a folder it can reach"
  mkdir -p "$LOCAL"
  ln -sfn "$CLUSTER" "$LOCAL/postgres"
  local out
  if [ ! -f "$PGDATA/PG_VERSION" ]; then
    out=$(as_postgres "$PGBIN/initdb" -D "$PGDATA" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 2>&1) \
      || explain_pg_failure "initdb in $PGDATA" "$out"
  fi
  out=$(as_postgres "$PGBIN/pg_ctl" -D "$PGDATA" -l "$PGLOG" -o "$(pg_settings)" -w -t 60 start 2>&1) \
    || explain_pg_failure "starting postgres" "$out
$(tail -5 "$PGLOG" 2>/dev/null)"
  say "postgres on 127.0.0.1:$PGPORT (cluster in $CLUSTER, linked as .local/postgres)"
}

# Our Redis is the one whose pid file names a live redis-server.
redis_pid() {
  local pid
  pid=$(cat "$REDIS_PID" 2>/dev/null) || return 1
  [ -n "$pid" ] && grep -qs redis-server "/proc/$pid/cmdline" && echo "$pid"
}
# The port our Redis listens on, from its process title (redis-server 127.0.0.1:<port>).
redis_port() { tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | sed -n 's/^redis-server [^ ]*:\([0-9]*\).*/\1/p'; }

start_redis() {
  if [ -n "${REDIS_URL:-}" ]; then say "REDIS_URL is set: using that server"; return 0; fi
  command -v redis-server >/dev/null || die "redis-server is not installed: apt-get install redis-server"
  local pid
  if pid=$(redis_pid); then
    [ "$(redis_port "$pid")" = "$REDIS_PORT" ] \
      || die "this clone's redis already runs on port $(redis_port "$pid"), not REDIS_PORT=$REDIS_PORT: unset REDIS_PORT (or set it to $(redis_port "$pid")), or make stop first"
    say "redis already running on 127.0.0.1:$REDIS_PORT"
    return 0
  fi
  port_busy "$REDIS_PORT" && die "port $REDIS_PORT is taken by another program (another clone's Redis?): stop it, or set REDIS_PORT=<free port>"
  mkdir -p "$REDIS_DIR" || die "cannot create $REDIS_DIR: the clone's folder must be writable by root"
  need_space "$REDIS_DIR"
  rm -f "$REDIS_PID"
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --daemonize yes --pidfile "$REDIS_PID" \
    --dir "$REDIS_DIR" --logfile "$REDIS_DIR/redis.log" --appendonly yes --appendfsync everysec \
    --save "" >/dev/null || die "redis did not start: $(tail -1 "$REDIS_DIR/redis.log" 2>/dev/null)"
  for _ in $(seq 50); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
  redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 \
    || die "redis did not answer on port $REDIS_PORT: $(tail -1 "$REDIS_DIR/redis.log" 2>/dev/null) (full log: $REDIS_DIR/redis.log)"
  say "redis on 127.0.0.1:$REDIS_PORT"
}

# Stops this clone's services only: its own cluster, and the Redis its own pid file names.
stop_all() {
  bash "$ROOT/scripts/replica.sh" stop-all
  if postgres_running; then
    as_postgres "$PGBIN/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null && say "postgres stopped"
  fi
  local pid
  if pid=$(redis_pid); then
    kill -TERM "$pid"
    for _ in $(seq 100); do [ -d "/proc/$pid" ] || break; sleep 0.1; done
    if [ -d "/proc/$pid" ]; then say "redis (pid $pid) is still shutting down"; else say "redis stopped"; fi
  fi
}

# What runs, on the ports the processes themselves report (not what the environment says now).
status() {
  local pid
  if [ -n "${DATABASE_URL:-}" ]; then echo "postgres: DATABASE_URL names the server (not a local one)"
  elif postgres_running; then echo "postgres: running on 127.0.0.1:$(postgres_port) (cluster in $CLUSTER)"
  else echo "postgres: not running"; fi
  if [ -n "${REDIS_URL:-}" ]; then echo "redis: REDIS_URL names the server (not a local one)"
  elif pid=$(redis_pid); then echo "redis: running on 127.0.0.1:$(redis_port "$pid")"
  else echo "redis: not running"; fi
}

# .local/env: the settings the services were started with (scripts/local-env.sh reads it), in single quotes.
write_local_env() {
  local name value tmp="$LOCAL/env.$$"
  mkdir -p "$LOCAL"
  {
    echo "# This clone's settings, written when its services start (scripts/services.sh start: make run, make services,"
    echo "# make test). Every make target, script and CLI of the clone reads them; a variable set in the environment wins."
    echo "# In a new shell: set -a; . .local/env; set +a"
    for name in PGPORT REDIS_PORT PORT PG_DIR DATABASE_URL REDIS_URL; do
      case $name in
        PORT) value=${PORT:-3000} ;;
        *) value=${!name:-} ;;
      esac
      [ -n "$value" ] || continue
      case $value in *"'"*) die "$name contains a single quote, which .local/env cannot hold: change it" ;; esac
      echo "$name='$value'"
    done
  } >"$tmp"
  mv "$tmp" "$LOCAL/env"
}

# Stops the services and deletes their data: this clone's cluster (its folder under PG_DIR) and .local/redis, and
# forgets the settings (.local/env): the next start takes them from the environment or the defaults again.
clean() {
  stop_all
  rm -rf "$CLUSTER" "$REDIS_DIR" "$LOCAL/postgres" "$LOCAL/env"
  say "deleted $CLUSTER, $REDIS_DIR and the settings in .local/env"
}

case "${1:-start}" in
  install) install_packages "${DEB_PACKAGES[@]}" ;;
  install-bench) install_packages "${BENCH_PACKAGES[@]}" ;;
  install-test) install_packages "${TEST_PACKAGES[@]}" ;;
  start) install_packages "${DEB_PACKAGES[@]}"; start_postgres; start_redis; write_local_env ;;
  stop) stop_all ;;
  status) status ;;
  clean) clean ;;
  *) die "usage: scripts/services.sh install|install-bench|install-test|start|stop|status|clean" ;;
esac
