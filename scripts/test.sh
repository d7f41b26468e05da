#!/usr/bin/env bash
# Runs the whole tap suite against the template database named by TEST_TEMPLATE_DB. The TAP output is kept in
# .local/test.tap. When a test fails, its "not ok" lines with their diagnostics, then a list of them, are printed
# again after the coverage table, so the last lines of a CI log name the failure.
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p .local
tap "$@" 2>&1 | tee .local/test.tap
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
  echo "# the failures (all of the output is in .local/test.tap):"
  awk '
    /^ *not ok / { print; shown = 1; next }
    shown && /^ *(ok |not ok |# Subtest|1\.\.)/ { shown = 0 }
    shown { print }
  ' .local/test.tap | head -n 150
  echo "# the failing tests, innermost first within each file:"
  grep -a -E '^ *not ok ' .local/test.tap | sed -E 's/^ +//' | head -n 40
fi
exit "$status"
