#!/usr/bin/env bash
# Install dependencies, build, and run every test (unit tests and comparisons against bcftools
# and the Python reference implementations). Tests that need ../shared/data or a GPU skip, and
# their reasons are listed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
cd build
status=0
ctest --output-on-failure -j "$(nproc)" "$@" || status=$?
# ctest shows a skipped test only as "(Skipped)"; say why.
log=Testing/Temporary/LastTest.log
if [ -f "$log" ] && grep -q "skipped:" "$log"; then
  echo "Skipped tests, by reason:"
  grep -ho "skipped: .*" "$log" | sort | uniq -c
fi
exit $status
