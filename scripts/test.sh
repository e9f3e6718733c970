#!/usr/bin/env bash
# Install dependencies, build, and run every test (unit tests and comparisons against bcftools
# and the Python reference implementations). Tests that need ../shared/data or a GPU skip, and
# their reasons are listed at the end; under CI=true a missing reference tool fails its test.
#
#   scripts/test.sh [ctest args]              Release build in build/
#   scripts/test.sh --sanitize [ctest args]   ASan + UBSan build in build-sanitize/ (clang): the
#                                             unit tests, then one pass of every fuzz target over
#                                             its corpus (scripts/fuzz.sh replay)
#   scripts/test.sh --sanitize --quick        the same without the slow tests (CI: .ci/run), as
#                                             sanitize_slow below says
set -euo pipefail
cd "$(dirname "$0")/.."
sanitize=0
quick=0
args=()
for a in "$@"; do
  case "$a" in
    --sanitize) sanitize=1 ;;
    --quick) quick=1 ;;
    *) args+=("$a") ;;
  esac
done
# Left out by --quick: tests that compare whole CLI runs with the reference tools (bcftools,
# plink, vcftools, Python) or on the shared data sets, the CPU emulations of the GPU lanes and
# warps (ZstdDecodeHost.EmulatedWarps*: 6 min under ASan), and StatisticPartitions (every
# statistic merged over many partitions: 3 min). Under ASan each takes from ten seconds to
# minutes, and the code they run is reached by the unit, hostile-input, fuzz-replay and CLI error
# tests that stay; the plain run (scripts/test.sh) keeps them all.
sanitize_slow='^(Cuda|Mpi|SharedStores|ZarrSharedData|Convert\.|Recompress|CliPopgen|CliAfdist|CliSiteTables|CliInfo|CliMemory|CliSignals|CliSamples|LdReference|MatrixReference|HaploReference|RemoteCli|ZstdDecodeHost\.EmulatedWarps|StatisticPartitions)'
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
  # The Python reference tools do not run our code, and the documentation's tests (Docs.*) check
  # pages, not memory: they are left to the plain run.
  exclude="^(Python|Docs)"
  [ $quick -eq 1 ] && exclude="$exclude|$sanitize_slow"
  args=(-E "$exclude" "${args[@]}")
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
