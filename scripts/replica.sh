#!/usr/bin/env bash
# Local streaming replicas of this clone's PostgreSQL (`make replica`), to try DATABASE_REPLICA_URLS on one machine:
# pg_basebackup -R copies the running cluster (scripts/services.sh) into a data directory of the replica's own,
# $PG_DIR/<clone>/replica-<port>, and the copy runs as a hot standby on its own port, following the primary through
# a replication slot of its own (replica_<port>), which `clean` drops.
#   scripts/replica.sh start|stop|status|clean [--port N]    (default port 55433)
#   scripts/replica.sh stop-all                               (every replica of this clone; `make stop` runs it)
# The primary is the project-local cluster on PGPORT (.local/env's, or 55432); with DATABASE_URL set there is none to copy.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd -P)
# this clone's PGPORT and PG_DIR when the environment does not set them (.local/env)
# shellcheck source=scripts/local-env.sh
. "$ROOT/scripts/local-env.sh"
PGBIN=/usr/lib/postgresql/15/bin
PGPORT="${PGPORT:-55432}"
CLONE_ID="$(basename "$ROOT" | tr -c 'A-Za-z0-9_.\n-' '_')-$(printf '%s' "$ROOT" | sha256sum | cut -c1-10)"
PG_DIR="${PG_DIR:-/var/lib/postgresql/florida}"
CLUSTER="$PG_DIR/$CLONE_ID"

die() { echo "replica: $*" >&2; exit 1; }
say() { echo "replica: $*"; }

command="${1:-start}"
shift || true
PORT=55433
while [ $# -gt 0 ]; do
  case "$1" in
    --port) PORT="${2:-}"; shift 2 || die "--port needs a number" ;;
    --port=*) PORT="${1#--port=}"; shift ;;
    *) die "unknown argument $1 (usage: scripts/replica.sh start|stop|status|clean [--port N])" ;;
  esac
done
[[ "$PORT" =~ ^[0-9]+$ ]] && [ "$PORT" -ge 1024 ] && [ "$PORT" -le 65535 ] || die "--port must be a port number (1024-65535)"
[ "$PORT" != "$PGPORT" ] || die "--port $PORT is the primary's port: choose another"

RDIR="$CLUSTER/replica-$PORT"
RDATA="$RDIR/data"
RSOCK="$RDIR/sock"
RLOG="$RDIR/postgres.log"
SLOT="replica_$PORT"

