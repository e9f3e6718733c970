#!/usr/bin/env bash
# Install dependencies, build, and run every test (unit tests and comparisons against bcftools
# and the Python reference implementations). Tests that need ../shared/data or a GPU skip, and
# their reasons are listed at the end; under CI=true a missing reference tool fails its test.
#
#   scripts/test.sh [ctest args]              Release build in build/
#   scripts/test.sh --sanitize [ctest args]   ASan + UBSan build in build-sanitize/ (clang): the
#                                             unit tests, then one pass of every fuzz target over
#                                             its corpus (scripts/fuzz.sh replay)
set -euo pipefail
cd "$(dirname "$0")/.."
sanitize=0
args=()
for a in "$@"; do
  if [ "$a" = "--sanitize" ]; then sanitize=1; else args+=("$a"); fi
done
bash scripts/setup.sh
if [ $sanitize -eq 1 ]; then
  bash scripts/build-sanitize.sh
  root=$PWD
  cd "${VCZSTATS_SANITIZE_BUILD:-build-sanitize}"
  # Every finding is fatal (the build also sets -fno-sanitize-recover); leaks are findings.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}
  # htslib's own leak on corrupt BGZF input (fuzz/lsan.supp says more).
  export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$root/fuzz/lsan.supp:print_suppressions=0}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  # The Python reference tools do not run our code: they are left to the plain run.
  args=(-E "^Python" "${args[@]}")
else
  bash scripts/build.sh
  cd build
fi
status=0
ctest --output-on-failure -j "$(nproc)" "${args[@]}" || status=$?
# ctest shows a skipped test only as "(Skipped)"; say why.
log=Testing/Temporary/LastTest.log
if [ -f "$log" ] && grep -q "skipped:" "$log"; then
  echo "Skipped tests, by reason:"
  grep -ho "skipped: .*" "$log" | sort | uniq -c
fi
if [ $sanitize -eq 1 ]; then
  cd - >/dev/null
  bash scripts/fuzz.sh replay || status=1
fi
exit $status
