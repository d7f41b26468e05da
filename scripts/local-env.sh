#!/usr/bin/env bash
# This clone's settings: .local/env, written by `scripts/services.sh start` (make run, make services, make test) with
# the ports, cluster folder and servers its services were started with. Sourced, it exports each of them that the
# environment does not set (a variable set in the environment wins, even empty). Run, it does that and then runs bash
# with its arguments: the Makefile's SHELL, so that every recipe talks to this clone's services.
LOCAL_ENV_FILE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)/.local/env"

load_local_env() {
  local line name
  [ -f "$LOCAL_ENV_FILE" ] || return 0
  while IFS= read -r line || [ -n "$line" ]; do
    [[ $line =~ ^([A-Z_][A-Z0-9_]*)= ]] || continue
    name=${BASH_REMATCH[1]}
    [ -n "${!name+set}" ] && continue
    eval "export $line"
  done <"$LOCAL_ENV_FILE"
}
load_local_env

if [ "${BASH_SOURCE[0]}" = "$0" ]; then exec /bin/bash "$@"; fi
