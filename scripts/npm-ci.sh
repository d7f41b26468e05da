#!/usr/bin/env bash
# Runs `npm ci` only when node_modules is missing or older than package-lock.json or package.json (whose
# postinstall patches an installed package: scripts/patch-postgres.ts). While it runs, a progress line counts the
# packages unpacked so far against those package-lock.json lists (rewritten in place on a terminal, every 15 s in a
# log), since npm itself says nothing for the minutes a fresh install takes.
set -euo pipefail
cd "$(dirname "$0")/.."
stamp=node_modules/.package-lock.json
if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ] || [ package.json -nt "$stamp" ]; then
  command -v npm >/dev/null || { echo "npm-ci: Node.js 20 and npm are required (apt-get install nodejs npm)" >&2; exit 1; }
  total=$(grep -cE '^    "node_modules/' package-lock.json || true)
  # a package is a folder with a package.json right under a node_modules folder (scoped or not, nested or not)
  unpacked() {
    find node_modules -maxdepth 7 -name package.json 2>/dev/null \
      | grep -cE '(^|/)node_modules/(@[^/]+/)?[^/@][^/]*/package\.json$' || true
  }
  echo "npm-ci: installing $total packages"
  npm ci --no-audit --no-fund --loglevel=error &
  npm_pid=$!
  trap 'kill "$npm_pid" 2>/dev/null || true' INT TERM
  started=$SECONDS
  last=$SECONDS
  while kill -0 "$npm_pid" 2>/dev/null; do
    sleep 1
    if [ -t 1 ]; then
      printf '\rnpm-ci: %d of %d packages unpacked, %d s' "$(unpacked)" "$total" $((SECONDS - started))
    elif [ $((SECONDS - last)) -ge 15 ]; then
      last=$SECONDS
      echo "npm-ci: $(unpacked) of $total packages unpacked, $((SECONDS - started)) s"
    fi
  done
  [ -t 1 ] && echo
  wait "$npm_pid" || { echo "npm-ci: npm ci failed (see above; is the npm registry reachable?)" >&2; exit 1; }
  echo "npm-ci: installed $total packages in $((SECONDS - started)) s"
fi