as_postgres() { (cd / && runuser -u postgres -- "$@"); }
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
running() { [ -f "$1/postmaster.pid" ] && as_postgres "$PGBIN/pg_ctl" -D "$1" status >/dev/null 2>&1; }
# psql as the superuser on the primary (replication and slot administration need it)
primary_sql() { "$PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PGPORT" -U postgres -d postgres -c "$1"; }
replica_sql() { "$PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -c "$1"; }

# The line to give the API: its own role and database, on the replica's port.
url_line() { echo "DATABASE_REPLICA_URLS=postgres://api_reader@127.0.0.1:$PORT/florida"; }

drop_slot() {
  primary_sql "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '$SLOT' AND NOT active" \
    >/dev/null 2>&1 || true
}

start() {
  [ -z "${DATABASE_URL:-}" ] || die "DATABASE_URL is set: this script copies the project-local cluster only (docs/deploy.md describes replicas of another server)"
  [ -x "$PGBIN/pg_basebackup" ] || die "PostgreSQL 15 is not installed ($PGBIN/pg_basebackup is missing): run make services"
  if running "$RDATA"; then
    say "already running on 127.0.0.1:$PORT"
    url_line
    return 0
  fi
  local settings
  settings=$(primary_sql "SELECT string_agg(name || '=' || setting, ' ' ORDER BY name) FROM pg_settings
    WHERE name IN ('wal_level', 'max_wal_senders', 'max_connections', 'max_worker_processes',
                   'max_prepared_transactions', 'max_locks_per_transaction')" 2>&1) \
    || die "the primary on 127.0.0.1:$PGPORT does not answer ($settings): start it with make services"
  case " $settings " in
    *" wal_level=minimal "* | *" max_wal_senders=0 "*)
      die "the primary on 127.0.0.1:$PGPORT runs without replication ($settings): restart it with the settings of scripts/services.sh (make stop, then make services)" ;;
  esac
  port_busy "$PORT" && die "port $PORT is taken by another program: stop it, or use --port <free port>"
  [ -d "$CLUSTER" ] || die "no cluster in $CLUSTER: start the project's PostgreSQL first (make services)"
  install -d -o postgres -g postgres -m 700 "$RDIR"
  install -d -o postgres -g postgres -m 755 "$RSOCK"
  if [ ! -f "$RDATA/PG_VERSION" ]; then
    rm -rf "$RDATA"
    drop_slot # left by a copy that did not finish
    say "copying the primary (pg_basebackup) into $RDATA"
    local out
    out=$(as_postgres "$PGBIN/pg_basebackup" -h 127.0.0.1 -p "$PGPORT" -U postgres -D "$RDATA" -R -X stream \
      -C -S "$SLOT" --checkpoint=fast 2>&1) || { rm -rf "$RDATA"; drop_slot; die "pg_basebackup failed: $(printf '%s\n' "$out" | tail -1)"; }
  fi
  # A hot standby needs these at least as high as on the primary, which sets them on its command line; the
  # primary's values are read rather than repeated here. hot_standby_feedback and max_standby_streaming_delay:
  # docs/deploy.md explains the choice.
  local opts="-p $PORT -k $RSOCK -c listen_addresses=127.0.0.1 -c hot_standby=on -c hot_standby_feedback=on"
  opts+=" -c max_standby_streaming_delay=${PG_REPLICA_MAX_STANDBY_DELAY:-5s} -c shared_buffers=${PG_REPLICA_SHARED_BUFFERS:-1GB}"
  opts+=" -c jit=off -c max_parallel_workers_per_gather=1"
  local kv
  for kv in $settings; do
    case "$kv" in wal_level=*) ;; *) opts+=" -c $kv" ;; esac
  done
  local out
  out=$(as_postgres "$PGBIN/pg_ctl" -D "$RDATA" -l "$RLOG" -o "$opts" -w -t 120 start 2>&1) \
    || die "the replica did not start: $(grep -E -m1 'FATAL|ERROR' "$RLOG" 2>/dev/null || printf '%s\n' "$out" | tail -1) (full log: $RLOG)"
  say "streaming replica of 127.0.0.1:$PGPORT on 127.0.0.1:$PORT (data in $RDATA); give the API:"
  url_line
}

stop() {
  if running "$RDATA"; then
    as_postgres "$PGBIN/pg_ctl" -D "$RDATA" -m fast -w stop >/dev/null && say "replica on port $PORT stopped"
  fi
}

status() {
  if ! running "$RDATA"; then
    if [ -f "$RDATA/PG_VERSION" ]; then echo "replica on 127.0.0.1:$PORT: not running (data in $RDATA)"
    else echo "replica on 127.0.0.1:$PORT: not running"; fi
    return 0
  fi
  local primary_lsn state
  primary_lsn=$(primary_sql "SELECT pg_current_wal_lsn()" 2>/dev/null || echo "")
  state=$(replica_sql "SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn(), pg_is_wal_replay_paused(),
    CASE WHEN '$primary_lsn' = '' THEN NULL ELSE pg_wal_lsn_diff('${primary_lsn:-0/0}', pg_last_wal_replay_lsn()) END" 2>&1) \
    || { echo "replica on 127.0.0.1:$PORT: running, not answering ($state)"; return 0; }
  IFS='|' read -r recovery replayed paused behind <<<"$state"
  echo "replica on 127.0.0.1:$PORT: running, in recovery $recovery, replayed to $replayed${behind:+ ($behind bytes behind the primary)}$([ "$paused" = t ] && echo ', replay paused')"
}

clean() {
  stop
  rm -rf "$RDIR"
  drop_slot
  say "deleted $RDIR and the primary's slot $SLOT"
}

stop_all() {
  local dir
  for dir in "$CLUSTER"/replica-*/data; do
    [ -d "$dir" ] || continue
    if running "$dir"; then as_postgres "$PGBIN/pg_ctl" -D "$dir" -m fast -w stop >/dev/null && say "stopped the replica in $dir"; fi
  done
}

case "$command" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  clean) clean ;;
  stop-all) stop_all ;;
  *) die "usage: scripts/replica.sh start|stop|status|clean [--port N] | stop-all" ;;
esac
