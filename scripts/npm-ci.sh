#!/usr/bin/env bash
# Runs `npm ci` only when node_modules is missing or older than package-lock.json or package.json (whose
# postinstall patches an installed package: scripts/patch-postgres.ts).
set -euo pipefail
cd "$(dirname "$0")/.."
stamp=node_modules/.package-lock.json
if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ] || [ package.json -nt "$stamp" ]; then
  command -v npm >/dev/null || { echo "npm-ci: Node.js 20 and npm are required (apt-get install nodejs npm)" >&2; exit 1; }
  echo "npm-ci: installing dependencies"
  npm ci --no-audit --no-fund --loglevel=error || { echo "npm-ci: npm ci failed (see above; is the npm registry reachable?)" >&2; exit 1; }
fi
