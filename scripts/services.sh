#!/usr/bin/env bash
# Project-local PostgreSQL/PostGIS and Redis on loopback: install what is missing, start, stop, status.
# With DATABASE_URL / REDIS_URL set, the matching service is not started (those servers are used instead).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LOCAL="$ROOT/.local"
PGDATA="$LOCAL/pgdata"
PGSOCK="$LOCAL/pgsock"
PGBIN=/usr/lib/postgresql/15/bin
PGPORT="${PGPORT:-55432}"
REDIS_PORT="${REDIS_PORT:-56379}"
REDIS_DIR="$LOCAL/redis"
DEB_PACKAGES=(postgresql-15 postgresql-15-postgis-3 postgis redis-server gdal-bin)

die() { echo "services: $*" >&2; exit 1; }
say() { echo "services: $*"; }

install_packages() {
  local missing=()
  for p in "${DEB_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" -eq 0 ] || die "missing Debian packages (${missing[*]}); run as root, or install them: apt-get install ${missing[*]}"
  say "installing ${missing[*]} (about 20 s)"
  apt-get update -qq >/dev/null || die "apt-get update failed: is the Debian mirror reachable?"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || die "apt-get install ${missing[*]} failed: see apt's output above"
}

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Settings sized for a 2-core, 24 GB machine; read from the environment for other sizes.
pg_settings() {
  echo "-p $PGPORT -k $PGSOCK -c listen_addresses=127.0.0.1 \
-c shared_buffers=${PG_SHARED_BUFFERS:-4GB} -c effective_cache_size=${PG_EFFECTIVE_CACHE_SIZE:-16GB} \
-c work_mem=${PG_WORK_MEM:-32MB} -c maintenance_work_mem=${PG_MAINTENANCE_WORK_MEM:-1GB} \
-c max_connections=200 -c random_page_cost=1.1 -c effective_io_concurrency=200 \
-c max_worker_processes=4 -c max_parallel_workers=2 -c max_parallel_workers_per_gather=1 \
-c max_parallel_maintenance_workers=2 -c wal_level=minimal -c max_wal_senders=0 \
-c max_wal_size=4GB -c checkpoint_timeout=15min -c synchronous_commit=on \
-c jit=off -c log_min_duration_statement=${PG_LOG_MIN_DURATION:-1000}"
}

start_postgres() {
  if [ -n "${DATABASE_URL:-}" ]; then say "DATABASE_URL is set: using that server"; return 0; fi
  mkdir -p "$LOCAL"
  chmod 755 "$ROOT" "$LOCAL"
  if [ -f "$PGDATA/postmaster.pid" ] && runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1; then
    say "postgres already running on 127.0.0.1:$PGPORT"; return 0
  fi
  port_busy "$PGPORT" && die "port $PGPORT is taken by another program: stop it, or set PGPORT=<free port>"
  if [ ! -f "$PGDATA/PG_VERSION" ]; then
    install -d -o postgres -g postgres -m 700 "$PGDATA"
    runuser -u postgres -- "$PGBIN/initdb" -D "$PGDATA" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null \
      || die "initdb failed in $PGDATA"
  fi
  install -d -o postgres -g postgres -m 755 "$PGSOCK" "$LOCAL/pglog"
  runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDATA" -l "$LOCAL/pglog/postgres.log" -o "$(pg_settings)" -w -t 60 start >/dev/null \
    || die "postgres did not start: see $LOCAL/pglog/postgres.log"
  say "postgres on 127.0.0.1:$PGPORT"
}

start_redis() {
  if [ -n "${REDIS_URL:-}" ]; then say "REDIS_URL is set: using that server"; return 0; fi
  mkdir -p "$REDIS_DIR"
  if redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1; then say "redis already running on 127.0.0.1:$REDIS_PORT"; return 0; fi
  port_busy "$REDIS_PORT" && die "port $REDIS_PORT is taken by another program: stop it, or set REDIS_PORT=<free port>"
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --daemonize yes --pidfile "$REDIS_DIR/redis.pid" \
    --dir "$REDIS_DIR" --logfile "$REDIS_DIR/redis.log" --appendonly yes --appendfsync everysec \
    --save "" >/dev/null || die "redis did not start: see $REDIS_DIR/redis.log"
  for _ in $(seq 50); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
  redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 || die "redis did not start: see $REDIS_DIR/redis.log"
  say "redis on 127.0.0.1:$REDIS_PORT"
}

stop_all() {
  if [ -f "$PGDATA/postmaster.pid" ]; then
    runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null && say "postgres stopped"
  fi
  if redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1; then
    redis-cli -p "$REDIS_PORT" shutdown >/dev/null 2>&1 || true; say "redis stopped"
  fi
}

case "${1:-start}" in
  install) install_packages ;;
  start) install_packages; start_postgres; start_redis ;;
  stop) stop_all ;;
  status)
    runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDATA" status 2>/dev/null | head -1 || echo "postgres: not running"
    redis-cli -p "$REDIS_PORT" ping 2>/dev/null || echo "redis: not running" ;;
  *) die "usage: scripts/services.sh install|start|stop|status" ;;
esac
